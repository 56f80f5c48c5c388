#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The suite's own helpers (tests/lib.sh, lib/common.sh's wait_until) and
# its cases by name. No server, no root needed: the tools are fakes in a
# directory of our own, the cases those of a scratch file. Cases:
#   ok             a status that is not a number is a failure; ok, is and
#                  like return 0 for a pass and 1 for a failure
#   absent         a missing, failing or unreadable tool (bpftool, ss,
#                  /proc) is "cannot tell", a failure; a match is found
#   port-free      false when ss fails
#   skip           only for a platform fact this machine has; any other
#                  reason is a visible skip, a failure under CI
#   skip-all       only for a platform fact
#   grew           a counter that could not be read is no number
#   stop-bounded   a process that ignores SIGTERM is killed after its bound
#   list           --list prints ALL_TESTS, in its order
#   unknown-case   TESTS=FILE:nosuch exits 2 before any case, listing them
#   one-case       TESTS=FILE:CASE runs that case only
#   no-function    a case without its test_ function is a failure
#   case-prefix    ok starts a result's name with 'CASE: ', unless it
#                  starts with 'CASE: ' or 'CASE/' already
#   wait-met       wait_until returns 0 at once when CMD succeeds
#   wait-timeout   and 1 after its SECONDS when CMD never does
#   wait-interval  it runs CMD every INTERVAL (-i), 0.1 s by default
#   prove-unknown  tests/prove.sh: TESTS=FILE:nosuchcase exits 2 listing
#                  FILE's cases, for every tests/*.t
#   point-state    lib/common.sh's rate rule: a Poisson run 5% short at a
#                  low rate is within 3 sd (carried), even arrivals are not
#                  (short), a busy client is client-limited; the same
#                  answers under busybox's awk, which has no math (the
#                  guest's)
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="ok absent port-free skip skip-all grew stop-bounded
	list unknown-case one-case no-function case-prefix
	wait-met wait-timeout wait-interval prove-unknown point-state"
select_cases "$@"

fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT

# tools DIR TOOL...: DIR holds links to those tools only (a PATH without
# the others: bpftool, say).
tools() {
	local dir=$1 t
	shift
	mkdir -p "$dir"
	for t in "$@"; do ln -sf "$(command -v "$t")" "$dir/$t"; done
}
basic=(awk grep sed cat mktemp rm cut head sort)
tools "$fake/nobpftool" "${basic[@]}"
# bpftool that exits 0 and prints what no bpftool prints; ss and pgrep
# that fail.
tools "$fake/broken" "${basic[@]}"
printf '#!/bin/sh\necho "Error: something else"\n' >"$fake/broken/bpftool"
printf '#!/bin/sh\necho "ss: netlink: Permission denied" >&2\nexit 1\n' >"$fake/broken/ss"
printf '#!/bin/sh\nexit 3\n' >"$fake/broken/pgrep"
chmod +x "$fake/broken/bpftool" "$fake/broken/ss" "$fake/broken/pgrep"

# A file of cases of its own, f.t, that sources the real tests/lib.sh:
# a and b pass, c-d has no function, b names its results three ways.
scratch=$fake/cases
mkdir -p "$scratch"
cat >"$scratch/f.t" <<-SCRATCH
	#!/usr/bin/env bash
	source "$ECHOLAB_ROOT/tests/lib.sh"
	ALL_TESTS="a b
		c-d"
	select_cases "\$@"
	test_a() { ok 0 "a ran"; }
	test_b() {
		ok 0 "plain"
		ok 0 "b/sub: named"
		ok 0 "b: named"
	}
	run_tests
	plan_at_end
SCRATCH

# scratch TESTS ARGS...: f.t with that TESTS; its stdout, then its stderr
# in $scratch/err and its status in $scratch/rc.
scratch() {
	local tests=$1
	shift
	TESTS=$tests bash "$scratch/f.t" "$@" 2>"$scratch/err"
	echo $? >"$scratch/rc"
}

# tap CMD...: the first TAP line that a helper prints in a shell of its own
# (its counters and case are not ours).
tap() { (_tap_n=0; _case=; "$@") 2>&1 | grep -m1 -E '^(not )?ok |^Bail out!'; }

test_ok() {
	like "$(tap ok '' x)" '^not ok' "an empty status fails"
	like "$(tap ok 'garbled' x)" '^not ok' "a non-numeric status fails"
	like "$(tap ok 0 x)" '^ok 1 - x$' "status 0 passes"
	# What each returns: 'ok $? "setup" || return' must stop at a failure.
	# rc CMD...: CMD's status in a shell of its own (its counters not ours).
	rc() { (_tap_n=0; _case=; "$@") >/dev/null 2>&1; echo $?; }
	is "$(rc ok 0 x)/$(rc ok 1 x)/$(rc ok '' x)" 0/1/1 "ok returns 0 for a pass, 1 for a failure"
	is "$(rc is a a x)/$(rc is a b x)" 0/1 "is returns its verdict too"
	is "$(rc like abc '^a' x)/$(rc like abc '^b' x)" 0/1 "like returns its verdict too"
}

