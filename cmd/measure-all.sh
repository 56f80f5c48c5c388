#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# measure-all.sh [--into DIR] [--date YYYYMMDD] [--repeat N|MIN-MAX] [STEP...] - re-measure
# every comparison results/README.md quotes, the way it was measured, and
# make each small enough to commit: thin.sh, the summary rewritten from
# the thinned files (compare --summarize), the plots redrawn.
#
# STEPs (default: all of them, in this order), one per directory the page
# links, named as it is after its date; each runs the command its
# meta.txt records (args=, bench_args=, order_seed=):
#   sizes-native sizes-loopback sizes-vm-6.1   the size tables (native, the
#                                   64 KiB point on loopback, the 6.1 guest)
#   copies-vm                       ftrace/copies.sh on 6.1 and 6.12, 4 sizes
#   profile-equal profile-vm-6.1    ftrace/profile.sh at the size table's loads
#   uring-defaults-sizes uring-minwait-131k uring-defaults-load1000
#   uring-32buf uring-shipped-20k-50conns uring-shipped-20k-300conns
#   uring-shipped-20k-loopback uring-shipped-16k-1conn
#                                   uring's defaults (with the profiles they
#                                   quote); uring-shipped-20k-independent:
#                                   cmd/crosscheck.sh at the same loads
#   default-shipped-1 default-shipped-2 default-shipped-3  the same compare
#                                   three times back to back
#   uring-at-its-best splice-at-its-best at-its-best-2  beside the public
#                                   servers (cmd/peers.sh build first)
#   bypass-sizes bypass-sizes-1k-64k bypass-pingpong  the sk_msg bypass
#   proxy-load proxy-load-fixed proxy-load-vm-6.1 proxy-load-vm-6.12  the hop
#   proxy-skmsg                     the hop's skmsg path against copy
#   study-000-loopback study-000-two-machine study-000-vm-loopback
#   study-000-load1000 study-000-vm-load1000 study-001-bypass-pingpong
#   sockperf                        the study's tables (cmd/sockperf.sh)
#   curve-native knee-loopback      latency against load, gridded and searched
#   stream-native                   the stream at 64 KiB and 1 MiB
#
# All of them take about six hours on 2 cores: the directories' own run
# counts at their window plus about 3 s a run to start, stop and warm up
# (what the 2026-11-27 directories' meta.txt date= lines give between
# consecutive compares), the guest's steps at the pace they ran (the 6.1
# size table: 360 runs in 43 minutes).
#
# Each goes to DIR/DATE-STEP (default DIR: results/, DATE: today); a step
# whose directory exists is refused. --repeat: runs per server in every
# compare instead of the step's own. Each raw file keeps 1 in K of its
# rows, K as the kept directory's (its files' thinned=), larger in
# proportion when a compare ran more than 5 runs per server. At the end,
# cmd/agreement.sh compares the back-to-back compares. Where a variant's
# default changed since (uring: 32 buffers, no batched wait), the step
# names the old behaviour's variant (uring-256buf, uring-minwait). Run it
# on an idle machine: every process besides the suite's takes CPU time
# the comparison counts as the servers'. Needs root, as compare does.
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
prog_name measure-all.sh

usage() { sed -n '/^# measure-all.sh/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

ALL_STEPS="sizes-native sizes-loopback sizes-vm-6.1 copies-vm profile-equal
profile-vm-6.1 uring-defaults-sizes uring-minwait-131k uring-defaults-load1000
uring-32buf uring-shipped-20k-50conns uring-shipped-20k-300conns
uring-shipped-20k-loopback uring-shipped-16k-1conn uring-shipped-20k-independent
default-shipped-1 default-shipped-2 default-shipped-3 uring-at-its-best
splice-at-its-best at-its-best-2 bypass-sizes bypass-sizes-1k-64k
bypass-pingpong proxy-load proxy-load-fixed proxy-load-vm-6.1
proxy-load-vm-6.12 proxy-skmsg study-000-loopback study-000-two-machine
study-000-vm-loopback study-000-load1000 study-000-vm-load1000
study-001-bypass-pingpong sockperf curve-native knee-loopback stream-native"
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

# thin_factor STEP DIR: the rows a step keeps, 1 in K, the kept
# directory's K for 5 runs per server, scaled by the runs DIR's compare
# made (meta.txt's runs=, the most of any sweep value).
thin_factor() {
	local k runs
	case $1 in
	*vm*) k=512 ;;
	*pingpong*) k=1600 ;;
	*at-its-best* | uring-shipped-20k-* | uring-shipped-16k-*) k=200 ;;
	stream-*) k=400 ;;
	knee-*) k=4000 ;;
	*) k=3200 ;;
	esac
	runs=$(sed -n 's/^runs=\([a-z]*=[0-9]*: \)\{0,1\}\([0-9][0-9]*\) .*/\2/p' "$2/meta.txt" 2>/dev/null | sort -n | tail -n1)
	echo $(((k * ${runs:-5} + 4) / 5))
}

