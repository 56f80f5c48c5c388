# SPDX-License-Identifier: GPL-2.0
# verdict-map.gp - the verdict map: per server against the baseline, its
# CPU per echo ratio as colour and judge's verdict as a mark, message size
# by offered load (results/verdict-map*.png; cmd/verdict-map.sh).
#
# Takes: out       the PNG to write
#        width     canvas width in pixels
#        height    canvas height in pixels
#        data      the directory of panel-N.dat: per cell x (the size's
#                  place), y (the load's level), ratio ("-": none), grey
#                  (1: no ratio judged), framed (1: a difference declared),
#                  the mark and ratio, the verdict, the offered load, the
#                  x and y tic labels, the text colour
#        n         how many panels
#        baseline  what the servers are judged against
#        pl, pr    each panel's plot area, left and right: pixels from
#                  the left (gp_list)
#        pt, pb    its top and bottom: pixels from the top (gp_list)
#        ptitle    each panel's title (gp_list)
#        rtitle    each row's title: machine, kernel, date (gp_list)
#        rnote     each row's note, a line under its title, maybe empty
#        ry        where each row's title goes: pixels from the top

load "common.gp"
set terminal pngcairo size width,height noenhanced font ",10"
set encoding utf8
set output out
unset grid

foot = 150.0 / height	# the colour box and the marks' legend
sx(px) = (px + 0.0) / width
sy(px) = 1 - (px + 0.0) / height

# The colour: the ratio on a log axis centred on 1 (white), blue below
# (cheaper), red above (costlier); beyond 0.7 or 1/0.7 the ends' colours.
set logscale cb
set cbrange [0.7:1/0.7]
set palette defined (0 '#053061', 0.2 '#2166ac', 0.4 '#92c5de', 0.5 '#f7f7f7', \
	0.6 '#f4a582', 0.8 '#b2182b', 1 '#67001f')
set cbtics ('0.7' 0.7, '0.8' 0.8, '0.9' 0.9, '' 0.97, '1' 1, '' 1.03, \
	'1.1' 1.1, '1.25' 1.25, '1.43' 1/0.7) font ",9"
set cblabel sprintf("server CPU per echo / %s's (log scale)", baseline)

set multiplot title sprintf("Verdict map: CPU per echo against %s's, at equal offered load\n", baseline).\
	"colour: analysis/judge's ratio of CPU per echo; mark: its verdict" font ",13"

do for [r = 1:words(ry)] {
	set label 100 + r item(rtitle, r) at screen sx(10), screen sy(item(ry, r) + 14) left font "Sans:Bold,11" front
	set label 200 + r item(rnote, r) at screen sx(10), screen sy(item(ry, r) + 31) left font ",10" front
}
# The legend of the marks, beside the colour box.
set label 1 "\342\226\274 cheaper: the whole interval below 0.97 (framed)" at screen 0.52, screen foot - 0.035 font ",10"
set label 2 "\342\226\262 costlier: the whole interval above 1.03 (framed)" at screen 0.52, screen foot - 0.035 - 22.0 / height font ",10"
set label 3 "\342\211\210 equivalent: the interval within 0.97-1.03" at screen 0.52, screen foot - 0.035 - 44.0 / height font ",10"
set label 4 "? inconclusive: the interval crosses 0.97 or 1.03" at screen 0.52, screen foot - 0.035 - 66.0 / height font ",10"
set label 5 "grey \303\227: no ratio judged (other CPUs counted; rates differ); \342\200\223 too few runs" \
	at screen 0.52, screen foot - 0.035 - 88.0 / height font ",10"
set colorbox horizontal user origin screen 0.05, screen foot - 0.07 size screen 0.4, screen 22.0 / height

set xtics scale 0 font ",10"
set ytics scale 0 font ",10"
set style fill solid 1.0 border rgb '#ffffff'
do for [i = 1:n] {
	f = sprintf("%s/panel-%d.dat", data, i)
	set lmargin at screen sx(item(pl, i))
	set rmargin at screen sx(item(pr, i))
	set tmargin at screen sy(item(pt, i))
	set bmargin at screen sy(item(pb, i))
	set title item(ptitle, i) font ",12" offset 0, -0.3
	set autoscale xy
	stats f using 4:5 nooutput	# how many grey cells, how many framed
	grey = STATS_sum_x
	framed = STATS_sum_y
	all = STATS_records
	stats f using 1:2 nooutput
	set xrange [0.5:STATS_max_x + 0.5]
	set yrange [0.5:STATS_max_y + 0.5]
	# Only the layers a panel has: gnuplot warns of one with no point.
	src = sprintf("'%s'", f)
	layers = (grey > 0 ? src." using 1:($4 > 0 ? $2 : NaN):(0.5):(0.5) with boxxyerror fc rgb '#cccccc' notitle, " : "").\
		(grey < all ? src." using 1:($4 > 0 ? NaN : $2):(0.5):(0.5):3 with boxxyerror fc palette notitle, " : "").\
		(framed > 0 ? src." using 1:($5 > 0 ? $2 : NaN):(0.47):(0.47) with boxxyerror fs empty border lc rgb 'black' lw 3 lc rgb 'black' notitle, " : "")
	eval "plot ".layers.\
		src." using 1:($2 + 0.17):6:11 with labels tc rgb variable font ',13' notitle, ".\
		src." using 1:($2 - 0.07):7:11 with labels tc rgb variable font ',9' notitle, ".\
		src." using 1:($2 - 0.27):8:11:xtic(9):ytic(10) with labels tc rgb variable font ',8' notitle"
	if (i == 1) { unset colorbox; unset label }
}
unset multiplot
