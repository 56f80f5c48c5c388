# SPDX-License-Identifier: GPL-2.0
# common.gp - what the plots of a results directory share (cmd/plot.sh):
# the canvas, the tab-separated samples, a list of labels.
#
# Takes: width  canvas width in pixels (wider with more servers)

set terminal pngcairo size width,600 noenhanced font ",10"
set bmargin 5
set datafile separator "\t"
set grid ytics

# item(list, i): the i-th of a tab-separated list (lib/plots.sh gp_list).
item(list, i) = i <= 1 ? \
	(strstrt(list, "\t") ? list[1:strstrt(list, "\t") - 1] : list) : \
	item(list[strstrt(list, "\t") + 1:], i - 1)