test_absent() {
	like "$(PATH=$fake/nobpftool tap absent x 'echo_' bpf_progs)" '^not ok' \
		"bpftool missing from PATH fails 'no program left'"
	like "$(PATH=$fake/nobpftool tap absent x 'echo_' bpf_attachments)" '^not ok' \
		"bpftool missing from PATH fails 'no attachment left'"
	like "$(PATH=$fake/broken tap absent x 'echo_' bpf_progs)" '^not ok' \
		"bpftool output it cannot read fails 'no program left'"
	like "$(PATH=$fake/broken tap absent x 'echo_' bpf_attachments)" '^not ok' \
		"bpftool output it cannot read fails 'no attachment left'"
	like "$(PATH=$fake/broken tap absent x . listeners "$SPARE_PORT")" '^not ok' \
		"a failing ss fails 'port free'"
	like "$(PROC_ROOT=$fake tap absent x . processes sockredir)" '^not ok' \
		"a /proc it cannot read fails 'no process left'"
	like "$(tap absent x . processes 'no-such-process-[0-9]{9}')" '^ok' \
		"no process matching is nothing found"
	like "$(sleep 5 & tap absent x . processes '^sleep 5$'; kill $!)" '^not ok' \
		"a process matching is found"
}

test_port_free() {
	PATH=$fake/broken port_free "$SPARE_PORT" 2>/dev/null
	is $? 1 "false when ss fails"
}

test_skip() {
	local other=one-cpu
	fact one-cpu >/dev/null && other=modules
	fact "$other" >/dev/null && other=no-modules
	like "$(tap skip x "$other")" '^not ok' "a fact this machine does not have ($other) fails"
	like "$(CI='' tap skip x 'port is busy')" '^ok 1 - x # SKIP port is busy \(not a platform fact' \
		"any other reason is a visible skip outside CI"
	like "$(CI=true tap skip x 'port is busy')" '^not ok' "any other reason fails under CI=true"
}

test_skip_all() {
	like "$( (skip_all 'port is busy') 2>&1)" '^Bail out!' "only for a platform fact"
}

test_grew() {
	grew "a=1" "b=2" a >/dev/null
	is $? 1 "fails when the second line lacks the counter"
}

test_stop_bounded() {
	local pid start rc
	bash -c 'trap "" TERM; sleep 60' &
	pid=$!
	sleep 0.5	# its trap set before the SIGTERM comes
	start=$SECONDS
	stop_bounded "$pid" 1 >/dev/null 2>&1
	rc=$?
	((rc == 137 && SECONDS - start < 10))
	ok $? "SIGKILL after its bound"
	diag "stop-bounded: status $rc after $((SECONDS - start)) s"
}

test_list() {
	is "$(scratch '' --list | tr '\n' ' ')" "a b c-d " "--list prints ALL_TESTS in order"
	is "$(cat "$scratch/rc")" 0 "--list exits 0"
}

test_unknown_case() {
	local out
	out=$(scratch f:nosuch)
	is "$(cat "$scratch/rc")" 2 "TESTS=f:nosuch exits 2"
	is "$out" "" "TESTS=f:nosuch runs nothing"
	[[ $(grep -c "^  a\$\|^  b\$\|^  c-d\$" "$scratch/err") == 3 &&
		$(cat "$scratch/err") == *"no case named 'nosuch'"* ]]
	ok $? "TESTS=f:nosuch names it and lists every case on stderr"
	diag "unknown-case: stderr: $(cat "$scratch/err")"
}

test_one_case() {
	local out
	out=$(scratch f:b)
	is "$(grep -c '^ok ' <<<"$out")/$(tail -n1 <<<"$out")" "3/1..3" "TESTS=f:b: three results, planned"
	is "$(grep -cE ' - (a|c-d)[:/]' <<<"$out")" 0 "TESTS=f:b runs neither a nor c-d"
	is "$(cat "$scratch/rc")" 0 "TESTS=f:b exits 0"
	out=$(scratch 'f:b,a other:x')
	is "$(sed -n 's/^ok [0-9]* - \([a-z-]*\)[:/].*/\1/p' <<<"$out" | uniq | tr '\n' ' ')" "a b " \
		"TESTS='f:b,a other:x' runs a then b (ALL_TESTS's order)"
}

test_no_function() {
	local out
	out=$(scratch f:c-d)
	like "$out" $'^not ok 1 - c-d: has its function test_c_d\n# time: c-d took [0-9]+ s\n1..1$' "a case without its function fails, and says how long it took"
	is "$(cat "$scratch/rc")" 1 "and the file exits 1"
}

test_case_prefix() {
	local out
	out=$(scratch f:b)
	is "$(grep '^ok ' <<<"$out" | tr '\n' '|')" "ok 1 - b: plain|ok 2 - b/sub: named|ok 3 - b: named|" \
		"'CASE: ' added to 'plain', 'CASE/sub: ' and 'CASE: ' left as they are"
}

# calls: a command that counts its runs and notes when (us), then fails.
calls() {
	calls_at+=("$(_now_us)")
	return 1
}

