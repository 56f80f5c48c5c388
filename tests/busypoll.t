#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --busy-poll USEC, in both userspace servers: bad values exit 2; after a
# completion the worker keeps its CPU busy polling for the next (so it
# does poll), and USEC later it sleeps again, so that a server whose
# connected client is quiet uses under 1% of a CPU; echoes still work;
# the counters say how many polls found nothing. Each server runs by hand
# on the spare port.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

LOG=$(mktemp)
PID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	exec 3<&- 3>&- 2>/dev/null
	[[ -z $PID ]] || stop_bounded "$PID"
	rm -f "$LOG"
}
trap cleanup EXIT

BUDGET_US=300000	# long enough to see the spin, short enough to wait out

# cpu_ns PID: CPU time of all of PID's threads so far, in nanoseconds
# (the scheduler's own accounting: /proc/PID/task/*/schedstat).
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%d\n", t }'
}

# start SERVER ARGS...: the server on the spare port, ready when it echoes.
start() {
	local rc=0
	spare_start "$LOG" "$(server_binary "$1")" "${@:2}" || rc=$?
	PID=$SPARE_PID
	return "$rc"
}

stop() {
	stop_bounded "$PID"
	local rc=$?
	PID=
	return "$rc"
}

counter() { sed -n "s/.*stopped:.* $1=\([0-9]*\).*/\1/p" "$LOG"; }

plan 28

servers=(user)
lacks=$(platform_lacks uring)
if [[ -z $lacks ]]; then
	servers+=(uring)
else
	for ((i = 1; i <= 13; i++)); do skip "busypoll/uring: case $i of 13" "$lacks"; done
fi

for s in user uring; do
	[[ " ${servers[*]} " == *" $s "* ]] || continue
	bin=$(server_binary "$s")
	for bad in 0 x -5 1000001; do
		bounded 10 "$bin" -p "$SPARE_PORT" --busy-poll "$bad" >/dev/null 2>"$LOG"
		is $? 2 "busypoll/$s: --busy-poll '$bad' exits 2"
	done
	grep -q -- '--busy-poll' "$LOG"
	ok $? "busypoll/$s: the message names --busy-poll"

	start "$s" --busy-poll "$BUDGET_US"
	ok $? "busypoll/$s: starts with --busy-poll $BUDGET_US"
	grep -q "busy_poll_us=$BUDGET_US" "$LOG"
	ok $? "busypoll/$s: the start line says busy_poll_us=$BUDGET_US"
	# One connected client, then quiet: one echo, the CPU right after it
	# (within the budget: the worker polls) and after the budget (asleep).
	exec 3<>"/dev/tcp/127.0.0.1/$SPARE_PORT"
	printf x >&3
	read -r -n 1 -t 5 reply <&3
	t0=$(cpu_ns "$PID")
	sleep 0.1
	t1=$(cpu_ns "$PID")
	spin_ms=$(((t1 - t0) / 1000000))
	((spin_ms >= 30))
	ok $? "busypoll/$s: within the budget after a completion it polls (${spin_ms} ms of CPU in 100 ms; at least 30)"
	[[ $reply == x ]]
	ok $? "busypoll/$s: the echo came back"
	sleep "$(awk -v us="$BUDGET_US" 'BEGIN { print us / 1e6 + 0.2 }')"
	t0=$(cpu_ns "$PID")
	sleep 2
	t1=$(cpu_ns "$PID")
	quiet_us=$(((t1 - t0) / 1000))
	((quiet_us < 20000))
	ok $? "busypoll/$s: quiet client, budget over: under 1% of a CPU (${quiet_us} us in 2 s)"
	exec 3<&- 3>&-
	out=$(bounded 60 "$BENCH" -p "$SPARE_PORT" -t 4 -r 200 -q -o /dev/null)
	is "$(field "$out" failed)" 0 "busypoll/$s: 4 x 200 echoes with busy polling: failed=0"
	stop
	ok $? "busypoll/$s: clean stop"
	(($(counter empty_polls) > 0))
	ok $? "busypoll/$s: polls that found nothing are counted (empty_polls=$(counter empty_polls))"
done

# Off by default: no poll ever (one server is enough: the helper is shared).
start user
ok $? "busypoll/off: user starts without --busy-poll"
exec 3<>"/dev/tcp/127.0.0.1/$SPARE_PORT"
printf x >&3
read -r -n 1 -t 5 reply <&3
exec 3<&- 3>&-
stop
is "$(counter empty_polls)" 0 "busypoll/off: no polling without --busy-poll (empty_polls=0)"
