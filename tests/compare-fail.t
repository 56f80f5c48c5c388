#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh compare when something goes wrong: an interrupt (Ctrl-C beside
# CPU hogs, SIGTERM to --sizes), bench refusing the sweep's arguments, a
# run the host disturbed (measured again in place), bad usage. What it
# measures and writes when nothing does: compare.t.
#
# Cases (TESTS=compare-fail:NAME,...), each runnable alone:
#   interrupted  Ctrl-C beside a CPU hog on every CPU: exit 130 within 2 s,
#                no server, namespace or RPS change left, samples kept
#   sizes-interrupted  SIGTERM to --sizes' own process alone (kill PID):
#                the size being measured stops too, exit 130 within 5 s,
#                no server left, its samples kept, the next size never run
#   refused      bench arguments that pass alone but not with the sweep's
#                (-c 5 with --rates and no -d: bench's -R needs -d): exit
#                2 at the first run, saying so, no raw file, no summary
#                that claims a run, nothing left behind
#   disturbed    bench's steal fault on every attempt of user's first
#                repetition: replaced twice (disturbed/, meta.txt's
#                replaced= with judge's reason), the third kept and said
#                to be disturbed, judge leaving it out; the other two
#                repetitions undisturbed; thin.sh thins disturbed/ too
#   usage        bad --repeat, --precision, bench flags, --workload,
#                --servers, --rates, --sizes and --seed, and --rates with
#                a closed loop or -R, exit 2, and write nothing
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/compare-lib.sh
source "$(dirname "$0")/compare-lib.sh"
ALL_TESTS="interrupted sizes-interrupted refused disturbed usage"
select_cases "$@"
root_or_bail_out

compare_setup

# Ctrl-C in the middle of a busy machine: compare ends within 2 s, no
# server left, the samples so far kept. A CPU hog on every CPU: on a busy
# machine bench's load threads (SCHED_IDLE) waited over 10 s for a CPU to
# see the stop, and the test's SIGKILL left the server.
test_interrupted() {
	local rps_before pid rows
	rps_before=$(<"$LO_RPS")
	# Job control: the job gets its own process group (as at a terminal) and
	# does not start with SIGINT ignored, as plain background jobs do.
	set -m
	# user alone: each repetition's order is random, so with every server
	# user's run would not always come first.
	"$RUN" compare --servers user -t 20 -r 100000 --repeat 1 --out "$TMP/int" >"$TMP/int.log" 2>&1 &
	pid=$!
	set +m
	wait_until 10 rows_over "$TMP/int/user-1.tsv" 100
	# The hogs start once bench measures: beside them it would take
	# tens of seconds to write its first rows.
	interrupt_beside_hogs "$pid" 10 0.02
	is "$INT_RC" 130 "exit 130"
	((INT_MS < 2000))
	ok $? "exits within 2 s of SIGINT, a CPU hog on every CPU"
	diag "interrupted: exited ${INT_MS} ms after SIGINT, beside $INT_HOGS CPU hogs"
	[[ ! -e $STATE_DIR ]]
	ok $? "no server state left"
	absent "port free" . listeners "$PORT"
	absent "no server process left" . processes "$(server_binary user)"
	absent "no namespace or veth left" echolab netns_left
	is "$(<"$LO_RPS")" "$rps_before" "the loopback's RPS mask restored"
	rows=$(grep -vc '^#' "$TMP/int/user-1.tsv")
	((rows > 100))
	ok $? "raw samples kept"
	diag "interrupted: $rows rows kept"
	grep -q "^results: $TMP/int" "$TMP/int.log"
	ok $? "says where the results are"
}

# SIGTERM to compare --sizes alone, while one size's compare measures in
# a process of its own: that one stops too.
test_sizes_interrupted() {
	local pid start elapsed_ms rc rows dir=$TMP/sizes-int
	"$RUN" compare --servers user --sizes 64,128 --rates 2000 -c 2 -d 8 --repeat 1 \
		--out "$dir" >"$TMP/sizes-int.log" 2>&1 &
	pid=$!
	wait_until 30 rows_over "$dir/size-64/user-rate2000-1.tsv" 100
	kill -TERM "$pid"
	start=$(_now_us)
	wait_until -i 0.05 10 pid_gone "$pid"
	elapsed_ms=$((($(_now_us) - start) / 1000))
	wait "$pid"
	rc=$?
	is "$rc" 130 "exit 130"
	((elapsed_ms < 5000))
	ok $? "exits within 5 s of SIGTERM to its own process"
	diag "sizes-interrupted: exited ${elapsed_ms} ms after SIGTERM"
	absent "no compare of a size left" . processes "compare.sh.*--size 64"
	absent "no bench left" . processes "$BENCH "
	absent "no server process left" . processes "$(server_binary user)"
	absent "port free" . listeners "$PORT"
	[[ ! -e $STATE_DIR ]]
	ok $? "no server state left"
	rows=$(grep -vc '^#' "$dir/size-64/user-rate2000-1.tsv")
	((rows > 100))
	ok $? "the size measured keeps its samples"
	diag "sizes-interrupted: $rows rows kept"
	[[ ! -e $dir/size-128 ]]
	ok $? "the next size never started"
}

