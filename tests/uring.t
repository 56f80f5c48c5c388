#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What only the io_uring server does (the contract every server keeps is
# tests/contract.t): long connections, thousands of clients, no descriptor
# left after 50,000 connections, a buffer ring run dry, fairness between
# connections, a client that never reads, -w 2 and --sqpoll; the newer
# io_uring features where this kernel has them, each one's older path
# (--disable), and direct descriptors that are given back. The server runs
# by hand on the spare port, so that its last words (its counters) can be
# read.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

SERVER=$(server_binary uring)
LOG=$(mktemp)
trap 'stop_uring; rm -f "$LOG"' EXIT

# Skipped only for a platform fact the test detects itself; a server that
# run.sh refuses where the facts say it runs fails its start below.
lacks=$(platform_lacks uring)
[[ -z $lacks ]] || skip_all "$lacks"

# start_uring ARGS...: the server on the spare port, ready when it echoes.
start_uring() {
	local rc=0
	spare_start "$LOG" "${URING_CMD:-$SERVER}" "$@" || rc=$?
	URING_PID=$SPARE_PID
	return "$rc"
}

# stop_uring: SIGTERM (SIGKILL after 10 s: bounded); its exit status, and
# its counters line in $LOG.
stop_uring() {
	[[ -n ${URING_PID:-} ]] || return 0
	stop_bounded "$URING_PID"
	local rc=$?
	URING_PID=
	return "$rc"
}

