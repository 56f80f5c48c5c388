#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What only the epoll server does (the contract every server keeps is
# tests/contract.t): an interrupted bench, long connections, -w 2, a
# server that never answers, running out of descriptors, sysctls restored.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="interrupted 1MiB-x8 keep-connection duration half-close
	restart-after-kill-9 stop workers-2 bad-flags busy-port mute-server emfile"
select_cases "$@"
root_or_bail_out

SERVER=$ECHOLAB_ROOT/user-echo/user-echo-server
trap stop_all EXIT

# user_running: a user server on $PORT, started by run.sh if none is.
user_running() {
	[[ $(state server) == user ]] && default_running && return 0
	"$RUN" user >/dev/null
}

# established_at_least N: N connections to the port established, at least.
established_at_least() {
	local n
	n=$(count_of '^ESTAB' connections "$PORT") && ((n >= $1))
}

# Ctrl-C mid-run: bench stops soon and keeps every finished sample.
test_interrupted() {
	local raw bpid start rc elapsed_ms rows
	user_running
	raw=$(mktemp)
	"$BENCH" -p "$PORT" -t 100 -r 100000 -q -o "$raw" >"$raw.out" &
	bpid=$!
	sleep 1
	kill -INT "$bpid"
	start=$(_now_us)
	wait_until 10 pid_gone "$bpid"
	kill -KILL "$bpid" 2>/dev/null	# bounded: never wait forever
	wait "$bpid"
	rc=$?
	elapsed_ms=$((($(_now_us) - start) / 1000))
	((elapsed_ms < 3000))
	ok $? "bench stops within 3 s of SIGINT"
	diag "interrupted: bench stopped ${elapsed_ms} ms after SIGINT"
	is "$rc" 0 "exit 0, no sample failed"
	rows=$(grep -vc '^#' "$raw")
	is "$(field "$(cat "$raw.out")" samples)" "$rows" "summary counts every row written"
	diag "interrupted: $rows rows written"
	((rows > 100))
	ok $? "samples were written"
	grep -q '^# interrupted=1' "$raw"
	ok $? "the file says the run was interrupted"
	rm -f "$raw" "$raw.out"
}

test_1MiB_x8() {
	user_running
	bench_ok "1MiB-x8" -t 8 -r 2 -s 1048576
}

test_keep_connection() {
	user_running
	bench_ok "keep-connection" -t 4 -m 2000
}

test_duration() {
	local out
	user_running
	out=$(bounded 30 "$BENCH" -p "$PORT" -q -o /dev/null -t 4 -d 2)
	is "$(field "$out" failed)" 0 "failed=0"
	like "$(field "$out" samples)" '^[1-9][0-9]{2,}$' "hundreds of samples or more"
}

test_half_close() {
	user_running
	bounded 60 "$PROBE" halfclose "$PORT" 1
	ok $? "1 byte echoed, then EOF"
}

# A crash with idle connections open must not keep the port.
test_restart_after_kill_9() {
	user_running
	"$PROBE" hold "$PORT" 20 3 >/dev/null &
	PIDS+=($!)
	wait_until 5 established_at_least 20
	kill -9 "$(server_pid)"
	"$RUN" user >/dev/null
	ok $? "binds at once with 20 connections of the dead one open"
	bench_ok "restart-after-kill-9: serves" -t 10 -r 1
}

test_stop() {
	local syn_before
	"$RUN" stop >/dev/null 2>&1
	syn_before=$(sysctl -n net.ipv4.tcp_max_syn_backlog)
	user_running
	"$RUN" stop >/dev/null
	ok $? "exit 0"
	[[ ! -e $STATE_DIR ]]
	ok $? "state removed"
	is "$(sysctl -n net.ipv4.tcp_max_syn_backlog)" "$syn_before" "tcp_max_syn_backlog restored"
}

# Two workers: two SO_REUSEPORT listeners sharing the port.
test_workers_2() {
	"$RUN" user -- -w 2 >/dev/null
	ok $? "start"
	is "$(count_of LISTEN listeners "$PORT")" 2 "two listeners"
	bench_ok "workers-2" -t 200 -r 2
	"$RUN" stop >/dev/null
}

# Bad flags beyond the contract's: short forms and ranges.
test_bad_flags() {
	local args out
	for args in "-w 0" "--workers 9999" "-p 70000" "-b x"; do
		# shellcheck disable=SC2086 # word splitting is the point
		out=$("$SERVER" $args 2>&1)
		is $? 2 "'$args' exits 2"
	done
	like "$out" "user-echo-server: .*Try" "says why and points to --help"
}

# mute_on_port: a client that holds the port and never answers.
mute_on_port() {
	"$RUN" stop >/dev/null 2>&1
	"$PROBE" mute "$PORT" 30 >/dev/null &
	PIDS+=($!)
	wait_until 3 port_taken "$PORT"
}

mute_off() {
	kill "${PIDS[@]}" 2>/dev/null
	wait 2>/dev/null
	PIDS=()
}

# A busy port, met by the server itself (run.sh checks before: contract).
test_busy_port() {
	local out
	mute_on_port
	out=$("$SERVER" -p "$PORT" 2>&1)
	is $? 1 "server exits 1"
	like "$out" "port $PORT.*Address already in use" "server names the port and the cause"
	mute_off
}

# A server that never answers: bench fails within its timeout, no hang.
test_mute_server() {
	local start out rc elapsed_ms
	mute_on_port
	start=$(_now_us)
	out=$(bounded 30 "$BENCH" -p "$PORT" -t 20 -r 1 -T 1000 -q -o /dev/null)
	rc=$?
	elapsed_ms=$((($(_now_us) - start) / 1000))
	is "$rc" 1 "bench exits 1"
	is "$(field "$out" failed)" 20 "all 20 samples failed"
	((elapsed_ms >= 1000 && elapsed_ms < 5000))
	ok $? "ends within its bound (timeout 1000 ms)"
	diag "mute-server: bench ended after ${elapsed_ms} ms"
	mute_off
}

# Out of descriptors: the server pauses accepting, every client is served.
test_emfile() {
	local log out
	log=$(mktemp)
	(ulimit -n 40 && exec "$SERVER" -p "$SPARE_PORT") 2>"$log" &
	PIDS+=($!)
	wait_until 5 port_taken "$SPARE_PORT"
	# 20 rounds each: the 200 connections stay open long enough to be over
	# the 40 descriptors at once, however fast the first ones are served
	out=$(bounded 60 "$BENCH" -p "$SPARE_PORT" -t 200 -r 20 -q -o /dev/null)
	is "$(field "$out" failed)" 0 "200 clients with 40 descriptors, failed=0"
	grep -q "pausing accepts" "$log"
	ok $? "the server paused accepting"
	# Bounded: a server that ignores SIGTERM is killed after 10 s and fails
	# this case, it does not hang the file.
	stop_bounded "${PIDS[0]}"
	is $? 0 "clean exit on SIGTERM"
	PIDS=()
	rm -f "$log"
}

run_tests
plan_at_end
