#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# crosscheck.sh [--rounds N] [--bench 'ARGS']... [SERVER...] - a server's CPU
# per echo read outside bench, beside bench's own figure.
#
# bench reports the server's CPU per echo as its CPUs' busy time (the
# window minus /proc/stat's idle clock and the host's steal) over the
# echoes. This reads the same thing with nothing of bench's: the window
# from this script's wall clock around the whole bench process, the idle
# of CPU 0 twice, from /proc/stat (idle + iowait) and from cpuidle's
# residency (the sum of /sys/devices/system/cpu/cpu0/cpuidle/state*/time,
# where the kernel has it), less CPU 0's steal (/proc/stat), and the
# echoes from bench's ok= count. It also prints what the tick-sampled
# fields (user + nice + system + irq + softirq) sum to, which is not busy
# time on a tickless kernel, and the seconds stolen (steal_s=).
#
# Each SERVER (default: user uring) runs on CPU 0 on loopback (run.sh
# SERVER --cpus 0, which steers the loopback's receive processing there);
# bench runs pinned by taskset to the other CPUs. Each round runs every
# --bench load (default '-c 50 -R 20000 -d 6'; each needs -d) against
# every server, in that order. One line per run, as it ends:
#   round= load= server= ok= window_s= steal_s= stat_us_per_echo=
#   cpuidle_us_per_echo= ticks_us_per_echo= bench_says=
# Needs root and two CPUs. Stops each server and puts the loopback's
# steering back, also when interrupted.
set -uo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
prog_name crosscheck.sh "cmd/crosscheck.sh --help"
ROOT=$ECHOLAB_ROOT
RPS=/sys/class/net/lo/queues/rx-0/rps_cpus

usage() { sed -n '/^# crosscheck.sh/,/^set -uo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

rounds=3
loads=()
servers=()
while (($#)); do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--rounds)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--rounds needs a count of 1 or more"
		rounds=$2; shift 2 ;;
	--bench)
		[[ -n ${2:-} ]] || usage_error "--bench needs bench's arguments, e.g. '-c 50 -R 20000 -d 6'"
		[[ " $2 " == *" -d "* || " $2 " == *" --duration "* ]] ||
			usage_error "--bench '$2': give -d SEC, so that every run is bounded"
		loads+=("$2"); shift 2 ;;
	-*) usage_error "unknown option '$1'" ;;
	*) servers+=("$1"); shift ;;
	esac
done
((${#loads[@]})) || loads=("-c 50 -R 20000 -d 6")
((${#servers[@]})) || servers=(user uring)
need_root crosscheck.sh
(($(nproc) >= 2)) || die "needs two CPUs: the server on CPU 0, bench on the others"
[[ -w $RPS ]] || die "cannot set the loopback's receive steering ($RPS)"
[[ -x $ROOT/bench/bench ]] || die "no bench/bench: run 'make all' first"
known=" $("$ROOT/run.sh" list | awk 'NR > 1 { print $2 }' | sort -u | xargs) "
for s in "${servers[@]}"; do
	[[ $known == *" $s "* ]] || usage_error "no server '$s' (one of:$known)"
done

old_rps=$(<"$RPS")
# shellcheck disable=SC2317 # the EXIT trap
finish() {
	"$ROOT/run.sh" stop >/dev/null 2>&1
	echo "$old_rps" >"$RPS"
}
trap finish EXIT
trap 'exit 130' INT TERM

hz=$(getconf CLK_TCK)
client_cpus="1-$(($(nproc) - 1))"
now() { date +%s.%N; }
stat_idle() { awk -v hz="$hz" '$1 == "cpu0" { printf "%.6f\n", ($5 + $6) / hz }' /proc/stat; }
ticks() {
	awk -v hz="$hz" '$1 == "cpu0" { printf "%.6f\n", ($2 + $3 + $4 + $7 + $8) / hz }' /proc/stat
}
steal() { awk -v hz="$hz" '$1 == "cpu0" { printf "%.6f\n", $9 / hz }' /proc/stat; }
cpuidle() {
	local states=(/sys/devices/system/cpu/cpu0/cpuidle/state*/time)
	[[ -e ${states[0]} ]] || { echo nan; return; }
	cat "${states[@]}" | awk '{ t += $1 } END { printf "%.6f\n", t / 1e6 }'
}

for ((r = 1; r <= rounds; r++)); do
	for load in "${loads[@]}"; do
		for s in "${servers[@]}"; do
			"$ROOT/run.sh" "$s" --cpus 0 >/dev/null || die "$s did not start (run.sh $s --cpus 0 says why)"
			sleep 1
			w0=$(now) a0=$(stat_idle) c0=$(cpuidle) k0=$(ticks) s0=$(steal)
			# shellcheck disable=SC2086 # the load's bench arguments, split
			out=$(taskset -c "$client_cpus" "$ROOT/bench/bench" $load -q \
				--cpus "$client_cpus" --server-cpus 0 -o /dev/null)
			rc=$?
			w1=$(now) a1=$(stat_idle) c1=$(cpuidle) k1=$(ticks) s1=$(steal)
			"$ROOT/run.sh" stop >/dev/null
			((rc != 2)) || usage_error "bench refused '$load' (its message is above)"
			ok=$(field "$out" ok)
			[[ ${ok:-0} -gt 0 ]] || die "round $r, $s, '$load': no echo (bench: ${out:-nothing})"
			awk -v r="$r" -v l="$load" -v s="$s" -v ok="$ok" -v b="$(field "$out" server_cpu_us_per_echo)" \
				-v w0="$w0" -v w1="$w1" -v a0="$a0" -v a1="$a1" -v c0="$c0" -v c1="$c1" \
				-v k0="$k0" -v k1="$k1" -v s0="$s0" -v s1="$s1" 'BEGIN {
				w = w1 - w0
				st = s1 - s0
				cpuidle = (c0 == "nan") ? "nan" : sprintf("%.2f", (w - (c1 - c0) - st) * 1e6 / ok)
				printf "round=%d load=\"%s\" server=%s ok=%d window_s=%.3f steal_s=%.2f stat_us_per_echo=%.2f cpuidle_us_per_echo=%s ticks_us_per_echo=%.2f bench_says=%s\n",
					r, l, s, ok, w, st, (w - (a1 - a0) - st) * 1e6 / ok, cpuidle, (k1 - k0) * 1e6 / ok, b
			}'
			sleep 2
		done
	done
done
