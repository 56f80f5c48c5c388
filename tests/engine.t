#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench's event engine (--connections): many connections per thread, closed
# or open loop; the open loop holds its rate, shows a stalled server in
# full, and draws Poisson arrivals (a goodness-of-fit test, which uniform
# arrivals must fail); every echo is checked, a failing server is counted,
# and the raw file says what ran. Cases:
#   closed             -c 200 on one user server: every connection kept and
#                      named in the thread column, the file says what ran
#   1MiB-messages      1 MiB echoes on 4 connections, whole and exact
#   rate               -c 1000 -R 50000: the rate achieved within 2%
#   poisson            the gaps of -R 2000 pass Kolmogorov-Smirnov against
#                      the exponential at 1%
#   uniform            --arrivals uniform: its gaps fail that test
#   seed               one seed, one schedule; another seed, another
#   stall              a 310 ms SIGSTOP shows in the open loop's p99.9
#   killed             a server killed mid-run: failures, exit 1, in bound
#   nothing-listening  no server: exit 1, the samples say refused
#   stream-window      --window against a sink (tests/spin-echo sink: it
#                      reads, never echoes): each connection sends its
#                      window in whole messages, at least one, no byte more
#   stream             --window 4 MiB of 1 MiB messages through user: every
#                      echo whole and exact, the raw file's window= and
#                      depth=, the stream line's MiB/s and CPU per MiB
#   stream-wrong       one flipped byte in each connection's echo: exit 1,
#                      the message that holds it a mismatch, those before ok,
#                      stderr naming the byte (once)
#   stream-repeat      1,000 bytes of each connection's echo sent twice:
#                      bench says a repeat, of how many bytes, from where
#   stream-short       an echo that stops short (EOF): exit 1, the message
#                      cut short failed, the one before ok
# The cases that need a server start a user server when none runs (the
# result 'user started', in the case that started it) and share it.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="closed 1MiB-messages rate poisson uniform seed stall killed
	nothing-listening stream-window stream stream-wrong stream-repeat stream-short"
select_cases "$@"
root_or_bail_out

runs=$(mktemp -d)
export ECHOLAB_RUNS_DIR=$runs
# shellcheck disable=SC2317 # the EXIT trap
spin_pid=
cleanup() {
	[[ -z $spin_pid ]] || kill "$spin_pid" 2>/dev/null
	stop_all
	rm -rf "$runs"
}
trap cleanup EXIT

# column FILE NAME: one column of the ok rows, by the columns line's names.
column() {
	awk -F'\t' -v want="$2" '/^# columns=/ { sub(/^# columns=/, ""); n = split($0, c, "\t")
			for (i = 1; i <= n; i++) if (c[i] == want) k = i; next }
		/^#/ { next }
		$NF == "ok" { print $k }' "$1"
}

# ks_exponential FILE RATE: 'D n critical' of the Kolmogorov-Smirnov test
# of the gaps between the intended send times (sent_us - lag_us) against
# the exponential of RATE a second; status 0 when D is under the critical
# value at the 1% level (1.628 / sqrt(n)).
ks_exponential() {
	awk -F'\t' '/^# columns=/ { sub(/^# columns=/, ""); n = split($0, c, "\t")
			for (i = 1; i <= n; i++) col[c[i]] = i; next }
		/^#/ { next }
		$col["sent_us"] != "-" && $col["lag_us"] != "-" {
			printf "%.1f\n", $col["sent_us"] - $col["lag_us"] }' "$1" |
		sort -n |
		awk 'NR > 1 { print $1 - prev } { prev = $1 }' |
		sort -g |
		awk -v rate="$2" '{ x[NR] = $1 }
			END {
				n = NR; d = 0
				for (i = 1; i <= n; i++) {
					f = 1 - exp(-x[i] * rate / 1e6)
					if (i / n - f > d) d = i / n - f
					if (f - (i - 1) / n > d) d = f - (i - 1) / n
				}
				crit = 1.628 / sqrt(n)
				printf "%.4f %d %.4f\n", d, n, crit
				exit !(n > 100 && d < crit)
			}'
}

