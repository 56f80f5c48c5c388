#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# How bench measures. Cases:
#   stamp-user            the kernel's arrival stamp beside the client's
#   stamp-ebpf            time: every ok sample of user, of ebpf, has an
#                         arrival_us no larger than its rtt_us
#   stamp-bypass          over the sk_msg bypass there is none: '-' in every
#                         row, and bench says why
#   sched                 the load threads run at SCHED_IDLE (the raw file
#                         and the kernel say so), --sched normal as asked
#   rate                  the open loop: -R 5000 sends 5000 req/s within 5%
#   stall                 a 300 ms SIGSTOP of the server shows in the open
#                         loop's p99.9, the closed loop mostly hides it
#   cpus                  run.sh --cpus 0 places the server and the
#                         loopback's receive processing, bench --cpus 1
#                         its threads; stop restores the RPS mask
#   cpus-usage            --cpus lists run.sh and compare refuse
#   bottleneck            the client-bottleneck warning fires for 2000
#                         threads against ebpf, and the run's plot says so
#   bottleneck-ping-pong  and not for a 1-thread ping-pong
#   workflow              the three commands users type end in a plot of
#                         exactly the servers just measured
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# workflow before bottleneck: the 2000 TIME_WAIT sockets bottleneck
# leaves would hold workflow's first run for a minute.
ALL_TESTS="stamp-user stamp-ebpf stamp-bypass sched rate stall cpus cpus-usage
	workflow bottleneck bottleneck-ping-pong"
select_cases "$@"
root_or_bail_out

runs=$(mktemp -d)	# hand-run benches land here, not in the repository
export ECHOLAB_RUNS_DIR=$runs
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	stop_all
	rm -rf "$runs"
}
trap cleanup EXIT

# stamped FILE: every ok row has an arrival_us, and none exceeds rtt_us.
stamped() {
	local bad
	bad=$(awk -F'\t' '/^# columns=/ { sub(/^# columns=/, ""); n = split($0, c, "\t")
			for (i = 1; i <= n; i++) col[c[i]] = i; next }
		/^#/ { next }
		$col["status"] == "ok" { rows++
			if ($col["arrival_us"] == "-" || $col["arrival_us"] + 0 > $col["rtt_us"] + 0) bad++ }
		END { print (rows ? bad + 0 : "no rows") }' "$1")
	is "$bad" 0 "every ok sample has arrival_us <= rtt_us"
}

# clients_connected N: N connections to the port established: bench's
# load is running (its threads connect once each has its scheduling and
# its CPUs; with -d each keeps its connection for the whole run).
clients_connected() {
	local n
	n=$(ss -Htn state established "dport = :$PORT" | grep -c .)
	((n >= $1))
}

# time_wait: the TIME_WAIT sockets of this machine (sockstat's tw).
time_wait() {
	awk '/^TCP:/ { for (i = 2; i < NF; i++) if ($i == "tw") print $(i + 1) }' /proc/net/sockstat
}

# time_wait_below N: fewer than N of them (for wait_until).
time_wait_below() {
	local n
	n=$(time_wait)
	((${n:-0} < $1))
}

# ---- the stamp, on each TCP path and where there is none --------------------

# stamp_on SERVER: SERVER started, a bench run against it, its stamps.
stamp_on() {
	local server=$1 raw=$runs/stamp-$1.tsv
	"$RUN" "$server" >/dev/null
	ok $? "started"
	bench_ok "$_case" -t 20 -r 5 -m 20 -s 1000 -o "$raw"
	stamped "$raw"
	"$RUN" stop >/dev/null
}

test_stamp_user() { stamp_on user; }

test_stamp_ebpf() { stamp_on ebpf; }