test_wait_met() {
	local start rc ms
	start=$(_now_us)
	wait_until 5 true
	rc=$?
	ms=$((($(_now_us) - start) / 1000))
	is "$rc" 0 "returns 0 when CMD succeeds"
	((ms < 500))
	ok $? "at once (within 0.5 s of its 5)"
	diag "wait-met: ${ms} ms"
}

test_wait_timeout() {
	local start rc ms
	start=$(_now_us)
	wait_until 1 false
	rc=$?
	ms=$((($(_now_us) - start) / 1000))
	is "$rc" 1 "returns 1 when CMD never succeeds"
	((ms >= 900 && ms <= 3000))
	ok $? "after its 1 s (0.9 to 3 s)"
	diag "wait-timeout: ${ms} ms"
}

# interval_ok NAME SECONDS INTERVAL MIN MAX [-i INTERVAL]: wait_until
# SECONDS calls ran CMD MIN to MAX times, never twice within 0.9 x
# INTERVAL.
interval_ok() {
	local name=$1 seconds=$2 step=$3 min=$4 max=$5 i gap=999999999
	shift 5
	calls_at=()
	wait_until "$@" "$seconds" calls
	for ((i = 1; i < ${#calls_at[@]}; i++)); do
		((calls_at[i] - calls_at[i - 1] < gap)) && gap=$((calls_at[i] - calls_at[i - 1]))
	done
	((${#calls_at[@]} >= min && ${#calls_at[@]} <= max && gap >= $(_seconds_us "$step") * 9 / 10))
	ok $? "$name"
	diag "wait-interval: $name: ${#calls_at[@]} runs, the shortest gap ${gap} us"
}

test_wait_interval() {
	# 1 s every 0.25 s: at 0, 0.25, 0.5, 0.75 and the deadline, 5 runs
	# (fewer on a slow machine); every 0.1 s: 11
	interval_ok "-i 0.25 for 1 s: 3 to 6 runs, 0.25 s apart" 1 0.25 3 6 -i 0.25
	interval_ok "by default for 1 s: 6 to 12 runs, 0.1 s apart" 1 0.1 6 12
}

# Every file of the suite says which cases it has when TESTS names one it
# has not, before anything runs (no root needed: select_cases comes first).
test_prove_unknown() {
	local f name cases out rc
	for f in "$ECHOLAB_ROOT"/tests/*.t; do
		name=$(basename "$f" .t)
		if ! grep -q '^select_cases' "$f"; then
			ok 1 "$name.t declares its cases (select_cases)"
			continue
		fi
		cases=$(TESTS='' bash "$f" --list 2>/dev/null)
		out=$(TESTS=$name:nosuchcase "$ECHOLAB_ROOT/tests/prove.sh" 2>"$scratch/err")
		rc=$?
		[[ $rc == 2 && -z $out && -n $cases ]] &&
			diff <(sed -n 's/^  //p' "$scratch/err") <(echo "$cases") >/dev/null
		ok $? "TESTS=$name:nosuchcase exits 2, runs nothing, lists $name.t's cases"
		[[ $rc == 2 ]] || diag "prove-unknown: $name: exit $rc: $(cat "$scratch/err") $out"
	done
}

# raw_file FILE OK ARRIVALS BUSY: a raw file of an open-loop run offered
# 100 msg/s for 10 s on one client CPU, with OK rows ok.
raw_file() {
	{
		printf '# rate=100\n# window_s=10\n# client_cpus=1\n# client_busy_s=%s\n' "$4"
		[[ $3 == poisson ]] || printf '# arrivals=%s\n' "$3"
		printf '# columns=seq\tstatus\n'
		seq "$2" | sed 's/$/\tok/'
	} >"$1"
}

test_point_state() {
	local f=$fake/raw.tsv box=$fake/busybox-awk
	# 950 ok in 10 s against 100 msg/s: 5% short; a Poisson count of 1,000
	# varies by 3 sd = 9.5%.
	raw_file "$f" 950 poisson 0.1
	is "$(point_state "$f")" "carried 95" "a Poisson run 5% short at 100 msg/s for 10 s: carried (3 sd: 9.5%)"
	raw_file "$f" 950 uniform 0.1
	is "$(point_state "$f")" "short 95" "the same with even arrivals (an exact count): short"
	raw_file "$f" 800 poisson 9.8
	is "$(point_state "$f")" "client-limited 80" "20% short with the client's CPU busy 98%: client-limited"
	if ! command -v busybox >/dev/null; then
		ok 1 "busybox is installed (make deps: the guest's initramfs needs it)"
		return
	fi
	mkdir -p "$box"
	printf '#!/bin/sh\nexec busybox awk "$@"\n' >"$box/awk"
	chmod +x "$box/awk"
	raw_file "$f" 950 poisson 0.1
	is "$(PATH=$box:$PATH point_state "$f")" "carried 95" "under busybox's awk (no math), the same: carried"
	raw_file "$f" 900 poisson 0.1
	is "$(PATH=$box:$PATH point_state "$f")" "short 90" "... and 10% short, past 3 sd: short"
}

run_tests
plan_at_end