# user_running: a user server on $PORT, started by run.sh if none is, and
# then told.
user_running() {
	[[ $(state server) == user ]] && default_running && return 0
	"$RUN" user >/dev/null
	ok $? "user started"
}

# ---- closed loop ------------------------------------------------------------------

test_closed() {
	local raw out cpus
	user_running
	raw=$runs/closed.tsv
	out=$(bounded 30 "$BENCH" -p "$PORT" -c 200 -d 2 -q -o "$raw")
	ok $? "closed/-c 200 -d 2: exit 0"
	is "$(field "$out" failed)" 0 "failed=0"
	(($(field "$out" ok) > 1000))
	ok $? "over 1000 echoes in 2 s"
	diag "closed: $(field "$out" ok) echoes, $(field "$out" rps) req/s, client CPU $(field "$out" client_cpu_us_per_echo) us per echo"
	is "$(column "$raw" thread | sort -un | awk 'NR == 1 { lo = $1 } { hi = $1; n++ } END { print n, lo, hi }')" "200 0 199" \
		"the thread column holds the connection: all 200, 0..199"
	is "$(column "$raw" lag_us | sort -u)" "-" "no lag in a closed loop"
	is "$(sed -n 's/^# engine=//p; s/^# connections=//p' "$raw" | tr '\n' ' ')" "event 200 " \
		"the raw file says engine=event, connections=200"
	# run.sh gives the server the first half of the CPUs, rounded up: bench
	# takes the rest, a thread on each.
	cpus=$(($(nproc) / 2))
	is "$(sed -n 's/^# threads=//p' "$raw")" "$((cpus > 0 ? cpus : 1))" \
		"a load thread for each CPU bench may use ($((cpus > 0 ? cpus : 1)))"
	# Each connection's rounds stay 0: a connection is kept for the whole run.
	is "$(column "$raw" round | sort -u)" 0 "every connection kept for the run (round 0)"
}

# Messages larger than the socket buffers: sent and echoed in step.
test_1MiB_messages() {
	local out
	user_running
	out=$(bounded 60 "$BENCH" -p "$PORT" -c 4 -d 1 -s 1048576 -q -o "$runs/big.tsv")
	ok $? "1 MiB messages on 4 connections: exit 0"
	(($(field "$out" ok) >= 4 && $(field "$out" failed) == 0))
	ok $? "every echo whole and exact"
	diag "1MiB-messages: $(field "$out" ok) echoes"
}

# ---- open loop: the rate held ---------------------------------------------------------

test_rate() {
	local raw out rps
	user_running
	raw=$runs/rate.tsv
	out=$(bounded 60 "$BENCH" -p "$PORT" -c 1000 -R 50000 -d 3 --warmup 1 -q -o "$raw")
	ok $? "rate/-c 1000 -R 50000: exit 0"
	is "$(field "$out" failed)" 0 "failed=0"
	rps=$(field "$out" rps)
	awk -v r="$rps" 'BEGIN { exit !(r >= 49000 && r <= 51000) }'
	ok $? "50,000 msg/s offered over 1000 connections, achieved within 2%"
	diag "rate: $rps msg/s achieved; client CPU $(field "$out" client_cpu_us_per_echo) us per message, server $(field "$out" server_cpu_us_per_echo) us per echo"
	is "$(sed -n 's/^# arrivals=//p' "$raw")" poisson "the raw file says arrivals=poisson"
	like "$(sed -n 's/^# seed=//p' "$raw")" '^[0-9]+$' "the raw file records the seed"
}

# ---- open loop: Poisson arrivals ------------------------------------------------------

test_poisson() {
	local raw ks
	user_running
	raw=$runs/poisson.tsv
	bounded 30 "$BENCH" -p "$PORT" -c 100 -R 2000 -d 3 --seed 7 -q -o "$raw" >/dev/null
	ok $? "poisson/-R 2000 --seed 7: exit 0"
	ks=$(ks_exponential "$raw" 2000)
	ok $? "the gaps pass Kolmogorov-Smirnov against the exponential at 1%"
	diag "poisson: D n critical = $ks"
}

