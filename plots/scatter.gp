# SPDX-License-Identifier: GPL-2.0
# scatter.gp - one server's response time per thread (scatter-SERVER.png;
# cmd/plot.sh).
#
# Takes: out     the PNG to write
#        width   canvas width in pixels
#        title   the run, under the headline ("\n" between lines)
#        server  the server's name
#        data    its samples (thread, response time in us)
#        colour  its colour
#        logy    1: a log response-time axis

load "common.gp"
set output out
set title server.": response time per thread\n".title
set xlabel 'thread'
set ylabel 'response time (us)'
if (logy == 1) set logscale y
set key off
plot data using 1:2 with points pt 7 ps 0.3 lc rgb colour
