#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# findings.sh [--baseline LABEL | --every-baseline] [--figure F[,F...]]
#             DIR...
# Every ratio and verdict a kept comparison supports, one row each: what
# a figure quoted from DIR (results/DATE-PLACEMENT) must be.
#
# DIR's run files (raw files, gzipped or not, named SERVER[-SWEEP]-RUN.tsv
# as compare names them, with a '# label=' line: curve.tsv and other
# tables are not runs), its own and its subdirectories' (size-S/), are
# grouped by size and offered load, and analysis/judge --baseline LABEL
# judges each group. Out, as TSV after a header line, one row per group,
# server other than the baseline, and figure:
#
#   dir size offered label baseline figure n excluded disturbed ratio lo hi
#   coverage pairs verdict
#
# dir is DIR as given; size the runs' size= in bytes; offered their rate=
# where the runs were open-loop, else 'closed' (a sweep of another setting
# adds it: '30000,connections=100'); figure one of judge's, p50 p99 rps
# machine cpu; n, excluded, disturbed and pairs judge's counts for the
# server's runs; ratio, lo, hi and coverage judge's ratio_, ratio_lo,
# ratio_hi and ratio_coverage as it prints them (3 decimals, '-' where it
# has none); verdict judge's words exactly ('too few runs', 'not judged
# (rates differ: A against B req/s)', ...). Groups in order of their
# subdirectory, then of their offered load; rows in judge's order.
#
#   --baseline LABEL   the server the others are judged against (default
#                      user); a group without it is skipped, said on stderr
#   --every-baseline   each server of a group in turn as the baseline, by
#                      label (what check-findings.sh reads: a page may
#                      quote uring-minwait against uring)
#   --figure F[,F...]  only these figures (default all five)
#   -h, --help         this text
#
# Nothing is run; only the raw files are read. Exit status: 0; 1 when a
# DIR or a run file cannot be read or judge could not judge a group (the
# other DIRs' and groups' rows are printed); 2 for bad usage.
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
prog_name findings.sh
JUDGE=$ECHOLAB_ROOT/analysis/judge
FIGURES="p50 p99 rps machine cpu"

