# SPDX-License-Identifier: GPL-2.0
# box.gp - response time per server, a box each (boxplot.png; cmd/plot.sh).
#
# Takes: out      the PNG to write
#        width    canvas width in pixels
#        title    the run, under the headline ("\n" between lines)
#        data     the directory of SERVER.dat (thread, response time in us)
#        servers  the servers, in plot order (space-separated)
#        colours  each server's colour, in the same order
#        labels   each server's tic label: its name and verdict (gp_list)
#        logy     1: a log response-time axis

load "common.gp"
n = words(servers)
set output out
set title "Response time per server\n".title
set ylabel 'response time (us)'
if (logy == 1) set logscale y
set style boxplot nooutliers
set style fill solid 0.5 border -1
set boxwidth 0.5
set key off
set xtics (item(labels, 1) 1)
do for [i = 2:n] { set xtics add (item(labels, i) i) }
set xrange [0.5:n + 0.5]
plot for [i = 1:n] data."/".word(servers, i).".dat" using (i):2 \
	with boxplot lc rgb word(colours, i)
