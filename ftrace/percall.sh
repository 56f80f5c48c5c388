#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# percall.sh - syscalls and context switches per echoed message, per server.
#
#   sudo ./ftrace/percall.sh [--vm] [--out DIR] [SERVER...] [-- BENCH-ARGS...]
#
# For each SERVER (default: every one this kernel can run) it starts the
# server and counts, with perf stat's tracepoint counters (which cannot
# overflow as a trace buffer can), the syscalls, receives and switches of
# the server's threads and of the whole machine during one bench run
# (default -t 10 -r 5 -m 100: 5000 messages on 50 connections), and divides
# by the messages echoed. A count that perf says is lost or incomplete (not
# counted, not supported, multiplexed, a missing tracepoint, a server that
# exited) is refused: no figure, the reason, exit 1. Writes percall.tsv (one
# row per server) and percall-SERVER-syscalls.txt (the server's syscalls by
# number) into DIR (default: the newest results dir). PERF names the perf
# command (default: perf).
set -euo pipefail
# shellcheck source=lib/tracefs.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tracefs.sh"

usage() {
	sed -n '/^#   sudo/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"
}

PERF=${PERF:-perf}
declare -A perf_ctl=() perf_ack=()

# x86-64 numbers of the syscalls these servers and bench make; each is
# counted by its own tracepoint (syscalls:sys_enter_NAME), the rest as
# "other".
syscall_names='0 read 1 write 3 close 7 poll 13 rt_sigaction 14 rt_sigprocmask
19 readv 20 writev 23 select 35 nanosleep 41 socket 42 connect 43 accept
44 sendto 45 recvfrom 46 sendmsg 47 recvmsg 48 shutdown 49 bind 50 listen
54 setsockopt 55 getsockopt 202 futex 228 clock_gettime 230 clock_nanosleep
232 epoll_wait 233 epoll_ctl 281 epoll_pwait 288 accept4 291 epoll_create1
299 recvmmsg 307 sendmmsg 321 bpf 425 io_uring_setup 426 io_uring_enter
427 io_uring_register 441 epoll_pwait2'
# the syscalls that receive data, where sock:sock_recv_length is missing
recv_syscalls='read readv recvfrom recvmsg recvmmsg'