# The test can fail: even gaps are not exponential.
test_uniform() {
	local ks
	user_running
	bounded 30 "$BENCH" -p "$PORT" -c 100 -R 2000 -d 3 --arrivals uniform -q -o "$runs/uniform.tsv" >/dev/null
	ok $? "uniform/--arrivals uniform: exit 0"
	ks=$(ks_exponential "$runs/uniform.tsv" 2000)
	ok $((!$?)) "uniform gaps fail the Kolmogorov-Smirnov test of poisson"
	diag "uniform: D n critical = $ks"
}

# intended FILE: the first 500 intended send times (sent_us - lag_us) of
# the ok rows, by thread and round, to 0.1 ms.
intended() {
	awk -F'\t' '!/^#/ && $NF == "ok" { printf "%s %s %.0f\n", $1, $2, ($7 - $6) / 100 }' "$1" | sort | head -n 500
}

# The seed draws the schedule: the same seed, the same intended times.
test_seed() {
	local a b
	user_running
	bounded 30 "$BENCH" -p "$PORT" -c 100 -R 2000 -d 1 --seed 7 -q -o "$runs/seed-a.tsv" >/dev/null
	bounded 30 "$BENCH" -p "$PORT" -c 100 -R 2000 -d 1 --seed 7 -q -o "$runs/seed-b.tsv" >/dev/null
	a=$(intended "$runs/seed-a.tsv")
	b=$(intended "$runs/seed-b.tsv")
	[[ -n $a && $a == "$b" ]]
	ok $? "one seed, one schedule (500 intended times to 0.1 ms)"
	bounded 30 "$BENCH" -p "$PORT" -c 100 -R 2000 -d 1 --seed 8 -q -o "$runs/seed-c.tsv" >/dev/null
	[[ $(intended "$runs/seed-c.tsv") != "$a" ]]
	ok $? "another seed, another schedule"
}

# ---- open loop: a stalled server shows in full ------------------------------------------

# SIGSTOP 0.8 s into a 2 s run at 10,000 msg/s: every message due in the
# stall waits for its end, each timed from when it was due. The worst 0.1%
# are the 20 messages due in the stall's first 2 ms, which wait the stall
# less up to 2 ms: stopped for 310 ms, the p99.9 must be at least 300 ms.
test_stall() {
	local pid out p999
	user_running
	pid=$(server_pid)
	(sleep 0.8; kill -STOP "$pid"; sleep 0.31; kill -CONT "$pid") &
	out=$(bounded 30 "$BENCH" -p "$PORT" -c 1000 -R 10000 -d 2 -q -o "$runs/stall.tsv")
	wait
	p999=$(field "$out" p999_us)
	awk -v v="$p999" 'BEGIN { exit !(v >= 300000) }'
	ok $? "a 310 ms SIGSTOP shows at least 300 ms in the open loop's p99.9"
	diag "stall: p99.9 $p999 us, max $(field "$out" max_us) us, failed $(field "$out" failed)"
}

# ---- a server that goes away -------------------------------------------------------------

test_killed() {
	local pid start out status
	user_running
	pid=$(server_pid)
	(sleep 1; kill -9 "$pid") &
	start=$(date +%s)
	out=$(bounded 30 "$BENCH" -p "$PORT" -c 100 -R 5000 -d 3 -T 1000 -q -o "$runs/killed.tsv")
	status=$?
	wait
	is "$status" 1 "bench exits 1 when the server dies mid-run"
	(($(field "$out" failed) > 0 && $(field "$out" ok) > 0))
	ok $? "the echoes before are ok, the ones after counted as failed"
	(($(date +%s) - start <= 10))
	ok $? "bench ends within the run and its timeout (<= 10 s)"
	diag "killed: ok $(field "$out" ok), failed $(field "$out" failed), statuses $(awk -F'\t' '!/^#/ { print $NF }' "$runs/killed.tsv" | sort | uniq -c | tr -s ' \n' ' ')"
	"$RUN" stop >/dev/null 2>&1
}

