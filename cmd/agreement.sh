#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# agreement.sh [--figure cpu|p50|p99|rps] [--point N] DIR... - do repeated comparisons
# agree? The method's own check: the same compare run back to back (DIR...,
# e.g. results/20261124-busy-1 -2 -3) should give each server the same
# figure and the same verdicts.
#
# For each server: its median in each DIR (analysis/judge over DIR's raw
# files, against user, or the first server when user was not measured),
# the spread (max / min - 1 across the DIRs), and its verdict against
# the baseline in each DIR, whether those verdicts are identical in every
# DIR, and the verdict of every DIR's runs judged together (each run paired
# with the baseline's of its own compare and repetition: analysis/judge).
# Of a sweep (compare's equal load: rate=), --point N takes the Nth value
# of each DIR's sweep (meta.txt's sweep=): the same share of the capacity
# each compare probed, so the rates may differ a little between DIRs.
# Nothing is run; only the raw files are read.
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
prog_name agreement.sh
JUDGE=$ECHOLAB_ROOT/analysis/judge

usage() { sed -n '/^# agreement.sh/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

FIGURE=cpu
POINT=
DIRS=()
while (($#)); do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--figure)
		[[ ${2:-} =~ ^(cpu|p50|p99|rps)$ ]] || usage_error "--figure takes cpu, p50, p99 or rps"
		FIGURE=$2
		shift 2
		;;
	--point)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--point takes the sweep value's position, 1 for the first"
		POINT=$2
		shift 2
		;;
	-*) usage_error "unknown option '$1' (see --help)" ;;
	*)
		[[ -d $1 ]] || usage_error "$1: not a directory"
		DIRS+=("${1%/}")
		shift
		;;
	esac
done
((${#DIRS[@]} >= 2)) || usage_error "give two or more comparison directories (see --help)"
[[ -x $JUDGE ]] || make -C "$ECHOLAB_ROOT" --no-print-directory analysis >/dev/null

# judge_dirs DIR...: judge's lines for the DIRs' runs together, user the
# baseline when it is there.
judge_dirs() {
	local files=() base=user d tag
	for d in "$@"; do
		tag=
		if [[ -n $POINT ]]; then
			tag=$(sed -n 's/^sweep=//p' "$d/meta.txt" 2>/dev/null | head -n1 |
				awk -F'[=,]' -v n="$POINT" 'NF > n { print "-" $1 $(n + 1) }')
			[[ -n $tag ]] || usage_error "$d: no sweep value $POINT in its meta.txt"
		fi
		mapfile -t -O "${#files[@]}" files < <(compgen -G "$d/*$tag-[0-9]*.tsv.gz" || true
			compgen -G "$d/*$tag-[0-9]*.tsv" || true)
	done
	((${#files[@]})) || usage_error "$*: no raw files"
	if ! grep -q '^# label=user$' < <(zcat -f "${files[@]}"); then
		base=$(zcat -f "${files[0]}" | sed -n 's/^# label=//p' | head -n1)
	fi
	"$JUDGE" --baseline "$base" "${files[@]}" || usage_error "$*: analysis/judge could not judge it"
}

{
	for d in "${DIRS[@]}"; do
		judge_dirs "$d" | sed "s|^|$d |"
	done
	# '*': all of them; at a --point, only where every DIR has the same
	# rate (judge judges one sweep value at a time).
	if [[ -z $POINT ]] || (($(for d in "${DIRS[@]}"; do sed -n 's/^sweep=//p' "$d/meta.txt" | head -n1 |
		awk -F'[=,]' -v n="$POINT" '{ print $(n + 1) }'; done | sort -u | wc -l) == 1)); then
		judge_dirs "${DIRS[@]}" | sed 's|^|* |'
	fi
} | awk -v fig="$FIGURE" -v ndirs="${#DIRS[@]}" '
	$4 != "figure=" fig { next }
	{
		dir = $1
		for (i = 3; i <= NF; i++) {
			k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v)
			if (k == "verdict") { v = $i; sub(/^verdict=/, "", v); for (j = i + 1; j <= NF; j++) v = v " " $j; m[k] = v; break }
			m[k] = v
		}
		s = m["label"]
		if (dir == "*") {
			pooled[s] = m["verdict"] == "-" ? "baseline" : \
				m["verdict"] " (" m["ratio"] (m["ratio_lo"] == "-" ? "" : " [" m["ratio_lo"] ", " m["ratio_hi"] "]") ")"
			next
		}
		if (!(s in seen)) { seen[s] = 1; order[++ns] = s }
		if (!(dir in dseen)) { dseen[dir] = 1; dorder[++nd] = dir }
		med[s, dir] = m["median"]
		word = m["verdict"]
		if (m["ratio"] != "-" && word != "-") word = word " (" m["ratio"] ")"
		if (m["verdict"] == "-") word = "baseline"
		verdict[s, dir] = word
		bare[s, dir] = m["verdict"]
	}
	END {
		printf "| server | %s per run set", fig
		for (d = 1; d <= nd; d++) { n = split(dorder[d], part, "/"); printf "%s %s", (d > 1 ? " /" : ","), part[n] }
		printf " | spread | verdicts | identical | all together |\n|---|---|---|---|---|---|\n"
		for (i = 1; i <= ns; i++) {
			s = order[i]; lo = ""; hi = ""; line = ""; vl = ""; same = 1
			for (d = 1; d <= nd; d++) {
				v = med[s, dorder[d]]
				line = line (d > 1 ? " / " : "") (v == "" ? "-" : v)
				if (v != "" && v != "nan" && v != "-") {
					if (lo == "" || v + 0 < lo) lo = v + 0
					if (hi == "" || v + 0 > hi) hi = v + 0
				}
				vl = vl (d > 1 ? " / " : "") (verdict[s, dorder[d]] == "" ? "-" : verdict[s, dorder[d]])
				if (bare[s, dorder[d]] != bare[s, dorder[1]]) same = 0
			}
			spread = (lo > 0) ? sprintf("%.1f%%", 100 * (hi / lo - 1)) : "-"
			printf "| %s | %s | %s | %s | %s | %s |\n", s, line, spread, vl, same ? "yes" : "no", \
				(s in pooled) ? pooled[s] : "-"
		}
	}'
