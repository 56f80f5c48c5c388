#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What only the io_uring server does (the contract every server keeps is
# tests/contract.t): long connections, thousands of clients, no descriptor
# left after 50,000 connections, a buffer ring run dry, fairness between
# connections, a client that never reads, -w 2 and --sqpoll; the newer
# io_uring features where this kernel has them, each one's older path
# (--disable), and direct descriptors that are given back. The server runs
# by hand on the spare port, so that its last words (its counters) can be
# read. Cases:
#   nodelay-inherited  this kernel's accepted sockets inherit TCP_NODELAY
#                      from their listener (the probe; no server)
#   start              the server starts and serves
#   10000-sequential   10,000 messages on one connection
#   2000-clients       2,000 clients at once
#   10000-clients      10,000 clients at once
#   fd-leak            as many descriptors open after 50,000 connections
#                      (20,000 in the guest)
#   fairness           50 connections for 5 s: none under half the median
#   never-reads        a client that never reads: stopped by TCP, RSS within its ring
#   stop               clean exit on SIGTERM, no connection left open
#   dry-ring           64 buffers for 200 x 64 KiB: the ring runs dry, every
#                      echo comes back
#   features-none, features-ring-fd, features-direct,
#   features-batch-return, features-min-wait, features-all
#                      --min-wait 50 (batched waits asked for), each feature
#                      off in turn (none: all on; all: all off): the start
#                      line's features, load, a clean exit, the batched
#                      waits taken exactly when min-wait is on
#   defaults           without flags: no batched wait (min-wait off, none
#                      taken under load), the buffers one L2 cache holds
#   nodelay            the server's listener has TCP_NODELAY
#   direct-slots       2,000 connections through a table of 256 direct
#                      descriptors (a slot kept after a close stops accepts)
#   workers-2          -w 2: two listeners, both serve
#   sqpoll             --sqpoll serves and exits clean
# The cases from start to stop share one server with the default flags:
# each starts it when none runs (the result 'serves on port ...').
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="nodelay-inherited start 10000-sequential 2000-clients 10000-clients
	fd-leak fairness never-reads stop dry-ring features-none features-ring-fd
	features-direct features-batch-return features-min-wait features-all
	defaults nodelay direct-slots workers-2 sqpoll"
select_cases "$@"
root_or_bail_out

SERVER=$(server_binary uring)
LOG=$(mktemp)
URING_PID=
URING_ARGS=
SOMAXCONN_WAS=	# 10000-clients raises it; restored however the file ends
trap 'stop_uring; rm -f "$LOG"; [[ -z $SOMAXCONN_WAS ]] || sysctl -qw net.core.somaxconn="$SOMAXCONN_WAS"' EXIT

# Skipped only for a platform fact the test detects itself; a server that
# run.sh refuses where the facts say it runs fails its start below.
lacks=$(platform_lacks uring)
[[ -z $lacks ]] || skip_all "$lacks"

