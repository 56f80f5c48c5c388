# SPDX-License-Identifier: GPL-2.0
# cpu.gp - CPU per echo: the server's CPUs stacked by kind, the client's
# beside them (cpu.png; cmd/plot.sh).
#
# Takes: out     the PNG to write
#        width   canvas width in pixels
#        title   the run, under the headline ("\n" between lines)
#        data    a row per server: its place (1, 2, ...), then us per echo
#                of usr, sys, softirq, irq, the client's CPU, the CPUs
#        labels  each server's tic label: its name and verdict (gp_list)
#        n       how many servers

load "common.gp"
set output out
set title "CPU per echo: the server's CPUs by kind (stacked), the client's (grey)\n".title
set ylabel 'CPU time per echoed message (us)'
set style fill solid 0.7 border -1
set boxwidth 0.35
set key top left
set yrange [0:*]
set xtics (item(labels, 1) 1)
do for [i = 2:n] { set xtics add (item(labels, i) i) }
set xrange [0.5:n + 0.5]
# Stacked by hand: each kind's box is drawn from 0 to the sum so far, the
# largest first.
plot data using ($1-0.18):($2+$3+$4+$5) with boxes lc rgb '#9467bd' title 'irq', \
	'' using ($1-0.18):($2+$3+$4) with boxes lc rgb '#2ca02c' title 'softirq', \
	'' using ($1-0.18):($2+$3) with boxes lc rgb '#ff7f0e' title 'sys (kworkers too)', \
	'' using ($1-0.18):2 with boxes lc rgb '#1f77b4' title 'usr', \
	'' using ($1+0.18):6 with boxes lc rgb '#bbbbbb' title 'client (its CPUs)'