# Bench arguments that bench refuses only with the sweep's own: the first
# run ends the comparison. Until 2026-11-27 compare went on through every
# run of such a command, each bench refused, and wrote a summary.md that
# said every run had achieved the offered rate.
test_refused() {
	local out rc before
	before=$(leftovers_or_why)
	out=$(bounded 120 "$RUN" compare --servers user --rates 2000 --repeat 3 \
		--out "$TMP/refused" -c 5 2>&1)
	rc=$?
	is "$rc" 2 "-c 5 with --rates and no -d: exit 2"
	like "$out" "bench: --rate needs --duration" "bench's own reason shown"
	like "$out" "bench refused its arguments.*nothing more is measured" "compare says it stopped, and why"
	ok "$(grep -c "running: pid" <<<"$out" | awk '{ print ($1 != 1) }')" "stopped at the first run (one server start)" ||
		diag "$out"
	is "$(find "$TMP/refused" -name '*.tsv' | wc -l)" 0 "no raw file"
	[[ ! -e $TMP/refused/summary.md ]]
	ok $? "no summary.md"
	nothing_left_since refused "$before"
}

# A run the host disturbed is measured again in place, up to a bound
# (DISTURBED_MAX, 2), and meta.txt says so. The host's steal is bench's
# fault hook (ECHOLAB_FAULT_STEAL_TICKS, through compare's test knob
# COMPARE_FAULT_DISTURB): 60 ticks more of steal at the window's end,
# through bench's own accounting, on every attempt of user's first
# repetition (so: replaced twice, then kept for judge to leave out) and
# never on its second and third.
test_disturbed() {
	local out rc dir=$TMP/disturbed before kept judge=$ECHOLAB_ROOT/analysis/judge
	before=$(leftovers_or_why)
	out=$(COMPARE_FAULT_DISTURB=user:1:9 bounded 300 "$RUN" compare --servers user \
		--rates 2000 --repeat 3 -c 5 -d 1 --out "$dir" 2>&1)
	rc=$?
	is "$rc" 0 "compare exits 0" || diag "$out"
	like "$out" "the host disturbed the run \\(server steal .*\\): measuring it again" \
		"says a disturbed run is measured again, and why"
	is "$(grep -c '^replaced=user rate2000 repetition 1, run [12]: server steal' "$dir/meta.txt")" 2 \
		"meta.txt: repetition 1 replaced twice, with judge's reason"
	like "$(cat "$dir/meta.txt")" "disturbed=user rate2000 repetition 1: still disturbed after 2 more runs" \
		"meta.txt: the third attempt kept, and said to be disturbed"
	is "$(find "$dir/disturbed" -name 'user-rate2000-1-try*.tsv' | wc -l)" 2 \
		"the two replaced runs kept in disturbed/"
	like "$("$judge" "$dir"/disturbed/*.tsv)" "disturbed label=user repeat=1 .*reason=server steal" \
		"judge finds the kept ones disturbed"
	kept=$("$judge" "$dir"/user-rate2000-*.tsv)
	like "$kept" "judge label=user figure=cpu .* n=2 excluded=0 disturbed=1 " \
		"judge: of the three in place, the one still disturbed left out"
	[[ ! $kept =~ "disturbed label=user repeat="[23]" " ]]
	ok $? "repetitions 2 and 3 ran undisturbed"
	like "$(cat "$dir/summary.md")" "disturbed" "summary.md lists the run left out"
	"$ECHOLAB_ROOT/cmd/thin.sh" 10 "$dir" >/dev/null
	is "$(find "$dir/disturbed" -name 'user-rate2000-1-try*.tsv.gz' | wc -l)" 2 \
		"cmd/thin.sh thins and gzips disturbed/ with its directory"
	nothing_left_since disturbed "$before"
}

# Usage errors: exit 2, before anything starts or is written.
test_usage() {
	local out
	out=$("$RUN" compare --repeat 0 2>&1)
	is $? 2 "--repeat 0 exits 2"
	out=$("$RUN" compare --repeat 5-3 2>&1)
	is $? 2 "--repeat MIN-MAX with MAX below MIN exits 2"
	out=$("$RUN" compare --precision 0 2>&1)
	is $? 2 "--precision 0 exits 2"
	out=$("$RUN" compare --precision lots 2>&1)
	is $? 2 "--precision that is not a number exits 2"
	out=$("$RUN" compare -t zero --out "$TMP/bad" 2>&1)
	is $? 2 "a bad bench flag exits 2 before any server starts"
	out=$("$RUN" compare --workload nosuch 2>&1)
	is $? 2 "an unknown workload exits 2"
	out=$("$RUN" compare --workload busy -t 5 2>&1)
	is $? 2 "a workload and bench flags together exit 2"
	out=$("$RUN" compare --servers user,nosuch 2>&1)
	is $? 2 "an unknown variant in --servers exits 2"
	out=$("$RUN" compare --rates 0,100 2>&1)
	is $? 2 "--rates 0 exits 2"
	out=$("$RUN" compare --rates 1000 --workload busy 2>&1)
	is $? 2 "--rates with a closed-loop workload exits 2"
	out=$("$RUN" compare --workload load -R 1000 2>&1)
	is $? 2 "equal load with -R exits 2"
	out=$("$RUN" compare --sizes 64,big 2>&1)
	is $? 2 "--sizes that is not a list of bytes exits 2"
	out=$("$RUN" compare --sizes 64 --sweep size=64,128 2>&1)
	is $? 2 "--sizes with --sweep size= exits 2"
	out=$("$RUN" compare --seed -1 2>&1)
	is $? 2 "--seed that is not a number exits 2"
	[[ ! -e $TMP/bad ]]
	ok $? "nothing written on bad usage"
}

run_tests
plan_at_end