# compare_args STEP: what compare measures for it (its meta.txt's args=,
# or the bench_args= and sweep= it recorded, and its seed).
compare_args() {
	local one='--workload load -c 1 -d 4 --rates 2000 --loopback'
	case $1 in
	sizes-native) echo --servers user,user-splice,uring,ebpf --sizes 64,16384 --workload load -d 3 --repeat 5 --seed 20261127 ;;
	sizes-loopback) echo --loopback --servers user,user-splice,uring,ebpf --sizes 16384,65536 --workload load -d 3 --repeat 5 --seed 20261126 ;;
	sizes-vm-6.1) echo --vm --kernel 6.1 --servers user,uring,ebpf,kecho-unbound,kecho-bound,kecho-kthread --sizes 64,1024,16384,65536 --workload load -d 3 --repeat 5 --seed 20261127 ;;
	uring-defaults-sizes) echo --servers user,uring,uring-256buf --sizes 64,16384 --workload load -d 3 --repeat 5 --seed 20261129 ;;
	uring-minwait-131k) echo --servers user,uring-minwait,uring --rates 131400 --workload load -d 3 --repeat 5 --seed 20261128 ;;
	uring-defaults-load1000) echo --servers user,uring,uring-256buf,uring-minwait --workload load1000 --rates 121100 -d 3 --repeat 5 --seed 20261129 ;;
	uring-32buf) echo --servers user,uring-256buf,uring --sizes 16384 --rates 14400,43300 --workload load -d 3 --repeat 5 --seed 20261127 ;;
	uring-shipped-20k-50conns) echo --servers user,uring --rates 20000 --workload load -d 5 --repeat 15 --seed 20261202 ;;
	uring-shipped-20k-300conns) echo --servers user,uring --rates 20000 --workload load -d 5 --repeat 7 --seed 20261201 -c 300 ;;
	uring-shipped-20k-loopback) echo --loopback --servers user,uring --rates 20000 --repeat 7 --seed 20261201 ;;
	uring-shipped-16k-1conn) echo --servers user,uring --sizes 16384 --rates 2000 --workload load -c 1 -d 4 --repeat 15 --seed 20261203 ;;
	default-shipped-[1-3]) echo --servers user,user-w2,uring,ebpf --rates 40000,80000,120000 --repeat 5 --seed "2026113${1##*-}" ;;
	uring-at-its-best) echo "$one" --servers user,uring,uring-256buf,cf-naive --sizes 16384,65536 --repeat 7 --seed 20261129 ;;
	splice-at-its-best) echo "$one" --servers user,user-splice,cf-splice --sizes 16384,65536 --repeat 7 --seed 20261130 ;;
	at-its-best-2) echo "$one" --servers user,user-16k,user-splice,uring,uring-4k,cf-naive,cf-splice --sizes 64,16384,65536 --repeat 6-8 --seed 804958674 ;;
	bypass-sizes) echo --bypass --sizes 64,16384 --workload load -d 3 --repeat 5 --seed 20261127 ;;
	bypass-sizes-1k-64k) echo --bypass --sizes 1024,65536 --workload load -d 3 --repeat 5 --seed 20261201 ;;
	bypass-pingpong) echo --bypass --sizes 64,16384 --workload pingpong --repeat 5 --seed 20261201 ;;
	proxy-load) echo --proxy all --sizes 64,16384 --repeat 5 --seed 20261126 ;;
	proxy-load-fixed) echo --proxy copy,sockmap --sizes 16384 --rates 3100,6100,9200 --repeat 5 --seed 20261126 ;;
	proxy-skmsg) echo --proxy copy,skmsg --workload load -d 3 --sizes 64,16384 --repeat 5 --seed 20261129 ;;
	proxy-load-vm-*) echo --vm --kernel "${1##*-}" --proxy all --sizes 64,16384 --rates 250,500 --repeat 5 --seed 20261126 ;;
	study-000-loopback) echo --loopback --servers user,ebpf --repeat 5 --seed 20261127 -t 1000 -r 1 ;;
	study-000-two-machine) echo --servers user,ebpf --repeat 5 --seed 20261127 -t 1000 -r 1 ;;
	study-000-vm-loopback) echo --vm --loopback --servers user,ebpf,kecho-unbound,kecho-bound,kecho-kthread --repeat 5 --seed 20261127 -t 1000 -r 1 ;;
	study-000-load1000) echo --servers user,ebpf --workload load1000 --repeat 5 --seed 20261127 ;;
	study-000-vm-load1000) echo --vm --servers user,ebpf,kecho-unbound,kecho-kthread --workload load1000 --repeat 5 --seed 20261127 -d 3 ;;
	study-001-bypass-pingpong) echo --bypass --sizes 128,1024,8192,32768 --repeat 5 --seed 20261127 -t 1 -d 5 --warmup 1 ;;
	curve-native) echo --curve --servers user,user-w2,uring,ebpf ;;
	stream-native) echo --workload stream --servers user,user-splice,uring,ebpf --sizes 65536,1048576 --repeat 5 -d 3 --seed 20261127 ;;
	*) return 1 ;;
	esac
}

