# SPDX-License-Identifier: GPL-2.0
# sweep-latency.gp - p50 and p99 against the swept parameter of a --sweep,
# a pair of lines per server (sweep-latency.png; cmd/plot.sh).
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
set title "p50 (solid) and p99 (dashed) against ".swept."\n".title
set xlabel swept
set ylabel 'response time (us)'
set logscale xy
set key top left
# Odd k: a server's p50 (width 2, solid), even k: its p99 (width 1,
# dashed). dt takes an integer expression, not a parenthesised one (that
# would be a dash pattern): 2 - k % 2.
plot for [k = 1:2 * words(servers)] data."/".word(servers, (k + 1) / 2).".sweep" \
	using 1:(k % 2 ? $2 : $3) with linespoints lw 1 + k % 2 dt 2 - k % 2 \
	lc rgb word(colours, (k + 1) / 2) title word(servers, (k + 1) / 2).(k % 2 ? " p50" : " p99")
