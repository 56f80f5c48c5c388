# SPDX-License-Identifier: GPL-2.0
# demand.gp - the service-demand curve: each server's CPU per echo
# against the offered load, the median of each point's repetitions with
# their range (demand.png; cmd/curve.sh).
#
# Takes: out      the PNG to write
#        data     the directory of .demand-SERVER.tsv (offered, median,
#                 min, max of CPU per echo, us)
#        servers  the servers, in plot order (space-separated)
#        colours  each server's colour, in the same order

set terminal pngcairo size 1100,650 font ',10'
set output out
set title "CPU per echo against offered load (the server's CPUs; open loop, Poisson arrivals)\n".\
	"points: the median of the repetitions; bars: their range. Compare servers at one load, never across loads"
set xlabel 'offered load, messages/s'
set ylabel 'server CPU per echo, us'
set yrange [0:*]
set offsets graph 0.05, graph 0.05, 0, 0
set grid
set key top right
set datafile separator '\t'
do for [i = 1:words(servers)] {
	f = sprintf("'%s/.demand-%s.tsv'", data, word(servers, i))
	c = sprintf("lc rgb '%s'", word(colours, i))
	series = (i > 1 ? series.", " : "") \
		.f." using 1:2:3:4 with yerrorlines pt 7 ".c." title '".word(servers, i)."'"
}
eval "plot ".series