usage() { sed -n '/^# findings.sh/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

# bad_usage MESSAGE: what is wrong, then the usage; exit status 2.
bad_usage() {
	warn "$*"
	usage >&2
	exit 2
}

# run_heads DIR: a line per run file of DIR and its subdirectories:
# SUBDIR<TAB>SIZE<TAB>OFFERED<TAB>LABEL<TAB>FILE ('.' for DIR's own). A
# run file is named SERVER[-SWEEP]-RUN.tsv[.gz] (thin.sh's rule) and has a
# '# label=' line; the repetitions of one name share their metadata, so
# only the first one's is read, and only above its rows.
run_heads() {
	local dir=$1 f sub stem
	local -A head=()
	for f in "$dir"/*.tsv "$dir"/*.tsv.gz "$dir"/*/*.tsv "$dir"/*/*.tsv.gz; do
		[[ -f $f && ${f##*/} =~ -[0-9]+\.tsv(\.gz)?$ ]] || continue
		[[ -r $f ]] || die "cannot read '$f': check its permissions"
		stem=${f%-*}
		if [[ -z ${head[$stem]+set} ]]; then
			sub=${f#"$dir"/}
			[[ $sub == */* ]] && sub=${sub%/*} || sub=.
			head[$stem]=$(run_head "$f" "$sub")
		fi
		[[ -z ${head[$stem]} ]] || printf '%s\t%s\n' "${head[$stem]}" "$f"
	done
}

# run_head FILE SUBDIR: SUBDIR<TAB>SIZE<TAB>OFFERED<TAB>LABEL of a run
# file, from the metadata above its rows; nothing for a file with no label.
run_head() {
	{ gzip -dcf -- "$1" 2>/dev/null || true; } | awk -v subdir="$2" '
		!/^# / || /^# columns=/ { exit }
		{
			eq = index($0, "=")
			if (eq) m[substr($0, 3, eq - 3)] = substr($0, eq + 1)
		}
		END {
			if (m["label"] == "")
				exit
			open = m["loop"] == "open" || (m["loop"] == "" && m["rate"] + 0 > 0)
			offered = open ? m["rate"] : "closed"
			if (m["sweep"] != "" && m["sweep"] != "rate")
				offered = offered "," m["sweep"] "=" m["sweep_value"]
			printf "%s\t%s\t%s\t%s\n", subdir, m["size"] == "" ? "-" : m["size"],
				offered, m["label"]
		}'
}

# judge_group BASELINE DIR SIZE OFFERED FILE...: the group's rows; 1 when
# judge could not judge it.
judge_group() {
	local base=$1 dir=$2 size=$3 offered=$4 out
	shift 4
	out=$("$JUDGE" --baseline "$base" "$@") || {
		warn "$dir, size $size, offered $offered: analysis/judge could not judge its runs (above)"
		return 1
	}
	awk -v dir="$dir" -v size="$size" -v offered="$offered" -v base="$base" \
		-v figures=" $WANT " '
		$1 != "judge" { next }
		{
			for (i = 2; i <= NF; i++) {
				eq = index($i, "=")
				m[substr($i, 1, eq - 1)] = substr($i, eq + 1)
			}
			verdict = $0
			sub(/.* verdict=/, "", verdict)
			if (m["label"] == base || index(figures, " " m["figure"] " ") == 0)
				next
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				dir, size, offered, m["label"], base, m["figure"], m["n"],
				m["excluded"], m["disturbed"], m["ratio"], m["ratio_lo"],
				m["ratio_hi"], m["ratio_coverage"], m["pairs"], verdict
		}' <<<"$out"
}

# findings_dir DIR: its groups' rows, in order; 1 when a run file could
# not be read or a group could not be judged.
findings_dir() {
	local dir=$1 sub size offered label f key prev='' labels='' rc=0 files=() heads
	heads=$(run_heads "$dir") || return 1
	[[ -n $heads ]] || { warn "$dir: no run files (raw files with a '# label=' line)"; return 0; }
	while IFS=$'\t' read -r sub size offered label f; do
		key=$sub$'\t'$size$'\t'$offered
		if [[ -n $prev && $key != "$prev" ]]; then
			group_or_skip "$dir" "$prev" "$labels" "${files[@]}" || rc=1
			files=() labels=''
		fi
		prev=$key
		files+=("$f")
		[[ " $labels " == *" $label "* ]] || labels+=${labels:+ }$label
	done < <(sort -t$'\t' -k1,1V -k2,2n -k3,3n -k3,3V <<<"$heads")
	group_or_skip "$dir" "$prev" "$labels" "${files[@]}" || rc=1
	return "$rc"
}

# group_or_skip DIR KEY LABELS FILE...: the group judged, or skipped when
# the baseline did not run in it; with --every-baseline, judged against
# each of its servers in turn.
group_or_skip() {
	local dir=$1 where=$1 sub size offered labels=$3 base rc=0
	IFS=$'\t' read -r sub size offered <<<"$2"
	shift 3
	[[ $sub == . ]] || where=$dir/$sub
	if ((EVERY)); then
		for base in $labels; do
			judge_group "$base" "$dir" "$size" "$offered" "$@" || rc=1
		done
		return "$rc"
	fi
	if [[ " $labels " != *" $BASELINE "* ]]; then
		warn "$where, size $size, offered $offered: no runs of the baseline '$BASELINE' (only ${labels// /, }): skipped"
		return 0
	fi
	judge_group "$BASELINE" "$dir" "$size" "$offered" "$@"
}

main() {
	local d rc=0 f dirs=()
	BASELINE=user WANT=$FIGURES EVERY=0
	while (($#)); do
		case $1 in
		-h | --help) usage; exit 0 ;;
		--baseline)
			[[ -n ${2:-} ]] || bad_usage "--baseline takes a server's label"
			BASELINE=$2
			shift 2
			;;
		--every-baseline) EVERY=1; shift ;;
		--figure)
			[[ -n ${2:-} ]] || bad_usage "--figure takes figures: ${FIGURES// /, }"
			for f in ${2//,/ }; do
				[[ " $FIGURES " == *" $f "* ]] || bad_usage "--figure: no figure '$f' (${FIGURES// /, })"
			done
			WANT=${2//,/ }
			shift 2
			;;
		-*) bad_usage "unknown option '$1'" ;;
		*) dirs+=("${1%/}"); shift ;;
		esac
	done
	((${#dirs[@]})) || bad_usage "give the comparison directories (results/DATE-PLACEMENT)"
	for d in "${dirs[@]}"; do
		[[ -d $d ]] || die "'$d' is no directory: give a comparison's, results/DATE-PLACEMENT"
		[[ -r $d && -x $d ]] || die "cannot read '$d': check its permissions"
	done
	[[ -x $JUDGE ]] || make -C "$ECHOLAB_ROOT" --no-print-directory analysis >/dev/null
	printf 'dir\tsize\toffered\tlabel\tbaseline\tfigure\tn\texcluded\tdisturbed\tratio\tlo\thi\tcoverage\tpairs\tverdict\n'
	for d in "${dirs[@]}"; do
		findings_dir "$d" || rc=1
	done
	return "$rc"
}

main "$@"
