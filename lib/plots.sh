# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# lib/plots.sh - run the gnuplot programs of plots/: the shell computes the
# data and the paths, the .gp file holds all the drawing.

# gp_plot PROGRAM NAME=VALUE...: draw with plots/PROGRAM.gp, each NAME set
# to VALUE as a gnuplot string ("\n" in VALUE is a line break; gnuplot
# reads a string that holds a number as the number). plots/ is on
# gnuplot's loadpath, for what programs share (common.gp).
gp_plot() {
	local gp=$ECHOLAB_ROOT/plots/$1.gp kv v defs=
	shift
	for kv in "$@"; do
		v=${kv#*=}
		defs+="${kv%%=*} = \"${v//\"/\\\"}\"; "
	done
	gnuplot -e "set loadpath '$ECHOLAB_ROOT/plots'; $defs" "$gp"
}

# gp_list WORD...: WORDs as one gnuplot list, tab-separated (a word may
# hold spaces and "\n"): plots/common.gp's item() reads it.
gp_list() { (IFS=$'\t'; echo "$*"); }
