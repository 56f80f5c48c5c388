#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --busy-poll USEC, in both userspace servers: bad values exit 2; after a
# completion the worker keeps its CPU busy polling for the next (so it
# does poll), and USEC later it sleeps again, so that a server whose
# connected client is quiet uses under 1% of a CPU; echoes still work;
# the counters say how many polls found nothing. Each server runs by hand
# on the spare port. Cases:
#   user    user-echo-server: bad values, the polling and its budget, echoes
#           while polling, a clean stop, empty_polls counted
#   uring   the same of uring-echo-server (skipped where io_uring is not)
#   off     without --busy-poll no poll ever (empty_polls=0; user only:
#           the helper is shared)
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="user uring off"
select_cases "$@"
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

# polls SERVER: the 13 results of one server with --busy-poll.
polls() {
	local s=$1 bin bad reply t0 t1 spin_ms quiet_us out
	bin=$(server_binary "$s")
	for bad in 0 x -5 1000001; do
		bounded 10 "$bin" -p "$SPARE_PORT" --busy-poll "$bad" >/dev/null 2>"$LOG"
		is $? 2 "--busy-poll '$bad' exits 2"
	done
	grep -q -- '--busy-poll' "$LOG"
	ok $? "the message names --busy-poll"

	start "$s" --busy-poll "$BUDGET_US"
	ok $? "starts with --busy-poll $BUDGET_US"
	grep -q "busy_poll_us=$BUDGET_US" "$LOG"
	ok $? "the start line says busy_poll_us=$BUDGET_US"
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
	ok $? "within the budget after a completion it polls (at least 30 ms of CPU in 100 ms)"
	diag "$s: ${spin_ms} ms of CPU in the 100 ms after an echo"
	[[ $reply == x ]]
	ok $? "the echo came back"
	# The budget running out is what is tested: wait it out, then measure.
	sleep "$(awk -v us="$BUDGET_US" 'BEGIN { print us / 1e6 + 0.2 }')"
	t0=$(cpu_ns "$PID")
	sleep 2
	t1=$(cpu_ns "$PID")
	quiet_us=$(((t1 - t0) / 1000))
	((quiet_us < 20000))
	ok $? "quiet client, budget over: under 1% of a CPU"
	diag "$s: ${quiet_us} us of CPU in 2 s with a quiet client"
	exec 3<&- 3>&-
	out=$(bounded 60 "$BENCH" -p "$SPARE_PORT" -t 4 -r 200 -q -o /dev/null)
	is "$(field "$out" failed)" 0 "4 x 200 echoes with busy polling: failed=0"
	stop
	ok $? "clean stop"
	(($(counter empty_polls) > 0))
	ok $? "polls that found nothing are counted (empty_polls > 0)"
	diag "$s: empty_polls=$(counter empty_polls)"
}

test_user() { polls user; }

test_uring() {
	local lacks i
	lacks=$(platform_lacks uring)
	if [[ -n $lacks ]]; then
		for ((i = 1; i <= 13; i++)); do skip "case $i of 13" "$lacks"; done
		return
	fi
	polls uring
}

# Off by default: no poll ever (one server is enough: the helper is shared).
test_off() {
	local reply
	start user
	ok $? "user starts without --busy-poll"
	exec 3<>"/dev/tcp/127.0.0.1/$SPARE_PORT"
	printf x >&3
	read -r -n 1 -t 5 reply <&3
	exec 3<&- 3>&-
	stop
	is "$(counter empty_polls)" 0 "no polling without --busy-poll (empty_polls=0)"
}

run_tests
plan_at_end