# profile_args STEP: the profile a compare step's page quotes, into
# DIR/profile, one argument a line (none: nothing).
profile_args() {
	case $1 in
	uring-minwait-131k) printf '%s\n' --bench '-c 50 -R 131400' uring-minwait uring user ;;
	uring-32buf) printf '%s\n' --bench '-c 50 -R 14400 -s 16384' user uring-256buf uring ;;
	uring-shipped-20k-300conns) printf '%s\n' --bench '-c 300 -R 20000' user uring ;;
	esac
}

# other_step STEP OUT: the steps that are not one compare.
other_step() {
	local step=$1 out=$2 k s point
	mkdir -p "$out"
	case $step in
	copies-vm)
		for k in 6.1 6.12; do
			for s in 64 1024 16384 65536; do
				ECHOLAB_KERNEL=$k "$ECHOLAB_ROOT/ftrace/copies.sh" --vm --out "$out/$k/size-$s" \
					user user-splice uring ebpf kecho -- -t 1 -r 1 -m 1000 -s "$s"
			done
		done ;;
	profile-equal)
		for point in 64:47900 64:143700 16384:14400 16384:43300; do
			"$ECHOLAB_ROOT/ftrace/profile.sh" --out "$out/size-${point%:*}-rate-${point#*:}" \
				--bench "-c 50 -R ${point#*:} -s ${point%:*}" user user-splice uring ebpf
		done ;;
	profile-vm-6.1)
		ECHOLAB_KERNEL=6.1 "$ECHOLAB_ROOT/ftrace/profile.sh" --vm --out "$out" --seconds 4 --bench "-c 50 -R 5600" \
			user uring ebpf kecho-unbound kecho-bound kecho-kthread ;;
	uring-shipped-20k-independent)
		"$ECHOLAB_ROOT/cmd/crosscheck.sh" --rounds 3 --bench "-t 50 -R 20000 -d 6" \
			--bench "-c 50 -R 20000 -d 6" --bench "-c 300 -R 20000 -d 6" user uring | tee "$out/readings.txt" ;;
	sockperf) rmdir "$out"; "$ECHOLAB_ROOT/cmd/sockperf.sh" --repeat 5 --seed 20261127 --out "$out" ;;
	knee-loopback)
		rmdir "$out"
		"$ECHOLAB_ROOT/run.sh" knee user uring ebpf --bound 10000 --from 8000 --seed 20261126 --out "$out"
		"$ECHOLAB_ROOT/cmd/thin.sh" "$(thin_factor "$step" "$out")" "$out" ;;
	esac
}

# finish_step STEP OUT: a compare's directory made small enough to commit:
# its raw files thinned (a size sweep's are in OUT/size-S/), its summaries
# written again from them, its plots drawn (where raw files are).
finish_step() {
	local step=$1 out=$2 d dirs=("$2")
	for d in "$out"/size-*/; do
		[[ ! -d $d ]] || dirs+=("${d%/}")
	done
	"$ECHOLAB_ROOT/cmd/thin.sh" "$(thin_factor "$step" "$out")" "${dirs[@]}"
	"$ECHOLAB_ROOT/run.sh" compare --summarize "$out"
	for d in "${dirs[@]}"; do
		compgen -G "$d/*.tsv.gz" >/dev/null || continue
		"$ECHOLAB_ROOT/cmd/plot.sh" "$d"
		rm -f "$d"/scatter-*.png	# a plot per server of every kept row: redrawn on demand
	done
}

# peers: the public servers, built once, if a step compares them.
case " ${STEPS[*]} " in
*" uring-at-its-best "* | *" splice-at-its-best "* | *" at-its-best-2 "*) "$ECHOLAB_ROOT/cmd/peers.sh" build ;;
esac

for step in "${STEPS[@]}"; do
	out=$INTO/$DATE-$step
	[[ ! -e $out ]] || die "$out exists: move it away, or measure into another --into"
	echo "== $(date -u +%H:%M:%S) $step -> $out"
	if ! args=$(compare_args "$step"); then
		other_step "$step" "$out"
		continue
	fi
	# the guest's loopback run of 1,000 connections, not waiting out
	# TIME_WAIT a minute a run (its meta.txt's tw_max=)
	tw=${ECHOLAB_TW_MAX:-2000}
	[[ $step != study-000-vm-loopback ]] || tw=20000
	# shellcheck disable=SC2086 # compare_args: several words
	ECHOLAB_TW_MAX=$tw "$ECHOLAB_ROOT/run.sh" compare $args "${REPEAT[@]}" --out "$out"
	mapfile -t prof < <(profile_args "$step")
	((${#prof[@]} == 0)) || "$ECHOLAB_ROOT/ftrace/profile.sh" --out "$out/profile" "${prof[@]}"
	finish_step "$step" "$out"
done
echo "== $(date -u +%H:%M:%S) done: ${STEPS[*]}"
# The method's own check: do the back-to-back compares agree?
set -- "$INTO/$DATE-default-shipped"-[0-9]
if [[ -d $1 && -d ${2:-} ]]; then
	echo "== agreement of the $# back-to-back compares (cmd/agreement.sh):"
	"$ECHOLAB_ROOT/cmd/agreement.sh" "$@"
fi
