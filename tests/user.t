#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What only the epoll server does (the contract every server keeps is
# tests/contract.t): an interrupted bench, long connections, -w 2, a
# server that never answers, running out of descriptors, sysctls restored.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

SERVER=$ROOT/user-echo/user-echo-server
trap stop_all EXIT

syn_before=$(sysctl -n net.ipv4.tcp_max_syn_backlog)
"$RUN" user >/dev/null
ok $? "user/start: run.sh user"
pid=$(server_pid)

# Ctrl-C mid-run: bench stops soon and keeps every finished sample.
raw=$(mktemp)
"$BENCH" -p "$PORT" -t 100 -r 100000 -q -o "$raw" >"$raw.out" &
bpid=$!
sleep 1
kill -INT "$bpid"
start=$(date +%s%N)
for ((i = 0; i < 100; i++)); do
	kill -0 "$bpid" 2>/dev/null || break
	sleep 0.1
done
kill -KILL "$bpid" 2>/dev/null	# bounded: never wait forever
wait "$bpid"
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
((elapsed_ms < 3000))
ok $? "user/interrupted: bench stops within 3 s of SIGINT"
diag "user/interrupted: bench stopped ${elapsed_ms} ms after SIGINT"
is "$rc" 0 "user/interrupted: exit 0, no sample failed"
rows=$(grep -vc '^#' "$raw")
is "$(field "$(cat "$raw.out")" samples)" "$rows" "user/interrupted: summary counts every row written"
diag "user/interrupted: $rows rows written"
((rows > 100))
ok $? "user/interrupted: samples were written"
grep -q '^# interrupted=1' "$raw"
ok $? "user/interrupted: the file says the run was interrupted"
rm -f "$raw" "$raw.out"

bench_ok "user/1MiB-x8" -t 8 -r 2 -s 1048576
bench_ok "user/keep-connection" -t 4 -m 2000
out=$(bounded 30 "$BENCH" -p "$PORT" -q -o /dev/null -t 4 -d 2)
is "$(field "$out" failed)" 0 "user/duration: failed=0"
like "$(field "$out" samples)" '^[1-9][0-9]{2,}$' "user/duration: hundreds of samples or more"

bounded 60 "$PROBE" halfclose "$PORT" 1
ok $? "user/half-close: 1 byte echoed, then EOF"

# A crash with idle connections open must not keep the port.
"$PROBE" hold "$PORT" 20 3 >/dev/null &
PIDS+=($!)
sleep 0.5
kill -9 "$pid"
"$RUN" user >/dev/null
ok $? "user/restart-after-kill-9: binds at once with 20 connections of the dead one open"
bench_ok "user/restart-after-kill-9: serves" -t 10 -r 1

"$RUN" stop >/dev/null
ok $? "user/stop: exit 0"
[[ ! -e $STATE_DIR ]]
ok $? "user/stop: state removed"
is "$(sysctl -n net.ipv4.tcp_max_syn_backlog)" "$syn_before" "user/stop: tcp_max_syn_backlog restored"

# Two workers: two SO_REUSEPORT listeners sharing the port.
"$RUN" user -- -w 2 >/dev/null
ok $? "user/workers-2: start"
is "$(count_of LISTEN listeners "$PORT")" 2 "user/workers-2: two listeners"
bench_ok "user/workers-2" -t 200 -r 2
"$RUN" stop >/dev/null

# Bad flags beyond the contract's: short forms and ranges.
for args in "-w 0" "--workers 9999" "-p 70000" "-b x"; do
	# shellcheck disable=SC2086 # word splitting is the point
	out=$("$SERVER" $args 2>&1)
	is $? 2 "user/bad-flags: '$args' exits 2"
done
like "$out" "user-echo-server: .*Try" "user/bad-flags: says why and points to --help"

# A busy port, met by the server itself (run.sh checks before: contract).
"$PROBE" mute "$PORT" 30 >/dev/null &
PIDS+=($!)
sleep 0.3
out=$("$SERVER" -p "$PORT" 2>&1)
is $? 1 "user/busy-port: server exits 1"
like "$out" "port $PORT.*Address already in use" "user/busy-port: server names the port and the cause"

# A server that never answers: bench fails within its timeout, no hang.
start=$(date +%s%N)
out=$(bounded 30 "$BENCH" -p "$PORT" -t 20 -r 1 -T 1000 -q -o /dev/null)
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
is "$rc" 1 "user/mute-server: bench exits 1"
is "$(field "$out" failed)" 20 "user/mute-server: all 20 samples failed"
((elapsed_ms >= 1000 && elapsed_ms < 5000))
ok $? "user/mute-server: ends within its bound (timeout 1000 ms)"
diag "user/mute-server: bench ended after ${elapsed_ms} ms"
kill "${PIDS[@]}" 2>/dev/null
wait 2>/dev/null
PIDS=()

# Out of descriptors: the server pauses accepting, every client is served.
log=$(mktemp)
(ulimit -n 40 && exec "$SERVER" -p "$SPARE_PORT") 2>"$log" &
PIDS+=($!)
for _ in $(seq 50); do port_free "$SPARE_PORT" || break; sleep 0.1; done
# 20 rounds each: the 200 connections stay open long enough to be over
# the 40 descriptors at once, however fast the first ones are served
out=$(bounded 60 "$BENCH" -p "$SPARE_PORT" -t 200 -r 20 -q -o /dev/null)
is "$(field "$out" failed)" 0 "user/emfile: 200 clients with 40 descriptors, failed=0"
grep -q "pausing accepts" "$log"
ok $? "user/emfile: the server paused accepting"
# Bounded: a server that ignores SIGTERM is killed after 10 s and fails
# this case, it does not hang the file.
stop_bounded "${PIDS[0]}"
is $? 0 "user/emfile: clean exit on SIGTERM"
PIDS=()
rm -f "$log"

plan_at_end
