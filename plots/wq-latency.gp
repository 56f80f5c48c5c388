# SPDX-License-Identifier: GPL-2.0
# wq-latency.gp - CDFs of a server's work-item and kthread intervals, a
# panel per interval set, a line per mode (wq-SERVER-cdf.png;
# ftrace/wq-latency.sh).
#
# Takes: out      the PNG to write
#        server   the server measured
#        run      where it ran (the summary's where=)
#        kernel   the kernel it ran on
#        data     the directory of MODE-SET.cdf (us, fraction at or below)
#        queue    the modes with queued -> started intervals (space-separated)
#        exec     the modes with work-function run times
#        kthread  the modes with kthread created -> first run intervals

modes(s) = s eq "queue" ? queue : s eq "exec" ? exec : kthread
what(s) = s eq "queue" ? "queued -> started (us)" : \
	s eq "exec" ? "work function run time (us)" : "kthread created -> first run (us)"
panels = (words(queue) > 0) + (words(exec) > 0) + (words(kthread) > 0)

set terminal pngcairo size 1400,450 noenhanced font ",10"
set output out
set logscale x; set ylabel 'fraction'; set yrange [0:1]; set key bottom right; set grid
set multiplot layout 1,panels title server." work items and kthreads (".run."; closed-loop bench; kernel ".kernel.")"
do for [s in "queue exec kthread"] {
	if (words(modes(s)) > 0) {
		set title server.": ".what(s)
		set xlabel 'us (log)'
		plot for [m in modes(s)] data."/".m."-".s.".cdf" using 1:2 with steps title m
	}
}
unset multiplot
