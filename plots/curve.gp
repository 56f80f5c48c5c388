# SPDX-License-Identifier: GPL-2.0
# curve.gp - latency against load: each server's p99 and p50 against its
# achieved rate, client-limited points apart (curve.png; cmd/curve.sh).
#
# Takes: out      the PNG to write
#        metric   arrival or rtt: the latency drawn
#        bound    the p99 bound (us), a dotted line
#        data     the directory of .curve-SERVER.tsv (offered, achieved,
#                 p50, p99 medians; 1 when client-limited)
#        servers  the servers, in plot order (space-separated)
#        colours  each server's colour, in the same order

set terminal pngcairo size 1100,650 font ',10'
set output out
set title "Latency against load (open loop, Poisson arrivals; ".metric. \
	" from each message's due time; medians of the repetitions)\n".\
	"solid: p99, dashed: p50; open circles: client-limited points; dotted line: the p99 bound, ".bound." us"
set xlabel 'achieved load, messages/s'
set ylabel 'latency, us (log)'
set logscale y
set grid
set key top left
set datafile separator '\t'
set arrow from graph 0, first bound to graph 1, first bound nohead dt 3 lc rgb '#888888'
# Per server, in this order: p99 and p50 lines through the points the
# server reached, open circles where the client limited them.
do for [i = 1:words(servers)] {
	f = sprintf("'%s/.curve-%s.tsv'", data, word(servers, i))
	c = sprintf("lc rgb '%s'", word(colours, i))
	series = (i > 1 ? series.", " : "") \
		.f." using 2:($5 > 0 ? 1/0 : $4) with linespoints pt 7 ".c." title '".word(servers, i)." p99'" \
		.", '' using 2:($5 > 0 ? 1/0 : $3) with linespoints pt 7 dt 2 ".c." notitle" \
		.", '' using 2:($5 > 0 ? $4 : 1/0) with points pt 6 ps 1.5 ".c." notitle" \
		.", '' using 2:($5 > 0 ? $3 : 1/0) with points pt 6 ps 1.5 ".c." notitle"
}
eval "plot ".series