counter() { sed -n "s/.*stopped:.* $1=\([0-9]*\).*/\1/p" "$LOG"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$URING_PID/status"; }

# spare_ok NAME ARGS...: bench against the spare port, no sample may fail.
spare_ok() {
	local name=$1 out
	shift
	out=$(bounded 240 "$BENCH" -p "$SPARE_PORT" -q -o /dev/null "$@")
	ok $? "$name: exit 0"
	is "$(field "$out" failed)" 0 "$name: failed=0"
}

# The features this kernel should give (uring-echo-server's start line
# names them): all but the minimum wait before 6.12.
kernel_features() {
	local v major minor
	v=$(uname -r)
	major=${v%%.*}
	minor=${v#*.}
	minor=${minor%%[!0-9]*}
	if ((major > 6 || (major == 6 && minor >= 12))); then
		echo ring-fd,direct,batch-return,min-wait
	else
		echo ring-fd,direct,batch-return
	fi
}
start_field() { sed -n "s/.*listening on.* $1=\([^ )]*\).*/\1/p" "$LOG"; }

features=(ring-fd direct batch-return min-wait all)
plan $((33 + 4 + 9 * (${#features[@]} + 1) + 4))

# TCP_NODELAY, set on the listener only (accepted direct descriptors have
# no descriptor to set it on), reaches every connection when the kernel
# copies it into the accepted socket. This kernel does, and only then:
out=$(bounded 20 "$PROBE" nodelay "$SPARE_PORT")
is "$out" "nodelay with=1 without=0" "uring/nodelay: this kernel's accepted sockets inherit TCP_NODELAY from their listener"

start_uring
ok $? "uring/start: serves on port $SPARE_PORT"
spare_ok "uring/10000-sequential" -t 1 -r 1 -m 10000
spare_ok "uring/2000-clients" -t 2000 -r 2 -T 20000
spare_ok "uring/10000-clients" -t 10000 -r 1 -T 30000

# No descriptor leaks: 5 x 1000 x 10 connections opened and closed, then
# as many descriptors open in the server as before.
fds() { find "/proc/$URING_PID/fd" -mindepth 1 | wc -l; }
fd0=$(fds)
for i in 1 2 3 4 5; do
	out=$(bounded 180 "$BENCH" -p "$SPARE_PORT" -t 1000 -r 10 -q -o /dev/null)
	is "$(field "$out" samples)/$(field "$out" failed)" 10000/0 "uring/fd-leak: 1000 x 10, run $i of 5: 10000 samples, 0 failed"
done
for ((i = 0; i < 50; i++)); do
	(($(fds) <= fd0)) && break
	sleep 0.1
done
is "$(fds)" "$fd0" "uring/fd-leak: as many descriptors open after 50,000 connections as before"
diag "uring/fd-leak: $fd0 descriptors open before"

# Fairness: 50 connections for 5 s; none gets less than half the median.
raw=$(mktemp)
bounded 60 "$BENCH" -p "$SPARE_PORT" -t 50 -d 5 -q -o "$raw" >/dev/null
read -r least median < <(awk -F'\t' '!/^#/ && $NF == "ok" { n[$1]++ }
	END { for (t in n) print n[t] }' "$raw" | sort -n |
	awk '{ v[NR] = $1 } END { print v[1], v[int((NR + 1) / 2)] }')
((least * 2 >= median && median > 0))
ok $? "uring/fairness: 50 connections, the least served got at least half the median"
diag "uring/fairness: the least served got $least requests, the median $median"
rm -f "$raw"

# A client that sends 64 MiB and never reads: it is stopped by TCP, and
# the server holds no more than its buffers.
rss0=$(rss_kib)
out=$(bounded 60 "$PROBE" fill "$SPARE_PORT" $((64 << 20)))
sent=$(sed -n 's/.*accepted=\([0-9]*\).*/\1/p' <<<"$out")
((sent > 0 && sent < 32 << 20))
ok $? "uring/never-reads: TCP stopped the sender below 32 MiB (of 64 MiB)"
diag "uring/never-reads: TCP stopped the sender at $sent bytes"
rss1=$(rss_kib)
((rss1 - rss0 < 8192))
ok $? "uring/never-reads: server RSS grew < 8 MiB (its buffer ring)"
diag "uring/never-reads: server RSS grew $((rss1 - rss0)) KiB"
spare_ok "uring/never-reads: still serving" -t 10 -r 2
stop_uring
is $? 0 "uring/stop: clean exit on SIGTERM"
is "$(counter open)" 0 "uring/stop: no connection left open"
diag "uring/stop: $(grep stopped: "$LOG")"

# The buffer ring runs dry: 200 clients send 64 KiB at once into 64
# buffers of 4 KiB. Every byte comes back, nothing stalls.
start_uring --buffers 64 --conn-buffers 8
ok $? "uring/dry-ring: start with 64 buffers"
spare_ok "uring/dry-ring: 200 x 64 KiB at once" -t 200 -r 3 -s 65536
stop_uring
is $? 0 "uring/dry-ring: clean exit"
c=$(counter enobufs)
((${c:-0} > 0))
ok $? "uring/dry-ring: the ring did run dry and every echo came back"
diag "uring/dry-ring: enobufs=${c:-none}"
((${c:-0} > 0)) || diag "$(cat "$LOG")"

# Every feature this kernel has, each one switched off in turn, and all of
# them: each path serves, batches or not as it says, and stops clean.
for off in none "${features[@]}"; do
	args=()
	[[ $off == none ]] || args=(--disable "$off")
	want=$(kernel_features)
	case $off in
	none) ;;
	all) want=none ;;
	*) want=$(tr , '\n' <<<"$want" | grep -vxF "$off" | paste -sd,) ;;
	esac
	start_uring "${args[@]}"
	ok $? "uring/features-$off: start"
	is "$(start_field features)" "$want" "uring/features-$off: the start line names what this kernel and the flags allow: $want"
	spare_ok "uring/features-$off: 100 x 5 x 4 KiB" -t 100 -r 5 -s 4096
	spare_ok "uring/features-$off: 50 connections for 2 s" -t 50 -d 2
	stop_uring
	is $? 0 "uring/features-$off: clean exit"
	is "$(counter open)" 0 "uring/features-$off: no connection left open"
	# The batched wait is taken under load exactly when it is on.
	c=$(counter batch_waits)
	minwait=off
	[[ $want != *min-wait* ]] || minwait=on
	if [[ $minwait == on ]]; then ((${c:-0} > 0)); else ((${c:-1} == 0)); fi
	ok $? "uring/features-$off: batched waits ${c:-none}, as min-wait is $minwait"
	[[ $off != none ]] || diag "uring/features: $(grep 'listening on' "$LOG")"
done

# The default listener has TCP_NODELAY (for its accepted sockets to
# inherit, above).
start_uring
ok $? "uring/nodelay: start"
fd=$(_tool ss -Htlnp "sport = :$SPARE_PORT" | sed -n 's/.*pid=[0-9]*,fd=\([0-9]*\).*/\1/p' | head -1)
is "$(bounded 10 "$PROBE" nodelay-of "$URING_PID" "${fd:-0}")" nodelay=1 "uring/nodelay: the listener has TCP_NODELAY"
stop_uring
is $? 0 "uring/nodelay: clean exit"

# Direct descriptors go back to the table: with a table of 256 (it is as
# large as the descriptor limit), 2000 connections, 50 at a time, are all
# served; a slot kept after a close would stop accepts after 256.
# shellcheck disable=SC2317 # spare_start runs it, as the server
limited() {
	ulimit -n 256 || exit 1
	exec "$SERVER" "$@"
}
URING_CMD=limited start_uring
ok $? "uring/direct-slots: start with a descriptor limit of 256"
is "$(start_field features | grep -o direct)" direct "uring/direct-slots: direct descriptors in use"
spare_ok "uring/direct-slots: 2000 connections through 256 slots" -t 50 -r 40
stop_uring

start_uring -w 2
ok $? "uring/workers-2: start"
is "$(count_of LISTEN listeners "$SPARE_PORT")" 2 "uring/workers-2: two listeners"
spare_ok "uring/workers-2" -t 200 -r 2
stop_uring

start_uring --sqpoll
ok $? "uring/sqpoll: start"
spare_ok "uring/sqpoll" -t 100 -r 2 -s 4096
stop_uring
is $? 0 "uring/sqpoll: clean exit"

done_testing
