#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# measure-all.sh [--into DIR] [--date YYYYMMDD] [--repeat N|MIN-MAX] [STEP...] - re-measure the
# comparisons results/ commits, the way they were measured, and make each
# small enough to commit: thin.sh, the summary rewritten from the thinned
# files (compare --summarize), the plots redrawn.
#
# STEPs (default: all of them, in this order; about two hours on 2 cores,
# most of it the nine compares of up to 15 runs per server):
#   busy-1 busy-2 busy-3            compare --workload busy, three times back
#                                   to back (the agreement between them is
#                                   the method's own check)
#   pingpong-1 pingpong-2 pingpong-3, connect-1 connect-2 connect-3  the same
#   busy-loopback                   compare --loopback --workload busy
#   ebpf-flow-busy ebpf-flow-pingpong  compare --servers ebpf,ebpf-noflow:
#                                   what ebpf's flow control costs per echo
#   vm-busy                         compare --vm --workload busy (kecho too)
#   percall                         ftrace/percall.sh -- -t 50 -d 5
#
# Each goes to DIR/DATE-STEP (default DIR: results/, DATE: today); a step
# whose directory exists is refused. --repeat: runs per server in every
# compare (compare's default otherwise: 5, then more until CPU per echo is
# within +-2.5%, at most 15; vm-busy: 5, as TCG runs are slow). Each raw file
# keeps 1 in K of its rows, K larger in proportion when a compare ran more
# than 5 runs per server, so that a step stays near its size at 5. At the
# end, cmd/agreement.sh compares each workload's back-to-back compares.
# Run it on an idle machine: every
# process besides the suite's takes CPU time the comparison counts as the
# servers'. Needs root, as compare does.
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
prog_name measure-all.sh

usage() { sed -n '/^# measure-all.sh/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

ALL_STEPS="busy-1 busy-2 busy-3 pingpong-1 pingpong-2 pingpong-3 connect-1
connect-2 connect-3 busy-loopback ebpf-flow-busy ebpf-flow-pingpong vm-busy percall"
INTO=$ECHOLAB_ROOT/results
DATE=$(date -u +%Y%m%d)
REPEAT=()
STEPS=()
while (($#)); do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--into) [[ -n ${2:-} ]] || die "--into needs a directory"; INTO=$2; shift 2 ;;
	--date) [[ ${2:-} =~ ^[0-9]{8}$ ]] || die "--date needs YYYYMMDD"; DATE=$2; shift 2 ;;
	--repeat) [[ ${2:-} =~ ^[1-9][0-9]*(-[1-9][0-9]*)?$ ]] || die "--repeat needs a count N or a range MIN-MAX"; REPEAT=(--repeat "$2"); shift 2 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*)
		[[ " ${ALL_STEPS//$'\n'/ } " == *" $1 "* ]] || die "unknown step '$1' (see --help)"
		STEPS+=("$1")
		shift
		;;
	esac
done
((${#STEPS[@]})) || read -r -a STEPS <<<"${ALL_STEPS//$'\n'/ }"
[[ $(id -u) == 0 ]] || die "needs root (compare starts servers): sudo $0"
mkdir -p "$INTO"

# thin_factor STEP DIR: the rows a step keeps, 1 in K, so that a
# comparison stays a few MB: K for 5 runs per server, scaled by the runs
# DIR's compare made (meta.txt's runs=, the most of any sweep value).
thin_factor() {
	local k runs
	case $1 in
	vm-*) k=25 ;;
	*busy*) k=100 ;;
	*connect*) k=16 ;;
	*pingpong*) k=100 ;;	# 20-second runs: four times the rows
	*) k=25 ;;
	esac
	runs=$(sed -n 's/^runs=\([a-z]*=[0-9]*: \)\{0,1\}\([0-9][0-9]*\) .*/\2/p' "$2/meta.txt" | sort -n | tail -n1)
	echo $(((k * ${runs:-5} + 4) / 5))
}

# compare_args STEP: what compare measures for it.
compare_args() {
	case $1 in
	busy-[0-9]) echo --workload busy ;;
	pingpong-[0-9]) echo --workload pingpong ;;
	connect-[0-9]) echo --workload connect ;;
	busy-loopback) echo --loopback --workload busy ;;
	ebpf-flow-busy) echo --servers ebpf,ebpf-noflow --workload busy ;;
	ebpf-flow-pingpong) echo --servers ebpf,ebpf-noflow --workload pingpong ;;
	vm-busy) echo --vm --workload busy --repeat 5 ;;
	esac
}

for step in "${STEPS[@]}"; do
	out=$INTO/$DATE-$step
	[[ ! -e $out ]] || die "$out exists: move it away, or measure into another --into"
	echo "== $(date -u +%H:%M:%S) $step -> $out"
	if [[ $step == percall ]]; then
		mkdir -p "$out"
		"$ECHOLAB_ROOT/ftrace/percall.sh" --out "$out" -- -t 50 -d 5
		continue
	fi
	# shellcheck disable=SC2046 # compare_args: several words
	"$ECHOLAB_ROOT/run.sh" compare $(compare_args "$step") "${REPEAT[@]}" --out "$out"
	"$ECHOLAB_ROOT/cmd/thin.sh" "$(thin_factor "$step" "$out")" "$out"
	"$ECHOLAB_ROOT/run.sh" compare --summarize "$out"
	"$ECHOLAB_ROOT/cmd/plot.sh" "$out"
	rm -f "$out"/scatter-*.png	# a plot per server of every kept row: redrawn on demand
done
echo "== $(date -u +%H:%M:%S) done: ${STEPS[*]}"
# The method's own check: do the back-to-back compares agree?
for w in busy pingpong connect; do
	set -- "$INTO/$DATE-$w"-[0-9]
	[[ -d $1 && -d ${2:-} ]] || continue
	echo "== agreement of $w's $# compares (cmd/agreement.sh):"
	"$ECHOLAB_ROOT/cmd/agreement.sh" "$@"
done