# start_uring ARGS...: the server on the spare port, ready when it echoes;
# any server of this file's stopped first.
start_uring() {
	local rc=0
	stop_uring
	spare_start "$LOG" "${URING_CMD:-$SERVER}" "$@" || rc=$?
	URING_PID=$SPARE_PID
	URING_ARGS="${URING_CMD:-}${*:+ $*}"
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

# uring_running: a server with the default flags on the spare port: the
# one running, else started and that told.
uring_running() {
	[[ -n $URING_PID && -z $URING_ARGS ]] && ! pid_gone "$URING_PID" && return 0
	start_uring
	ok $? "serves on port $SPARE_PORT"
}

counter() { sed -n "s/.*stopped:.* $1=\([0-9]*\).*/\1/p" "$LOG"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$URING_PID/status"; }
fds() { find "/proc/$URING_PID/fd" -mindepth 1 | wc -l; }
# fds_at_most N: the server has N descriptors open or fewer (wait_until).
fds_at_most() { (($(fds) <= $1)); }

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

# TCP_NODELAY, set on the listener only (accepted direct descriptors have
# no descriptor to set it on), reaches every connection when the kernel
# copies it into the accepted socket. This kernel does, and only then:
test_nodelay_inherited() {
	local out
	stop_uring	# the probe listens on the spare port
	out=$(bounded 20 "$PROBE" nodelay "$SPARE_PORT")
	is "$out" "nodelay with=1 without=0" "this kernel's accepted sockets inherit TCP_NODELAY from their listener"
}

test_start() {
	stop_uring
	uring_running
}

test_10000_sequential() {
	uring_running
	spare_ok "10000-sequential" -t 1 -r 1 -m 10000
}

test_2000_clients() {
	uring_running
	spare_ok "2000-clients" -t 2000 -r 2 -T 20000
}

# 10,000 SYNs at once: the listener holds them all. Behind a 4096-deep
# accept queue, on the guest's TCG, some handshakes waited in SYN_RECV
# until the kernel pruned them, and their clients failed (CI, 6.1: 61 of
# 10,000; scale.t saw the same of kecho).
test_10000_clients() {
	SOMAXCONN_WAS=$(sysctl -n net.core.somaxconn)
	sysctl -qw net.core.somaxconn=16384
	start_uring --backlog 16384
	ok $? "10000-clients: start with --backlog 16384"
	spare_ok "10000-clients" -t 10000 -r 1 -T 30000
	stop_uring
	sysctl -qw net.core.somaxconn="$SOMAXCONN_WAS"
	SOMAXCONN_WAS=
}

# No descriptor leaks: 5 x 1000 x 10 connections opened and closed, then
# as many descriptors open in the server as before.
test_fd_leak() {
	local fd0 i out raw timeout=() runs=5
	uring_running
	fd0=$(fds)
	# Under the guest's TCG a busy host stalls it for seconds now and then.
	# One request of 10,000 failed there (CI, 6.1, 2026-11-26) and the
	# server counted one reset, which is how bench leaves a connection
	# whose echo missed its 5 s. This checks descriptors, not time: 30 s
	# in the guest, and a failure prints its status. Two runs there, not
	# five (67 s on 6.1 on a busy host, 2026-11-28): what the guest adds
	# is 6.1's older paths, and a leak of one descriptor in a thousand
	# shows as 20 more.
	if [[ ${ECHOLAB_WHERE:-} == vm ]]; then
		timeout=(-T 30000)
		runs=2
	fi
	raw=$(mktemp)
	for ((i = 1; i <= runs; i++)); do
		out=$(bounded 180 "$BENCH" -p "$SPARE_PORT" -t 1000 -r 10 "${timeout[@]}" -q -o "$raw")
		is "$(field "$out" samples)/$(field "$out" failed)" 10000/0 "1000 x 10, run $i of $runs: 10000 samples, 0 failed" ||
			failed_statuses "$raw"
	done
	rm -f "$raw"
	wait_until 5 fds_at_most "$fd0"
	is "$(fds)" "$fd0" "as many descriptors open after $((runs * 10000)) connections as before"
	diag "fd-leak: $fd0 descriptors open before"
}

# Fairness: 50 connections for 5 s; none gets less than half the median.
test_fairness() {
	local raw least median
	uring_running
	raw=$(mktemp)
	bounded 60 "$BENCH" -p "$SPARE_PORT" -t 50 -d 5 -q -o "$raw" >/dev/null
	read -r least median < <(awk -F'\t' '!/^#/ && $NF == "ok" { n[$1]++ }
		END { for (t in n) print n[t] }' "$raw" | sort -n |
		awk '{ v[NR] = $1 } END { print v[1], v[int((NR + 1) / 2)] }')
	((least * 2 >= median && median > 0))
	ok $? "50 connections, the least served got at least half the median"
	diag "fairness: the least served got $least requests, the median $median"
	rm -f "$raw"
}

# A client that sends 64 MiB and never reads: it is stopped by TCP, and
# the server holds no more than its buffers.
test_never_reads() {
	local rss0 rss1 out sent
	uring_running
	rss0=$(rss_kib)
	out=$(bounded 60 "$PROBE" fill "$SPARE_PORT" $((64 << 20)))
	sent=$(sed -n 's/.*accepted=\([0-9]*\).*/\1/p' <<<"$out")
	((sent > 0 && sent < 32 << 20))
	ok $? "TCP stopped the sender below 32 MiB (of 64 MiB)"
	diag "never-reads: TCP stopped the sender at $sent bytes"
	rss1=$(rss_kib)
	# Buffers are taken in ring order, so those it echoed before the
	# client's window closed touched up to the whole ring.
	((rss1 - rss0 < 17408))
	ok $? "server RSS grew < 17 MiB (its buffer ring: 256 x 64 KiB)"
	diag "never-reads: server RSS grew $((rss1 - rss0)) KiB"
	spare_ok "still serving" -t 10 -r 2
}

test_stop() {
	uring_running
	stop_uring
	is $? 0 "clean exit on SIGTERM"
	is "$(counter open)" 0 "no connection left open"
	diag "stop: $(grep stopped: "$LOG")"
}

# The buffer ring runs dry: 200 clients send 64 KiB at once into 64
# buffers of 4 KiB. Every byte comes back, nothing stalls.
test_dry_ring() {
	local c
	start_uring --buffers 64 --buffer-size 4096 --conn-buffers 8
	ok $? "start with 64 buffers"
	spare_ok "200 x 64 KiB at once" -t 200 -r 3 -s 65536
	stop_uring
	is $? 0 "clean exit"
	c=$(counter enobufs)
	((${c:-0} > 0))
	ok $? "the ring did run dry and every echo came back"
	diag "dry-ring: enobufs=${c:-none}"
	((${c:-0} > 0)) || diag "$(cat "$LOG")"
}

# features OFF: the server with batched waits asked for (--min-wait) and
# feature OFF switched off (none: every feature this kernel has; all: none
# of them): it serves, batches or not as it says, and stops clean.
features() {
	local off=$1 args=(--min-wait 50) want c minwait
	[[ $off == none ]] || args+=(--disable "$off")
	want=$(kernel_features)
	case $off in
	none) ;;
	all) want=none ;;
	*) want=$(tr , '\n' <<<"$want" | grep -vxF "$off" | paste -sd,) ;;
	esac
	start_uring "${args[@]}"
	ok $? "start"
	is "$(start_field features)" "$want" "the start line names what this kernel and the flags allow: $want"
	spare_ok "100 x 5 x 4 KiB" -t 100 -r 5 -s 4096
	spare_ok "50 connections for 2 s" -t 50 -d 2
	stop_uring
	is $? 0 "clean exit"
	is "$(counter open)" 0 "no connection left open"
	# The batched wait is taken under load exactly when it is on.
	c=$(counter batch_waits)
	minwait=off
	[[ $want != *min-wait* ]] || minwait=on
	if [[ $minwait == on ]]; then ((${c:-0} > 0)); else ((${c:-1} == 0)); fi
	ok $? "batched waits taken exactly as min-wait is $minwait"
	diag "features-$off: batch_waits=${c:-none}"
	[[ $off != none ]] || diag "features-none: $(grep 'listening on' "$LOG")"
}

