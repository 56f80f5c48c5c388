#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# plot.sh [RAW.tsv...] - draw bench raw files; never runs anything.
#
# Default input: the newest run of each server in results/runs. Writes, next
# to the first input: boxplot.png (response time per server), cdf.png, and
# scatter-LABEL.png (thread id against response time, like kecho's study).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
	echo "plot.sh: $*" >&2
	exit 1
}

meta() { sed -n "s/^# $2=//p" "$1" | head -n1; }

# The newest raw file of each label in results/runs.
newest_runs() {
	local f label
	declare -A seen=()
	while IFS= read -r f; do
		label=$(meta "$f" label)
		[[ -n ${seen[$label]:-} ]] && continue
		seen[$label]=1
		echo "$f"
	done < <(ls -1t "$ROOT"/results/runs/*.tsv 2>/dev/null)
}

main() {
	local files=("$@") out first title labels=() i plot=""
	command -v gnuplot >/dev/null ||
		die "gnuplot not found: install gnuplot-nox (sudo make deps)"
	if ((${#files[@]} == 0)); then
		mapfile -t files < <(newest_runs)
		((${#files[@]})) ||
			die "no raw files in results/runs: run 'sudo ./run.sh bench user' first"
	fi
	for i in "${!files[@]}"; do
		[[ -r ${files[i]} ]] || die "cannot read '${files[i]}'"
		labels+=("$(meta "${files[i]}" label)")
	done
	first=${files[0]}
	out=$(dirname "$first")
	title="$(meta "$first" where) $(meta "$first" kernel), $(meta "$first" threads) threads x $(meta "$first" rounds) rounds x $(meta "$first" messages) msgs of $(meta "$first" size) B, closed-loop client"

	for i in "${!files[@]}"; do
		plot+="'${files[i]}' using ($((i + 1))):(strcol(5) eq 'ok' ? \$4 : 1/0) with boxplot lc $((i + 1)) title '${labels[i]}', "
	done
	gnuplot <<-GP
		set terminal pngcairo size 900,600 noenhanced
		set datafile separator "\t"
		set datafile commentschars "#"
		set output "$out/boxplot.png"
		set title "Response time per server\n$title"
		set ylabel "response time (us)"
		set logscale y
		set style boxplot nooutliers
		set style fill solid 0.4
		set xtics ($(for i in "${!labels[@]}"; do printf "'%s' %d, " "${labels[i]}" $((i + 1)); done | sed 's/, $//'))
		set key off
		plot ${plot%, }
	GP

	plot=""
	for i in "${!files[@]}"; do
		plot+="'${files[i]}' using (strcol(5) eq 'ok' ? \$4 : 1/0):(1.0) smooth cnormal lw 2 lc $((i + 1)) title '${labels[i]}', "
	done
	gnuplot <<-GP
		set terminal pngcairo size 900,600 noenhanced
		set datafile separator "\t"
		set output "$out/cdf.png"
		set title "Response time CDF\n$title"
		set xlabel "response time (us)"
		set ylabel "fraction of samples"
		set logscale x
		set key bottom right
		set grid
		plot ${plot%, }
	GP

	for i in "${!files[@]}"; do
		gnuplot <<-GP
			set terminal pngcairo size 900,600 noenhanced
			set datafile separator "\t"
			set output "$out/scatter-${labels[i]}.png"
			set title "${labels[i]}: response time per thread\n$title"
			set xlabel "thread"
			set ylabel "response time (us)"
			set logscale y
			set key off
			plot '${files[i]}' using 1:(strcol(5) eq 'ok' ? \$4 : 1/0) with points pt 7 ps 0.3 lc $((i + 1))
		GP
	done
	echo "plots: $out/boxplot.png $out/cdf.png $(printf "$out/scatter-%s.png " "${labels[@]}")"
}

main "$@"