test_nothing_listening() {
	"$RUN" stop >/dev/null 2>&1
	bounded 30 "$BENCH" -p "$PORT" -c 10 -d 1 -q -o "$runs/none.tsv" >/dev/null 2>&1
	is "$?" 1 "exit 1"
	is "$(awk -F'\t' '!/^#/ { print $NF }' "$runs/none.tsv" | sort -u | head -n1)" refused \
		"the samples say refused"
}

# ---- a stream, echoed (--window) ------------------------------------------------------

# spin_start FAULT...: tests/spin-echo on the spare port with FAULT (sink,
# flip OFFSET, short BYTES), its output in $runs/spin.out; false when it
# did not come up.
spin_start() {
	"$ECHOLAB_ROOT/tests/build/spin-echo" "$SPARE_PORT" 64 0 "$@" >"$runs/spin.out" &
	spin_pid=$!
	wait_until 5 grep -q ready "$runs/spin.out" && return 0
	ok 1 "spin-echo $* answers"
	spin_stop
	return 1
}

spin_stop() {
	[[ -n $spin_pid ]] || return 0
	kill "$spin_pid" 2>/dev/null
	wait "$spin_pid" 2>/dev/null
	spin_pid=
}

# window_sent WINDOW SIZE: bench keeps WINDOW of SIZE-byte messages out on
# 4 connections to a sink; prints the bytes the sink read from each.
window_sent() {
	bounded 30 "$BENCH" -p "$SPARE_PORT" -c 4 --window "$1" -s "$2" -d 1 -T 1000 -q 		-o "$runs/window.tsv" >/dev/null 2>&1
	sleep 0.2	# the sink prints as it sees each close
	sed -n 's/^closed bytes=//p' "$runs/spin.out" | sort -n | tr '\n' ' '
}

test_stream_window() {
	local got
	stop_all
	spin_start sink || return
	# 100,000 bytes of 16 KiB messages: 6 whole ones, 98,304 bytes, each
	# connection; nothing comes back, so nothing more may leave.
	got=$(window_sent 100000 16384)
	is "$got" "98304 98304 98304 98304 " "a 100,000-byte window of 16 KiB messages: 6 each, no byte more"
	spin_stop
	spin_start sink || return
	got=$(window_sent 1000 4096)
	is "$got" "4096 4096 4096 4096 " "a window under one message: one message each"
	is "$(sed -n 's/^# window=//p; s/^# depth=//p' "$runs/window.tsv" | tr '\n' ' ')" "1000 1 " \
		"the raw file says window=1000, depth=1"
	spin_stop
}

test_stream() {
	local out line raw=$runs/stream.tsv
	user_running
	out=$(bounded 60 "$BENCH" -p "$PORT" -c 2 --window 4194304 -s 1048576 -d 2 -o "$raw" 2>/dev/null)
	ok $? "stream: 4 MiB windows of 1 MiB messages on 2 connections through user: exit 0"
	(($(field "$out" ok) >= 8 && $(field "$out" failed) == 0))
	ok $? "stream: every echo whole and exact, at least two windows' worth"
	is "$(sed -n 's/^# window=//p; s/^# depth=//p' "$raw" | tr '\n' ' ')" "4194304 4 " \
		"stream: the raw file says window=4194304, depth=4"
	line=$(grep '^stream ' <<<"$out")
	awk -v l="$line" -v rps="$(field "$out" rps)" -v cpu="$(field "$out" server_cpu_us_per_echo)" 'BEGIN {
		n = split(l, f, " "); for (i = 2; i <= n; i++) { split(f[i], kv, "="); m[kv[1]] = kv[2] }
		exit !(m["depth"] == 4 && m["size"] == 1048576 && m["mib_s"] > 0 &&
			(m["mib_s"] - rps) ^ 2 < (0.01 * rps + 1) ^ 2 &&
			(m["server_cpu_us_per_mib"] - cpu) ^ 2 < (0.01 * cpu + 0.1) ^ 2)
	}'
	ok $? "stream: its line gives MiB/s (= req/s at 1 MiB) and CPU per MiB (= per echo)"
	diag "stream: $line; $(field "$out" ok) echoes, failed $(field "$out" failed)"
}