test_features_none() { features none; }
test_features_ring_fd() { features ring-fd; }
test_features_direct() { features direct; }
test_features_batch_return() { features batch-return; }
test_features_min_wait() { features min-wait; }
test_features_all() { features all; }

# l2_buffers: the 64 KiB buffers CPU 0's L2 holds, as the server counts
# them (a power of two, 32 to 256: at least twice --conn-buffers' 16):
# its size from sysfs, else from the C library, else 1 MiB, as the
# server reads it.
l2_buffers() {
	local d size='' n=256
	for d in /sys/devices/system/cpu/cpu0/cache/index*; do
		[[ $(cat "$d/level" 2>/dev/null) == 2 && $(cat "$d/type") != Instruction ]] || continue
		size=$(cat "$d/size")
		case $size in
		*K) size=$((${size%K} * 1024)) ;;
		*M) size=$((${size%M} * 1048576)) ;;
		esac
		break
	done
	[[ -n $size ]] || size=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null)
	((${size:-0} > 0)) || size=1048576
	while ((n > 32 && n * 65536 > size)); do n=$((n / 2)); done
	echo "$n"
}

# Without flags: no batched wait (off by default: at equal load it cost
# more than it saved), and the buffers one core's L2 holds.
test_defaults() {
	local c want
	start_uring
	ok $? "start"
	[[ $(start_field features) != *min-wait* && $(start_field min_wait_us) == 0 ]]
	ok $? "the start line: no min-wait among the features, min_wait_us=0"
	want=$(l2_buffers)
	is "$(start_field buffers)" "${want}x65536" "as many 64 KiB buffers as CPU 0's L2 holds"
	spare_ok "50 connections for 2 s" -t 50 -d 2
	stop_uring
	is $? 0 "clean exit"
	c=$(counter batch_waits)
	is "${c:-none}" 0 "no batched wait taken under load"
}

# The default listener has TCP_NODELAY (for its accepted sockets to
# inherit: nodelay-inherited).
test_nodelay() {
	local fd
	start_uring
	ok $? "start"
	fd=$(_tool ss -Htlnp "sport = :$SPARE_PORT" | sed -n 's/.*pid=[0-9]*,fd=\([0-9]*\).*/\1/p' | head -1)
	is "$(bounded 10 "$PROBE" nodelay-of "$URING_PID" "${fd:-0}")" nodelay=1 "the listener has TCP_NODELAY"
	stop_uring
	is $? 0 "clean exit"
}

# Direct descriptors go back to the table: with a table of 256 (it is as
# large as the descriptor limit), 2000 connections, 50 at a time, are all
# served; a slot kept after a close would stop accepts after 256.
# shellcheck disable=SC2317 # spare_start runs it, as the server
limited() {
	ulimit -n 256 || exit 1
	exec "$SERVER" "$@"
}
test_direct_slots() {
	URING_CMD=limited start_uring
	ok $? "start with a descriptor limit of 256"
	is "$(start_field features | grep -o direct)" direct "direct descriptors in use"
	spare_ok "2000 connections through 256 slots" -t 50 -r 40
	stop_uring
}

test_workers_2() {
	start_uring -w 2
	ok $? "start"
	is "$(count_of LISTEN listeners "$SPARE_PORT")" 2 "two listeners"
	spare_ok "workers-2" -t 200 -r 2
	stop_uring
}

test_sqpoll() {
	start_uring --sqpoll
	ok $? "start"
	spare_ok "sqpoll" -t 100 -r 2 -s 4096
	stop_uring
	is $? 0 "clean exit"
}

run_tests
plan_at_end
