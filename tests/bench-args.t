#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench rejects bad usage with a message and exit status 2, and says up
# front when --threads needs more descriptors than it may open. No root,
# no server. Its cases:
#   one bad usage each: exit 2, and stderr's first line says why (the
#   flag and what is wrong with it): unknown-flag zero-threads
#   not-a-number negative-rounds missing-value port-out-of-range bad-label
#   duration-with-rounds stray-argument unknown-host bad-cpu-list
#   absent-cpu bad-sched warmup-without-duration warmup-not-a-number
#   warmup-out-of-range bad-server-cpus absent-server-cpu
#   server-cpus-missing-value connections-without-duration
#   connections-with-messages more-threads-than-connections bad-arrivals
#   arrivals-without-rate seed-without-connections rate-over-connections
#   window-without-connections window-with-rate window-too-deep
#   taskset               under taskset -c 1 (bench pinned by its caller):
#                         --server-cpus 0 is taken, the server runs there;
#                         --cpus 0 is refused, naming the CPU bench may use
#   help                  --help: exit 0, every flag listed
#   too-many-threads      -t 500 under ulimit -n 100: refused, names the limit
#   too-many-connections  -c 500 under ulimit -n 100: refused, names the flag
#   refused               nothing listening on the spare port: every
#                         sample fails, exit 1, no hang
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="unknown-flag zero-threads not-a-number negative-rounds missing-value
	port-out-of-range bad-label duration-with-rounds stray-argument unknown-host
	bad-cpu-list absent-cpu bad-sched warmup-without-duration warmup-not-a-number
	warmup-out-of-range bad-server-cpus absent-server-cpu server-cpus-missing-value
	connections-without-duration connections-with-messages
	more-threads-than-connections bad-arrivals arrivals-without-rate
	seed-without-connections rate-over-connections
	window-without-connections window-with-rate window-too-deep taskset
	help too-many-threads too-many-connections refused"
select_cases "$@"

# expect_usage WHY ARGS...: exit 2, and stderr's first line is "bench: "
# and then the specific reason, the regex WHY. The output flag goes
# first, so a flag missing its value is the last word.
expect_usage() {
	local why=$1 out rc
	shift
	out=$("$BENCH" -o /dev/null "$@" 2>&1 >/dev/null)
	rc=$?
	is "$rc" 2 "exit 2"
	like "${out%%$'\n'*}" "^bench: $why" "says why"
}

test_unknown_flag() { expect_usage "unknown option '--no-such-flag'" --no-such-flag; }
test_zero_threads() { expect_usage "--threads: 0 is out of range" -t 0; }
test_not_a_number() { expect_usage "--threads: 'ten' is not a number" -t ten; }
test_negative_rounds() { expect_usage "--rounds: '-1' is not a number" -r -1; }
test_missing_value() { expect_usage "option '-s' needs a value" -s; }
test_port_out_of_range() { expect_usage "--port: 70000 is out of range" -p 70000; }
test_bad_label() { expect_usage "--label: 'a b' must be" -l "a b"; }
test_duration_with_rounds() { expect_usage "--duration cannot be combined with --rounds" -d 1 -r 5; }
test_stray_argument() { expect_usage "unexpected argument 'extra'" -t 1 extra; }
test_unknown_host() { expect_usage "--host: cannot resolve 'no.such.host.invalid'" -H no.such.host.invalid; }
test_bad_cpu_list() { expect_usage "--cpus: 'x' is not a CPU list" --cpus x; }
test_absent_cpu() { expect_usage "--cpus 1000: bench may not run on any of these CPUs \\(it may run on [0-9]" --cpus 1000; }
test_bad_sched() { expect_usage "--sched: 'fast' is not idle or normal" --sched fast; }
test_warmup_without_duration() { expect_usage "--warmup needs --duration" --warmup 1 -t 1; }
test_warmup_not_a_number() { expect_usage "--warmup: 'soon' is not a number" -d 2 --warmup soon; }
test_warmup_out_of_range() { expect_usage "--warmup: 90000 is out of range" -d 2 --warmup 90000; }
test_bad_server_cpus() { expect_usage "--server-cpus: '0-x' is not a CPU list" --server-cpus 0-x; }
test_absent_server_cpu() { expect_usage "--server-cpus 1000: none of these CPUs is online" --server-cpus 1000; }
test_server_cpus_missing_value() { expect_usage "option '--server-cpus' needs a value" --server-cpus; }
test_connections_without_duration() { expect_usage "--connections needs --duration" -c 10; }
test_connections_with_messages() { expect_usage "--connections keeps every connection" -c 10 -d 1 -m 5; }
test_more_threads_than_connections() { expect_usage "--threads 4 is more than --connections 2" -c 2 -t 4 -d 1; }
test_bad_arrivals() { expect_usage "--arrivals: 'bursty' is not poisson or uniform" -c 10 -d 1 -R 100 --arrivals bursty; }
test_arrivals_without_rate() { expect_usage "--arrivals and --seed need --rate" -c 10 -d 1 --arrivals uniform; }
test_seed_without_connections() { expect_usage "--arrivals and --seed shape the event engine" -t 10 -d 1 -R 100 --seed 3; }
test_rate_over_connections() { expect_usage "--rate 3000000 over 2 connections" -c 2 -d 1 -R 3000000; }
test_window_without_connections() { expect_usage "--window keeps bytes out on the event engine's connections" --window 65536 -t 1 -d 1; }
test_window_with_rate() { expect_usage "--window is a closed loop" -c 2 -d 1 -R 100 --window 65536; }
test_window_too_deep() { expect_usage "--window 1048576 of 1-byte messages is 1048576 messages out" -c 8 -d 1 -s 1 --window 1048576; }

