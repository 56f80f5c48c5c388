# SPDX-License-Identifier: GPL-2.0
# sweep-rps.gp - requests per second against the swept parameter of a
# --sweep, a line per server (sweep-rps.png; cmd/plot.sh).
#
# Takes: out      the PNG to write
#        width    canvas width in pixels
#        title    the run, under the headline ("\n" between lines)
#        swept    the swept parameter (threads, size, connections, rate)
#        data     the directory of SERVER.sweep (value, p50, p99, req/s)
#        servers  the servers, in plot order (space-separated)
#        colours  each server's colour, in the same order

load "common.gp"
set output out
set title "Requests per second against ".swept."\n".title
set xlabel swept
set ylabel 'requests/s'
set logscale x
set key top left
plot for [i = 1:words(servers)] data."/".word(servers, i).".sweep" \
	using 1:4 with linespoints lw 2 lc rgb word(colours, i) title word(servers, i)
