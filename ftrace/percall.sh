#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# percall.sh - syscalls and context switches per echoed message, per server.
#
#   sudo ./ftrace/percall.sh [--vm] [--out DIR] [SERVER...] [-- BENCH-ARGS...]
#
# For each SERVER (default: every one this kernel can run) it starts the
# server, counts raw_syscalls:sys_enter and sched:sched_switch in a private
# trace instance during one bench run (default -t 10 -r 5 -m 100: 5000
# messages on 50 connections), and divides by the messages echoed. Writes
# percall.tsv (one row per server) and percall-SERVER-syscalls.txt (the
# server's syscalls by number) into DIR (default: the newest results dir).
set -euo pipefail
# shellcheck source=lib/tracefs.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tracefs.sh"

usage() {
	sed -n '/^#   sudo/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"
}

# x86-64 numbers of the syscalls these servers and bench make
syscall_names='0 read 1 write 3 close 7 poll 13 rt_sigaction 14 rt_sigprocmask
20 writev 23 select 35 nanosleep 41 socket 42 connect 43 accept 44 sendto
45 recvfrom 46 sendmsg 47 recvmsg 48 shutdown 49 bind 50 listen 54 setsockopt
55 getsockopt 202 futex 228 clock_gettime 230 clock_nanosleep 232 epoll_wait
233 epoll_ctl 281 epoll_pwait 288 accept4 291 epoll_create1 441 epoll_pwait2'

# count_events TRACE SERVER-TIDS: "syscalls switches kworker_switches
# all_syscalls all_switches", the server's own first (its threads).
count_events() {
	awk -v tids="$2" '
	BEGIN { n = split(tids, a, " "); for (i = 1; i <= n; i++) mine[a[i]] = 1 }
	/^#/ { next }
	match($0, /-[0-9]+ +(\([ 0-9-]+\) +)?\[[0-9]+\]/) {
		tid = substr($0, RSTART + 1); sub(/[^0-9].*/, "", tid)
		if ($0 ~ / sys_enter: /) {
			all_sys++
			if (tid in mine) sys++
		} else if ($0 ~ / sched_switch: /) {
			all_sw++
			if (tid in mine) sw++
			if ($0 ~ /prev_comm=kworker/) kw++
		}
	}
	END { printf "%d %d %d %d %d\n", sys, sw, kw, all_sys, all_sw }' "$1"
}

# syscalls_by_number TRACE TIDS: "NR name count", most frequent first.
syscalls_by_number() {
	awk -v tids="$2" -v names="$syscall_names" '
	BEGIN {
		n = split(tids, a, " "); for (i = 1; i <= n; i++) mine[a[i]] = 1
		n = split(names, b, /[ \n]+/); for (i = 1; i < n; i += 2) nm[b[i]] = b[i + 1]
	}
	/ sys_enter: NR / && match($0, /-[0-9]+ +(\([ 0-9-]+\) +)?\[[0-9]+\]/) {
		tid = substr($0, RSTART + 1); sub(/[^0-9].*/, "", tid)
		if (!(tid in mine)) next
		match($0, /NR -?[0-9]+/); nr = substr($0, RSTART + 3, RLENGTH - 3); c[nr]++
	}
	END { for (k in c) printf "%s %s %d\n", k, (k in nm ? nm[k] : "?"), c[k] }' "$1" |
		sort -k3,3nr
}

# measure SERVER: one row of percall.tsv
measure() {
	local server=$1 inst tids summary ok counts pid sends t
	trace_start "$server"
	pid=$(state pid)
	tids=
	if [[ -n $pid && -d /proc/$pid/task ]]; then
		for t in /proc/"$pid"/task/*; do tids+="${t##*/} "; done
	fi
	instance_create 16384
	inst=$INST
	echo 1 >"$inst/events/raw_syscalls/sys_enter/enable"
	echo 1 >"$inst/events/sched/sched_switch/enable"
	echo 1 >"$inst/tracing_on"
	run_bench "${bench_args[@]}"
	echo 0 >"$inst/tracing_on"
	cat "$inst/trace" >"$tmp/trace"
	if grep -q 'overrun: [1-9]' "$inst"/per_cpu/cpu*/stats; then
		warn "warning: the trace buffer overflowed; counts are low (fewer messages: -m)"
	fi
	instance_remove
	trace_stop

	ok=$(field "$summary" ok)
	((ok > 0)) || die "$server: bench had no successful request: $summary"
	read -r -a counts <<<"$(count_events "$tmp/trace" "$tids")"
	syscalls_by_number "$tmp/trace" "$tids" >"$out/percall-$server-syscalls.txt"
	# sends: the syscalls that could carry the echo (write, writev, sendto, sendmsg)
	sends=$(awk '$2 ~ /^(write|writev|sendto|sendmsg)$/ { n += $3 } END { print n + 0 }' \
		"$out/percall-$server-syscalls.txt")
	awk -v s="$server" -v r="$ok" -v sys="${counts[0]}" -v snd="$sends" -v sw="${counts[1]}" \
		-v kw="${counts[2]}" -v as="${counts[3]}" -v asw="${counts[4]}" 'BEGIN {
		printf "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", s, r, sys / r, snd / r,
			sw / r, kw / r, as / r, asw / r }'
}

main() {
	local servers=() s
	out=
	bench_args=()
	local vm=0 args=("$@")
	while (($#)); do
		case $1 in
		--vm) vm=1 ;;
		--out) out=${2:?--out needs a directory}; shift ;;
		-h | --help) usage; exit 0 ;;
		--) shift; bench_args=("$@"); break ;;
		*)
			is_server "$1" || { echo "percall.sh: unknown argument '$1' (servers: ${SERVERS[*]})" >&2; usage >&2; exit 2; }
			servers+=("$1")
			;;
		esac
		shift
	done
	((${#bench_args[@]})) || bench_args=(-t 10 -r 5 -m 100)
	need_root "${0##*/}"
	[[ -n $out ]] || out=$(results_dir)
	mkdir -p "$out"
	if ((vm)); then
		rerun_in_guest "$out" "${args[@]}"
		exit
	fi
	if ((${#servers[@]} == 0)); then
		for s in "${SERVERS[@]}"; do
			[[ -n $(server_unavailable "$s") ]] || servers+=("$s")
		done
	fi
	ftrace_traps
	tracefs_mount
	make_tmp
	{
		echo "# kernel=$(uname -r) bench=${bench_args[*]} where=$([[ -n ${VM:-} ]] && echo vm || echo native)"
		echo "# per message: syscalls (all; sends = write/writev/sendto/sendmsg) and switches-out of the server's own threads, of kworkers, of everything (bench included)"
		printf 'server\tmessages\tserver_syscalls\tserver_sends\tserver_switches\tkworker_switches\tall_syscalls\tall_switches\n'
		for s in "${servers[@]}"; do
			measure "$s"
		done
	} >"$tmp/percall.tsv"
	cp "$tmp/percall.tsv" "$out/percall.tsv"
	rm -rf "$tmp"
	grep '^#' "$out/percall.tsv"
	grep -v '^#' "$out/percall.tsv" | column -t -s $'\t' 2>/dev/null ||
		grep -v '^#' "$out/percall.tsv"
	for s in "${servers[@]}"; do
		echo "# $s's syscalls (NR name count): $(head -n 4 "$out/percall-$s-syscalls.txt" | tr '\n' ';')"
	done
	echo "results: $out/percall.tsv"
}

main "$@"
