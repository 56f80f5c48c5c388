#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh knee (cmd/knee.sh): the knee search.
# Cases:
#   usage     bad options, bench arguments without -c or with -R, an
#             unknown server, --running with a server named or nothing on
#             the port: each a message and exit 2 (1 for the port)
#   known     a server of known capacity (tests/spin-echo: 1000 us of its
#             own CPU per message, one thread on CPU 0), bench on CPU 1 with
#             even arrivals on one connection: the median of 3 searches
#             lies within 3% of the rate it echoes when offered twice its
#             capacity (skipped on one CPU)
#   declared  run.sh knee user, one coarse search: each probe a fresh start
#             of user, every probe in probes.tsv with its raw file, the
#             search in knee.tsv and knee.md, nothing left behind
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="usage known declared"
select_cases "$@"
root_or_bail_out

dir=$(mktemp -d)
spin_pid=
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	[[ -z $spin_pid ]] || kill "$spin_pid" 2>/dev/null
	stop_all
	rm -rf "$dir"
}
trap cleanup EXIT

# knee_refuses WHY WANT-STATUS PATTERN ARGS...: run.sh knee ARGS exits
# WANT-STATUS and says PATTERN.
knee_refuses() {
	local why=$1 want=$2 pattern=$3 out
	shift 3
	out=$(bounded 20 "$RUN" knee --out "$dir/usage" "$@" 2>&1)
	is $? "$want" "usage/$why: exit $want"
	like "$out" "$pattern" "usage/$why: says why"
}

test_usage() {
	stop_all
	knee_refuses option 2 "unknown option '--bogus'" --bogus
	knee_refuses bound 2 "--bound: 'fast' is not" --bound fast
	knee_refuses precision 2 "--precision: '0' is not a percentage" --precision 0
	knee_refuses no-connections 2 "need -c N" -- -t 4 -d 1
	knee_refuses rate-given 2 "drop -R" -- -c 4 -d 1 -R 100
	knee_refuses bad-bench 2 "bad bench arguments" -- -c 4 -d 1 --no-such-flag
	knee_refuses server 2 "'nosuch' is no server or variant" nosuch
	knee_refuses running-named 2 "name no server" --running user
	knee_refuses running-empty 1 "nothing echoes on port" --running --port 12399
}

test_known() {
	local cap got
	if fact one-cpu >/dev/null; then
		skip "known: the knee of a server of known capacity within 3%" one-cpu
		return
	fi
	stop_all	# spin-echo takes the port
	taskset -c 0 "$ECHOLAB_ROOT/tests/build/spin-echo" "$PORT" 64 1000 >"$dir/spin.out" &
	spin_pid=$!
	wait_until 5 grep -q ready "$dir/spin.out"
	ok $? "known: spin-echo listens" || return
	# Its capacity: what it echoes when offered twice as much as its spin
	# allows (1,000 msg/s; the rest of a message's cost takes 2-4% off).
	cap=$(bounded 30 "$BENCH" -p "$PORT" --cpus 1 --server-cpus 0 -c 1 -R 2000 -d 3 --warmup 1 \
		--arrivals uniform -q -o /dev/null | sed -n 's/.* rps=\([0-9]*\).*/\1/p')
	# Even arrivals on one connection, a bound no queue below capacity
	# reaches (0.5 s: this VM stalls for tens of ms now and then, and near
	# capacity a stall takes long to drain): the search ends where the
	# server falls 2% short of the rate it is offered.
	bounded 600 "$RUN" knee --running --port "$PORT" --bound 500000 --from 600 --precision 1.5 --repeat 3 \
		--out "$dir/known" -- -c 1 -d 3 --warmup 1 --arrivals uniform --cpus 1 --server-cpus 0 \
		>"$dir/known.out" 2>&1
	ok $? "known: the search exits 0" || diag "$(tail -n 5 "$dir/known.out")"
	kill "$spin_pid"
	wait "$spin_pid" 2>/dev/null
	spin_pid=
	got=$(awk -F'\t' '$1 == "running" && $6 == "found" { print $3 }' "$dir/known/knee.tsv" 2>/dev/null |
		sort -n | sed -n 2p)
	diag "known: capacity ${cap:-none} msg/s; knees $(awk -F'\t' 'NR > 1 { printf "%s ", $3 }' "$dir/known/knee.tsv" 2>/dev/null)"
	[[ $got =~ ^[0-9]+$ && $cap =~ ^[0-9]+$ ]] &&
		awk -v g="$got" -v w="$cap" 'BEGIN { exit !(g >= 0.97 * w && g <= 1.03 * w) }'
	ok $? "known: the median knee ${got:-none} lies within 3% of the capacity, ${cap:-?} msg/s"
	like "$(cat "$dir/known/knee.md" 2>/dev/null)" "\| running \| $got \| \[[0-9]+, [0-9]+\] \| 75.00% \|" \
		"known: knee.md gives the median, the range and its coverage (75% for 3)"
}

test_declared() {
	local base out rows
	stop_all
	base=$(leftovers_or_why)
	out=$(bounded 300 "$RUN" knee user --repeat 1 --precision 25 --from 2000 --out "$dir/user" \
		-- -c 10 -d 1 2>&1)
	ok $? "declared: run.sh knee user exits 0" || diag "$(tail -n 5 <<<"$out")"
	rows=$(awk 'NR > 1' "$dir/user/probes.tsv" 2>/dev/null | wc -l)
	[[ $rows -ge 2 && $(find "$dir/user" -name 'user-rate*-1.tsv.gz' | wc -l) == "$rows" ]]
	ok $? "declared: every probe ($rows) has its row and its raw file"
	like "$(awk -F'\t' 'NR > 1 { print $1, $6 }' "$dir/user/knee.tsv" 2>/dev/null)" "^user (found|client-limited)$" \
		"declared: one search in knee.tsv, ended by a knee or the client"
	like "$(cat "$dir/user/knee.md" 2>/dev/null)" "\| user \| " "declared: knee.md has user's row"
	nothing_left_since declared "$base"
}

run_tests
plan_at_end