# A caller that pins bench (taskset -c 1, as a by-hand measurement does)
# still names the server's CPU 0; the load threads' CPUs must be bench's.
# The refused port makes the accepted run end at once, exit 1.
test_taskset() {
	local out rc port=$SPARE_PORT
	if (($(nproc --all) < 2)); then
		skip "taskset: --server-cpus 0 taken" "one CPU"
		skip "taskset: --cpus 0 refused" "one CPU"
		return
	fi
	out=$(bounded 20 taskset -c 1 "$BENCH" -t 1 -r 1 -p "$port" -T 500 -q \
		--server-cpus 0 -o /dev/null 2>&1)
	rc=$?
	is "$rc" 1 "--server-cpus 0 taken under taskset -c 1: the run is made, and fails on the refused port" ||
		diag "$out"
	out=$(taskset -c 1 "$BENCH" -o /dev/null --cpus 0 2>&1 >/dev/null)
	rc=$?
	is "$rc" 2 "--cpus 0 under taskset -c 1: exit 2"
	like "${out%%$'\n'*}" "^bench: --cpus 0: bench may not run on any of these CPUs \(it may run on 1\)" \
		"says which CPUs bench may use"
}

test_help() {
	local out
	out=$("$BENCH" --help)
	is $? 0 "exit 0"
	like "$out" "--threads.*--rounds.*--messages.*--duration.*--warmup.*--rate.*--size.*--host.*--port.*--output.*--label.*--timeout.*--sched.*--cpus.*--server-cpus.*--quiet" \
		"lists every flag"
	like "$out" "--connections.*--arrivals.*--seed" \
		"lists the event engine's flags"
}

# More threads than RLIMIT_NOFILE allows: refused before anything starts.
test_too_many_threads() {
	local out rc
	out=$(ulimit -n 100 && "$BENCH" -t 500 -o /dev/null 2>&1)
	rc=$?
	is "$rc" 2 "exit 2"
	like "$out" "needs [0-9]+ open files.*RLIMIT_NOFILE" "names the limit"
}

# The event engine needs a descriptor per connection, not per thread.
test_too_many_connections() {
	local out rc
	out=$(ulimit -n 100 && "$BENCH" -c 500 -d 1 -o /dev/null 2>&1)
	rc=$?
	is "$rc" 2 "exit 2"
	like "$out" "--connections 500 needs [0-9]+ open files" "names the flag and the limit"
}

# Nothing listening: every sample fails (refused), exit 1, no hang.
test_refused() {
	local out port=$SPARE_PORT
	if port_free "$port"; then
		out=$(bounded 20 "$BENCH" -t 4 -r 2 -p "$port" -T 500 -q -o /dev/null)
		is $? 1 "exit 1"
		is "$(field "$out" failed)" 8 "all 8 samples failed"
	else
		# skip names its result as it is: the case's name goes in it
		skip "refused: exit 1" "port $port is in use"
		skip "refused: all 8 samples failed" "port $port is in use"
	fi
}

run_tests
plan_at_end
