# SPDX-License-Identifier: GPL-2.0
# cdf.gp - the response-time CDF of every server, log axis (cdf.png;
# cmd/plot.sh).
#
# Takes: out      the PNG to write
#        width    canvas width in pixels
#        title    the run, under the headline ("\n" between lines)
#        data     the directory of SERVER.dat (thread, response time in us)
#        servers  the servers, in plot order (space-separated)
#        colours  each server's colour, in the same order

load "common.gp"
set output out
set title "Response-time CDF\n".title
set xlabel 'response time (us)'
set ylabel 'fraction of samples'
set logscale x
set key bottom right
set yrange [0:1]
plot for [i = 1:words(servers)] data."/".word(servers, i).".dat" \
	using 2:(1.0) smooth cnormal lw 2 lc rgb word(colours, i) title word(servers, i)