# tracepoint_exists SYSTEM:EVENT
tracepoint_exists() { [[ -d $T/events/${1%%:*}/${1#*:} ]]; }

# The events, one "EVENT [FILTER]" a line, in the order perf prints them.
# The server's threads: all syscalls, switches out, receives that carried
# data (sock_recv_length, Linux 6.3 on: io_uring's receives are no
# syscalls), then each syscall of the list.
server_events() {
	local nr name
	echo raw_syscalls:sys_enter
	echo sched:sched_switch
	((have_recv_length)) && echo 'sock:sock_recv_length ret > 0'
	while read -r nr name; do
		echo "syscalls:sys_enter_$name"
	done < <(syscall_list)
}

# Every CPU: all syscalls, all switches, switches out of a kworker.
system_events() {
	echo raw_syscalls:sys_enter
	echo sched:sched_switch
	echo 'sched:sched_switch prev_comm ~ "kworker*"'
}

syscall_list() { xargs -n 2 <<<"$syscall_names"; }

# check_tracepoints: every event this script counts is in this kernel.
check_tracepoints() {
	local e
	while read -r e _; do
		tracepoint_exists "$e" ||
			die "refused: the tracepoint $e is missing on this kernel ($(uname -r)): its count would be lost" \
				"(${e%%:*} events need CONFIG_FTRACE_SYSCALLS for syscalls:*, CONFIG_TRACEPOINTS otherwise)"
	done < <(server_events; system_events)
}

# perf_start NAME TARGET...: perf stat on TARGET (-p PID or -a), its events
# (NAME_events) disabled until perf_enable; CSV into $tmp/NAME.csv.
perf_start() {
	local name=$1 e f args=()
	shift
	while read -r e f; do
		args+=(-e "$e")
		[[ -z $f ]] || args+=(--filter "$f")
	done < <("${name}_events")
	mkfifo "$tmp/$name.ctl" "$tmp/$name.ack"
	"$PERF" stat -x, --no-big-num -D -1 --control "fifo:$tmp/$name.ctl,$tmp/$name.ack" \
		-o "$tmp/$name.csv" "${args[@]}" "$@" 2>"$tmp/$name.err" &
	PERF_PIDS+=("$!")
	# read-write: opening them never blocks, even if perf has died
	exec {f}<>"$tmp/$name.ctl"
	perf_ctl[$name]=$f
	exec {f}<>"$tmp/$name.ack"
	perf_ack[$name]=$f
}

# perf_command NAME COMMAND: enable or disable NAME's counters; its ack.
perf_command() {
	local name=$1 cmd=$2 ack=''
	echo "$cmd" >&"${perf_ctl[$name]}"
	read -r -t 10 ack <&"${perf_ack[$name]}" || true
	[[ $ack == ack ]] ||
		die "refused: perf did not $cmd its counters (${name%_*} count): $(tail -n 5 "$tmp/$name.err" | tr '\n' ' ')"
}

# perf_stop: every perf started, interrupted; each must still have been
# running (perf stat -p ends when its process does) and end cleanly.
perf_stop() {
	local p rc
	for p in "${PERF_PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null ||
			die "refused: perf (pid $p) ended before the run did: its process exited mid-run"
		kill -INT "$p"
	done
	for p in "${PERF_PIDS[@]}"; do
		rc=0
		wait "$p" || rc=$?
		((rc == 0 || rc == 130)) || die "refused: perf (pid $p) failed, status $rc"
	done
	PERF_PIDS=()
	for p in "${perf_ctl[@]}" "${perf_ack[@]}"; do exec {p}>&-; done
	perf_ctl=()
	perf_ack=()
}

# perf_counts NAME: the counts of NAME.csv, one a line, in NAME_events'
# order; refuses a count perf did not take whole: "<not counted>", "<not
# supported>", multiplexed (counted for less than 100% of the time it was
# enabled), or an event missing from the output.
perf_counts() {
	local name=$1 what=$2 want=() e n i=0 v ev pct line
	while read -r e _; do want+=("$e"); done < <("${name}_events")
	while IFS=, read -r v _ ev _ pct _; do
		line="$v,$ev,$pct"
		((i < ${#want[@]})) || die "refused: $what: perf printed more counts than events: $line"
		[[ $ev == "${want[i]}" ]] || die "refused: $what: perf printed '$ev' where '${want[i]}' was due"
		case $v in
		'<not counted>' | '<not supported>')
			die "refused: $what: perf says ${want[i]} was $v (${v//[<>]/}): that count is lost" ;;
		esac
		[[ $v =~ ^[0-9]+$ ]] || die "refused: $what: perf's count of ${want[i]} is not a number: $line"
		[[ $pct == 100.00 ]] ||
			die "refused: $what: ${want[i]} was multiplexed (counted ${pct}% of the time it was enabled):" \
				"perf would scale an estimate, not a count"
		echo "$v"
		i=$((i + 1))
	done < <(grep -v '^#' "$tmp/$name.csv" | grep -v '^$')
	n=${#want[@]}
	((i == n)) || die "refused: $what: perf printed $i of the $n counts (see $(tail -n 3 "$tmp/$name.err" | tr '\n' ' '))"
}

# threads PID: the ids of its threads
threads() {
	local t
	for t in /proc/"$1"/task/*; do [[ -e $t ]] && printf '%s ' "${t##*/}"; done
}

# starttime PID: field 22 of /proc/PID/stat (tells a reused pid apart)
starttime() { awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null; }

# measure SERVER: one row of percall.tsv
measure() {
	local server=$1 pid tids started ok sends recv other kw i
	local sys=() all=() per=() name nr
	trace_start "$server"
	pid=$(state pid)
	PERF_PIDS=()
	rm -f "$tmp"/*.ctl "$tmp"/*.ack
	if [[ -n $pid ]]; then
		tids=$(threads "$pid")
		started=$(starttime "$pid")
		perf_start server -p "$pid"
	fi
	perf_start system -a
	[[ -z $pid ]] || perf_command server enable
	perf_command system enable
	run_bench "${bench_args[@]}"
	if [[ -n $pid ]]; then
		[[ $(starttime "$pid") == "$started" ]] ||
			die "refused: the $server server (pid $pid) exited during the run: its counts are incomplete"
		[[ $(threads "$pid") == "$tids" ]] ||
			die "refused: the $server server's threads changed during the run ($tids-> $(threads "$pid")):" \
				"a thread that exited took its count with it"
		perf_command server disable
	fi
	perf_command system disable
	perf_stop
	trace_stop

	ok=$(field "$summary" ok)
	((ok > 0)) || die "$server: bench had no successful request: $summary"
	# not in a subshell: a refusal ends the script
	perf_counts system "$server, every CPU" >"$tmp/system.counts"
	mapfile -t all <"$tmp/system.counts"
	if [[ -n $pid ]]; then
		perf_counts server "$server's threads" >"$tmp/server.counts"
		mapfile -t sys <"$tmp/server.counts"
	else
		sys=(0 0 0)
		((have_recv_length)) || sys=(0 0)
	fi
	# per-syscall counts follow the two (three) totals
	i=$((2 + have_recv_length))
	per=("${sys[@]:i}")
	other=${sys[0]}
	: >"$out/percall-$server-syscalls.txt"
	i=0
	while read -r nr name; do
		if ((${per[i]:-0} > 0)); then
			echo "$nr $name ${per[i]}" >>"$out/percall-$server-syscalls.txt"
			other=$((other - per[i]))
		fi
		i=$((i + 1))
	done < <(syscall_list)
	((other <= 0)) || echo "- other $other" >>"$out/percall-$server-syscalls.txt"
	sort -k3,3nr -o "$out/percall-$server-syscalls.txt" "$out/percall-$server-syscalls.txt"
	# sends: the syscalls that could carry the echo (write, writev, sendto, sendmsg)
	sends=$(awk '$2 ~ /^(write|writev|sendto|sendmsg)$/ { n += $3 } END { print n + 0 }' \
		"$out/percall-$server-syscalls.txt")
	if ((have_recv_length)); then
		recv=${sys[2]}
	else
		recv=$(awk -v r=" $recv_syscalls " 'index(r, " " $2 " ") { n += $3 } END { print n + 0 }' \
			"$out/percall-$server-syscalls.txt")
	fi
	plausible "$server" "$ok" "$recv" || recv=-
	kw=${all[2]}
	awk -v s="$server" -v r="$ok" -v sys="${sys[0]}" -v snd="$sends" -v sw="${sys[1]}" \
		-v kw="$kw" -v as="${all[0]}" -v asw="${all[1]}" -v rcv="$recv" 'BEGIN {
		printf "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\n", s, r, sys / r, snd / r,
			sw / r, kw / r, as / r, asw / r, (rcv == "-" ? "-" : sprintf("%.3f", rcv / r)) }'
}

# plausible SERVER MESSAGES RECEIVES: a server whose own process echoes
# (a process with no BPF echo program: user, uring) received every message
# at least once in a closed loop; fewer receives means lost counts. Status
# 1 when the receives were not counted (uring without sock_recv_length).
plausible() {
	local server=$1 ok=$2 recv=$3
	[[ $(server_get "$server" kind) == process && -z $(server_get "$server" bpf_progs) ]] || return 0
	if ((!have_recv_length)) && [[ $server == uring ]]; then
		warn "note: uring's receives are not counted nor checked: this kernel has no" \
			"sock:sock_recv_length, and io_uring receives without a syscall"
		return 1
	fi
	((recv >= ok)) ||
		die "refused: implausible: the $server server received $recv times for $ok echoed messages" \
			"(a closed loop needs at least one receive per message): counts were lost"
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
	need_perf
	[[ -n $out ]] || out=$(results_dir)
	mkdir -p "$out"
	if ((vm)); then
		# perf goes into the guest with its libraries
		guest_tools "$PERF"
		rerun_in_guest "$out" "${args[@]}"
		exit
	fi
	if ((${#servers[@]} == 0)); then
		for s in "${SERVERS[@]}"; do
			[[ -n $(server_unavailable "$s") ]] || servers+=("$s")
		done
	fi
	ftrace_traps
	tracefs_mount	# perf finds tracepoints there
	make_tmp
	have_recv_length=0
	! tracepoint_exists sock:sock_recv_length || have_recv_length=1
	check_tracepoints
	{
		echo "# kernel=$(uname -r) bench=${bench_args[*]} where=${ECHOLAB_WHERE:-native} method=perf-stat"
		echo "# per message: syscalls (all; sends = write/writev/sendto/sendmsg) and switches-out of the server's own threads, of kworkers, of everything (bench included); $( ((have_recv_length)) && echo "receives of the server's threads that carried data (sock:sock_recv_length)" || echo "receive syscalls of the server's threads ($recv_syscalls; no sock:sock_recv_length here: uring's not counted, -)")"
		printf 'server\tmessages\tserver_syscalls\tserver_sends\tserver_switches\tkworker_switches\tall_syscalls\tall_switches\tserver_receives\n'
		for s in "${servers[@]}"; do
			measure "$s"
		done
	} >"$tmp/percall.tsv"
	cp "$tmp/percall.tsv" "$out/percall.tsv"
	grep '^#' "$out/percall.tsv"
	grep -v '^#' "$out/percall.tsv" | column -t -s $'\t' 2>/dev/null ||
		grep -v '^#' "$out/percall.tsv"
	for s in "${servers[@]}"; do
		echo "# $s's syscalls (NR name count): $(head -n 4 "$out/percall-$s-syscalls.txt" | tr '\n' ';')"
	done
	echo "results: $out/percall.tsv"
}

main "$@"
