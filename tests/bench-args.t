#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench rejects bad usage with a message and exit status 2, and says up
# front when --threads needs more descriptors than it may open.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# expect_usage NAME WHY ARGS...: exit 2, and stderr's first line is
# "bench: " and then the specific reason, the regex WHY. The output flag
# goes first, so a flag missing its value is the last word.
expect_usage() {
	local name=$1 why=$2 out rc
	shift 2
	out=$("$BENCH" -o /dev/null "$@" 2>&1 >/dev/null)
	rc=$?
	is "$rc" 2 "bench-args/$name: exit 2"
	like "${out%%$'\n'*}" "^bench: $why" "bench-args/$name: says why"
}

plan 61

expect_usage unknown-flag "unknown option '--no-such-flag'" --no-such-flag
expect_usage zero-threads "--threads: 0 is out of range" -t 0
expect_usage not-a-number "--threads: 'ten' is not a number" -t ten
expect_usage negative-rounds "--rounds: '-1' is not a number" -r -1
expect_usage missing-value "option '-s' needs a value" -s
expect_usage port-out-of-range "--port: 70000 is out of range" -p 70000
expect_usage bad-label "--label: 'a b' must be" -l "a b"
expect_usage duration-with-rounds "--duration cannot be combined with --rounds" -d 1 -r 5
expect_usage stray-argument "unexpected argument 'extra'" -t 1 extra
expect_usage unknown-host "--host: cannot resolve 'no.such.host.invalid'" -H no.such.host.invalid
expect_usage bad-cpu-list "--cpus: 'x' is not a CPU list" --cpus x
expect_usage absent-cpu "--cpus 1000: none of these CPUs is online" --cpus 1000
expect_usage bad-sched "--sched: 'fast' is not idle or normal" --sched fast
expect_usage warmup-without-duration "--warmup needs --duration" --warmup 1 -t 1
expect_usage warmup-not-a-number "--warmup: 'soon' is not a number" -d 2 --warmup soon
expect_usage warmup-out-of-range "--warmup: 90000 is out of range" -d 2 --warmup 90000
expect_usage bad-server-cpus "--server-cpus: '0-x' is not a CPU list" --server-cpus 0-x
expect_usage absent-server-cpu "--server-cpus 1000: none of these CPUs is online" --server-cpus 1000
expect_usage server-cpus-missing-value "option '--server-cpus' needs a value" --server-cpus
expect_usage connections-without-duration "--connections needs --duration" -c 10
expect_usage connections-with-messages "--connections keeps every connection" -c 10 -d 1 -m 5
expect_usage more-threads-than-connections "--threads 4 is more than --connections 2" -c 2 -t 4 -d 1
expect_usage bad-arrivals "--arrivals: 'bursty' is not poisson or uniform" -c 10 -d 1 -R 100 --arrivals bursty
expect_usage arrivals-without-rate "--arrivals and --seed need --rate" -c 10 -d 1 --arrivals uniform
expect_usage seed-without-connections "--arrivals and --seed shape the event engine" -t 10 -d 1 -R 100 --seed 3
expect_usage rate-over-connections "--rate 3000000 over 2 connections" -c 2 -d 1 -R 3000000

out=$("$BENCH" --help)
is $? 0 "bench-args/help: exit 0"
like "$out" "--threads.*--rounds.*--messages.*--duration.*--warmup.*--rate.*--size.*--host.*--port.*--output.*--label.*--timeout.*--sched.*--cpus.*--server-cpus.*--quiet" \
	"bench-args/help: lists every flag"
like "$out" "--connections.*--arrivals.*--seed" \
	"bench-args/help: lists the event engine's flags"

# More threads than RLIMIT_NOFILE allows: refused before anything starts.
out=$(ulimit -n 100 && "$BENCH" -t 500 -o /dev/null 2>&1)
rc=$?
is "$rc" 2 "bench-args/too-many-threads: exit 2"
like "$out" "needs [0-9]+ open files.*RLIMIT_NOFILE" "bench-args/too-many-threads: names the limit"

# The event engine needs a descriptor per connection, not per thread.
out=$(ulimit -n 100 && "$BENCH" -c 500 -d 1 -o /dev/null 2>&1)
rc=$?
is "$rc" 2 "bench-args/too-many-connections: exit 2"
like "$out" "--connections 500 needs [0-9]+ open files" "bench-args/too-many-connections: names the flag and the limit"

# Nothing listening: every sample fails (refused), exit 1, no hang.
port=$SPARE_PORT
if port_free "$port"; then
	out=$(bounded 20 "$BENCH" -t 4 -r 2 -p "$port" -T 500 -q -o /dev/null)
	is $? 1 "bench-args/refused: exit 1"
	is "$(field "$out" failed)" 8 "bench-args/refused: all 8 samples failed"
else
	skip "bench-args/refused: exit 1" "port $port is in use"
	skip "bench-args/refused: all 8 samples failed" "port $port is in use"
fi
done_testing