test_stamp_bypass() {
	local raw=$runs/stamp-bypass.tsv out
	"$RUN" user --bypass >/dev/null
	ok $? "user behind sockredir"
	out=$(bounded 60 "$RUN" client "$BENCH" -p "$PORT" -t 4 -r 2 -m 50 -o "$raw" 2>&1)
	is "$(field "$out" ok)/$(field "$out" arrival_n)" 400/0 "400 ok samples, none stamped"
	like "$out" "stamped none of the 400 echoes.*sk_msg bypass" "bench says why arrival_us is missing"
	# The rows counted too: an unreadable file must not read as "none stamped".
	is "$(awk -F'\t' '!/^#/ && $NF == "ok" { n++; if ($5 != "-") s++ } END { print n + 0 "/" s + 0 }' "$raw")" 400/0 \
		"arrival_us is '-' in every row (400 ok rows, none stamped)"
	"$RUN" stop >/dev/null
}

# ---- scheduling ---------------------------------------------------------------

test_sched() {
	local bpid pol t
	"$RUN" user >/dev/null
	bounded 30 "$BENCH" -p "$PORT" -t 2 -r 2 -q -o "$runs/idle.tsv" >/dev/null
	is "$(sed -n 's/^# sched=//p' "$runs/idle.tsv")" idle "sched/default: the raw file says sched=idle"
	bounded 30 "$BENCH" -p "$PORT" -t 2 -r 2 --sched normal -q -o "$runs/normal.tsv" >/dev/null
	is "$(sed -n 's/^# sched=//p' "$runs/normal.tsv")" normal "sched/--sched normal: the raw file says sched=normal"
	bounded 30 "$BENCH" -p "$PORT" -t 2 -d 1 -q -o "$runs/policy.tsv" >/dev/null &
	bpid=$!
	wait_until 5 clients_connected 2 || diag "sched: bench's 2 threads not connected within 5 s"
	# The load threads' policy as the kernel has it (5 = SCHED_IDLE).
	pol=$(for t in /proc/"$(pgrep -n -x bench)"/task/*; do
		awk '{ print $41 }' "$t/stat"
	done | sort -u | tr '\n' ' ')
	wait "$bpid"
	is "$pol" "0 5 " "sched/default: the kernel runs bench's load threads at SCHED_IDLE (policy 5)"
	"$RUN" stop >/dev/null
}

# ---- open loop ------------------------------------------------------------------

test_rate() {
	local out rps
	"$RUN" user >/dev/null
	out=$(bounded 30 "$BENCH" -p "$PORT" -t 10 -R 5000 -d 4 -q -o "$runs/rate.tsv")
	rps=$(field "$out" rps)
	((rps >= 4750 && rps <= 5250))
	ok $? "rate/-R 5000: req/s within 5% of 5000"
	diag "rate/-R 5000: $rps req/s"
	is "$(sed -n 's/^# loop=//p' "$runs/rate.tsv")" open "rate/-R: the raw file says loop=open"
	"$RUN" stop >/dev/null
}

# stall PID: 0.8 s into the run, a 300 ms SIGSTOP of PID.
stall() {
	local pid=$1
	sleep 0.8
	kill -STOP "$pid"
	sleep 0.3
	kill -CONT "$pid"
}

# A 300 ms stall of the server: timed from the intended send, the rate run
# shows it in its tail; the closed loop waits it out and hides it. The
# worst 0.1% of a 2 s open-loop run are the messages due in the stall's
# first 2 ms, so its p99.9 is the stall less up to 2 ms.
test_stall() {
	local pid out open999 closed999 closedmax
	"$RUN" user >/dev/null
	pid=$(server_pid)
	stall "$pid" &
	out=$(bounded 30 "$BENCH" -p "$PORT" -t 10 -R 5000 -d 2 -q -o "$runs/stall-open.tsv")
	wait
	open999=$(field "$out" p999_us)
	awk -v v="$open999" 'BEGIN { exit !(v >= 298000) }'
	ok $? "open-loop p99.9 shows the 300 ms stall (>= 298 ms)"
	diag "stall: open-loop p99.9 $open999 us"
	stall "$pid" &
	out=$(bounded 30 "$BENCH" -p "$PORT" -t 10 -d 2 -q -o "$runs/stall-closed.tsv")
	wait
	closed999=$(field "$out" p999_us)
	awk -v v="$closed999" 'BEGIN { exit !(v < 150000) }'
	ok $? "closed-loop p99.9 hides most of it (< 150 ms)"
	diag "stall: closed-loop p99.9 $closed999 us, max $(field "$out" max_us) us"
	closedmax=$(field "$out" max_us)
	awk -v v="$closedmax" 'BEGIN { exit !(v >= 300000) }'
	ok $? "the closed loop did wait out the stall (max >= 300 ms)"
	"$RUN" stop >/dev/null
}

# ---- placement: the server's CPUs, the client's ---------------------------------

# rps_mask: the loopback's RPS mask as a number.
rps_mask() { local m; m=$(tr -d ',\n' <"$LO_RPS") && echo $((16#$m)); }

# affinity PID: the CPU lists its threads may run on, each once.
affinity() {
	sed -n 's/^Cpus_allowed_list:\s*//p' /proc/"$1"/task/*/status | sort -u | tr '\n' ' '
}

test_cpus() {
	local rps0 bpid aff name
	if fact one-cpu >/dev/null; then
		for name in "started" "RPS mask" "server's process" "bench's threads" "raw file" "RPS restored"; do
			skip "cpus/$name" one-cpu
		done
		return
	fi
	"$RUN" stop >/dev/null 2>&1	# the mask as no server of ours left it
	rps0=$(rps_mask)
	"$RUN" ebpf --cpus 0 >/dev/null
	ok $? "cpus/run.sh ebpf --cpus 0: started"
	is "$(rps_mask)" 1 "cpus/--cpus 0: the loopback's receive processing goes to CPU 0 (RPS mask 1)"
	is "$(affinity "$(server_pid)")" "0 " "cpus/--cpus 0: the server's process runs on CPU 0 only"
	bounded 30 "$BENCH" -p "$PORT" -t 4 -d 1 --cpus 1 -q -o "$runs/cpus.tsv" >/dev/null &
	bpid=$!
	wait_until 5 clients_connected 4 || diag "cpus: bench's 4 threads not connected within 5 s"
	aff=$(affinity "$(pgrep -n -x bench)")
	wait "$bpid"
	is "$aff" "1 " "cpus/bench --cpus 1: every thread of bench runs on CPU 1 only"
	is "$(sed -n 's/^# cpus=//p' "$runs/cpus.tsv")" 1 "cpus/bench --cpus 1: the raw file says cpus=1"
	"$RUN" stop >/dev/null
	is "$(rps_mask)" "$rps0" "cpus/stop: the loopback's RPS mask is back to what it was"
}

test_cpus_usage() {
	local out
	out=$("$RUN" user --cpus 1000 2>&1)
	is "$?/${out%%$'\n'*}" "2/run.sh: --cpus: '1000' is not a list of this machine's CPUs (0-$(($(nproc) - 1)), e.g. 0 or 0-1)" \
		"run.sh --cpus 1000: exit 2, names the CPUs there are"
	out=$("$RUN" compare --cpus 0-$(($(nproc) - 1)) -t 1 -r 1 2>&1)
	is "$?/${out%%$'\n'*}" "2/compare: --cpus 0-$(($(nproc) - 1)) leaves no CPU for bench (or use --cpus none)" \
		"compare --cpus ALL: exit 2, nothing left for bench"
}

# judged_disturbed FILE: whether analysis/judge leaves the run out as one
# the host disturbed (2026-12-07's CI run of user was one), which plot
# then names as disturbed, not as client-bound.
judged_disturbed() {
	"$ECHOLAB_ROOT/analysis/judge" --baseline "$(sed -n 's/^# label=//p' "$1" | sed -n 1p)" "$1" 2>/dev/null |
		grep -q "^disturbed .* file=$1 reason="
}

# ---- the client-bottleneck warning ----------------------------------------------

# 2000 threads of 50 messages each on CPU 1, ebpf placed nowhere: its
# echo runs in the receive processing of the sender's CPU, ahead of the
# SCHED_IDLE threads, and leaves in about a hundred microseconds; the
# threads wait milliseconds for their one CPU to read the echoes. (With
# run.sh --cpus 0 the echo moves to CPU 0 and saturates it: the server is
# the bottleneck there, results/history.md.) A client-bound run's plots
# say so in their titles.
test_bottleneck() {
	local out raw=$runs/t2000.tsv
	if fact one-cpu >/dev/null; then
		skip "bottleneck/-t 2000 against ebpf: the warning fires" one-cpu
		skip "bottleneck/-t 2000: bottleneck=client in the raw file" one-cpu
		skip "bottleneck/make plots: a client-bound run's title says so" one-cpu
		return
	fi
	"$RUN" ebpf --cpus all >/dev/null
	out=$(bounded 120 "$BENCH" -p "$PORT" --cpus 1 -t 2000 -r 1 -m 50 -o "$raw" 2>&1)
	"$RUN" stop >/dev/null
	like "$out" "warning: the client was the bottleneck" "bottleneck/-t 2000 against ebpf: the warning fires"
	is "$(sed -n 's/^# bottleneck=//p' "$raw")" client "bottleneck/-t 2000: bottleneck=client in the raw file"
	if [[ ! -s $raw ]]; then
		ok 1 "bottleneck/make plots: a client-bound run's title says so"
		diag "bottleneck: the -t 2000 run left no raw file"
		return
	fi
	mkdir -p "$runs/bound"
	cp "$raw" "$runs/bound/"
	out=$(make -C "$ECHOLAB_ROOT" --no-print-directory plots RESULTS="$runs/bound" 2>&1)
	if judged_disturbed "$raw"; then
		like "$out" "DISTURBED runs \(ebpf 1 of 1\)" "bottleneck/make plots: a disturbed run's title says so"
		diag "bottleneck: the host disturbed the -t 2000 run, which plot names as such"
	elif [[ $(sed -n 's/^# bottleneck=//p' "$raw") == client ]]; then
		like "$out" "CLIENT-BOUND runs \(ebpf 1 of 1\)" "bottleneck/make plots: a client-bound run's title says so"
	else
		[[ $out != *CLIENT-BOUND* ]]
		ok $? "bottleneck/make plots: a run that was not client-bound is not called so"
	fi
}

test_bottleneck_ping_pong() {
	local out
	"$RUN" ebpf --cpus all >/dev/null
	out=$(bounded 60 "$BENCH" -p "$PORT" -t 1 -r 1 -m 5000 -o "$runs/t1.tsv" 2>&1)
	[[ $out != *"the client was the bottleneck"* ]]
	ok $? "no warning"
	is "$(sed -n 's/^# bottleneck=//p' "$runs/t1.tsv")" server "bottleneck=server in the raw file"
	"$RUN" stop >/dev/null
}

# ---- the three commands users type --------------------------------------------

# sudo ./run.sh SERVER; sudo ./bench/bench -t 1000; ...; make plots. An
# older run of user the same day must not be drawn: only what was just run.
# run.sh gives the server half the CPUs and bench takes the other half by
# itself: the runs measure the server, not the client.
test_workflow() {
	local day out files=() server drawn want disturbed i
	local -A bound=()
	day=$runs/$(date +%Y%m%d)
	mkdir -p "$day"
	# The older run: a small one of user, an hour ago.
	"$RUN" user >/dev/null
	bounded 60 "$BENCH" -p "$PORT" -t 20 -r 5 -m 20 -s 1000 -q -o "$day/user-000000.tsv" >/dev/null
	touch -d '1 hour ago' "$day/user-000000.tsv"
	for server in user ebpf; do
		"$RUN" "$server" >/dev/null
		# Each run starts with few TIME_WAIT sockets left by the runs
		# before it (they make connect() scan, and a run after 10,000 of
		# them is client-bound; compare gives every run a fresh client
		# namespace instead): below 2000, where compare calls a run clean
		# (ECHOLAB_TW_MAX). The user run's 1000 let the ebpf run start at
		# once (below 500 until 2026-11-28: a minute's wait for them to
		# expire, in every check-all).
		wait_until -i 1 70 time_wait_below 2000 ||
			diag "still $(time_wait) TIME_WAIT sockets after 70 s"
		out=$(bounded 120 "$BENCH" -t 1000 -r 2 2>&1)
		files+=("$(sed -n 's/^raw samples: //p' <<<"$out")")
		"$RUN" stop >/dev/null
		bound[$server]=$(sed -n 's/^# bottleneck=//p' "${files[-1]}")
		if ! fact one-cpu >/dev/null; then
			like "$out" "run.sh placed the server on CPUs 0: the load threads run on CPUs 1" \
				"workflow/bench $server: takes the CPUs run.sh left, and says so"
		else
			skip "workflow/bench $server: takes the CPUs run.sh left, and says so" one-cpu
		fi
	done
	# 1000 threads on one CPU against a server on the other: against user
	# the server was the bottleneck in some runs and the client in others
	# (the fresh-clone CI run of 2026-11-24: client); against ebpf, whose echo
	# is cheaper than bench's side of it, the client. Whichever it is, the
	# raw file says it and the plot must say so (below).
	for server in user ebpf; do
		[[ ${bound[$server]} == server || ${bound[$server]} == client ]]
		ok $? "workflow/bench $server: the raw file says who was the bottleneck"
		diag "workflow/bench $server: bottleneck=${bound[$server]:-none}"
	done
	[[ ${files[0]} == "$day"/user-*.tsv && ${files[1]} == "$day"/ebpf-*.tsv ]]
	ok $? "workflow/bench: the raw files went to the day's runs directory"
	diag "workflow/bench: ${files[*]}"
	out=$(make -C "$ECHOLAB_ROOT" --no-print-directory plots 2>&1)
	ok $? "workflow/make plots: exit 0"
	drawn=$(sed -n 's/^\([a-z0-9-]*\): [0-9]* samples from \(.*\)$/\1 \2/p' <<<"$out" | tr '\n' ' ')
	is "$drawn" "user ${files[0]##*/} ebpf ${files[1]##*/} " \
		"workflow/make plots: exactly user and ebpf, each from the run just made"
	[[ -s $day/boxplot.png && $day/boxplot.png -nt ${files[1]} ]]
	ok $? "workflow/make plots: the day's boxplot.png drawn"
	# A run the host disturbed is named as such, client-bound or not (it
	# counts in no figure: judge); the other client-bound runs as those.
	want=
	disturbed=
	for i in 0 1; do
		server=${files[i]##*/}
		server=${server%%-*}
		if judged_disturbed "${files[i]}"; then
			disturbed+="${disturbed:+, }$server 1 of 1"
		elif [[ ${bound[$server]} == client ]]; then
			want+="${want:+, }$server 1 of 1"
		fi
	done
	if [[ -n $want ]]; then
		like "$out" "note: CLIENT-BOUND runs \\($want\\)" "workflow/make plots: the client-bound runs are named"
		diag "workflow/make plots: client-bound: $want"
	else
		[[ $out != *CLIENT-BOUND* ]]
		ok $? "workflow/make plots: no client-bound run, none named"
	fi
	if [[ -n $disturbed ]]; then
		like "$out" "note: DISTURBED runs \\($disturbed\\)" "workflow/make plots: the disturbed runs are named"
		diag "workflow/make plots: disturbed: $disturbed"
	else
		[[ $out != *DISTURBED* ]]
		ok $? "workflow/make plots: no disturbed run, none named"
	fi
}

run_tests
plan_at_end