# fault_stream NAME FAULT ARG: bench keeps 256 KiB of 64 KiB messages out
# on one connection to spin-echo FAULT ARG for a second; its summary line
# in $out, its exit status in $status, its raw file $runs/NAME.tsv.
fault_stream() {
	out='' status=''
	stop_all
	spin_start "$2" "$3" || return 1
	out=$(bounded 30 "$BENCH" -p "$SPARE_PORT" -c 1 --window 262144 -s 65536 -d 1 -T 1000 -q \
		-o "$runs/$1.tsv" 2>"$runs/$1.err")
	status=$?
	spin_stop
}

test_stream_wrong() {
	local out status mismatches
	fault_stream wrong flip 200000 || return
	is "$status" 1 "stream-wrong: one flipped byte: exit 1"
	# Byte 200,000 is in the fourth message (196,608-262,143): on each
	# connection (bench opens another after a failure) three messages
	# ok, then that one a mismatch.
	mismatches=$(awk -F'\t' '!/^#/ && $NF == "mismatch"' "$runs/wrong.tsv" | wc -l)
	((mismatches >= 1 && $(field "$out" ok) == 3 * mismatches))
	ok $? "stream-wrong: each connection's fourth message a mismatch, the three before ok"
	# Byte 3,392 of that message (200,000 - 196,608); the 16 bytes from it
	# on, one bit off, are nowhere in the message.
	grep -q "the echo of a 65536-byte message differs from byte 3392 on: the bytes read there are not from the message" "$runs/wrong.err"
	ok $? "stream-wrong: stderr names the byte, and that what came is not the message's"
	grep -c "differs from byte" "$runs/wrong.err" | grep -qx 1
	ok $? "stream-wrong: only the first mismatch told"
	grep -q "^# first_mismatch=thread 0: the echo of a 65536-byte message differs from byte 3392 on: the bytes read there are not from the message$" "$runs/wrong.tsv"
	ok $? "stream-wrong: the raw file keeps it (first_mismatch)"
	diag "stream-wrong: ok $(field "$out" ok), failed $(field "$out" failed); $(failed_statuses "$runs/wrong.tsv" | tr '\n' ' ')"
}

test_stream_repeat() {
	local out status
	fault_stream repeat repeat 200000 || return
	is "$status" 1 "stream-repeat: 1,000 bytes sent twice: exit 1"
	# The fourth message again: at its byte 3,392 come its bytes from
	# 2,392 on a second time.
	grep -q "^# first_mismatch=thread 0: the echo of a 65536-byte message differs from byte 3392 on: the bytes read there are its bytes from 2392 on, a repeat of 1000 bytes$" "$runs/repeat.tsv"
	ok $? "stream-repeat: the raw file says a repeat of 1000 bytes, from byte 2392 at 3392"
	diag "stream-repeat: $(cat "$runs/repeat.err")"
}

test_stream_short() {
	local out status cut
	fault_stream short short 100000 || return
	is "$status" 1 "stream-short: an echo that ends at 100,000 bytes: exit 1"
	# On each connection the first message whole, the second cut short.
	cut=$(awk -F'\t' '!/^#/ && $NF == "eof"' "$runs/short.tsv" | wc -l)
	((cut >= 1 && $(field "$out" ok) == cut))
	ok $? "stream-short: each connection's first message ok, the second failed at EOF"
	diag "stream-short: ok $(field "$out" ok), failed $(field "$out" failed); $(failed_statuses "$runs/short.tsv" | tr '\n' ' ')"
}

run_tests
plan_at_end
