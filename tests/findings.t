#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# cmd/findings.sh on synthetic comparisons: a row per group, server and
# figure, judge's own figures in it. No root, no server; KEEP=1 keeps
# the generated files. Its cases:
#   help        --help: exit 0, names its flags and columns
#   rows        the header; groups by size (size-S/) and offered rate,
#               tables such as curve.tsv.gz left out; each row's ratio,
#               interval, coverage and verdict judge's for that group
#   skipped     a group without the baseline: skipped, one line on stderr
#   closed      closed-loop runs: offered 'closed'; --baseline names another
#   figure      --figure cpu,p50: those figures only
#   usage       bad usage exits 2 with the usage; a missing DIR exits 1
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="help rows skipped closed figure usage"
select_cases "$@"

dir=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$dir"' EXIT
FINDINGS=$ROOT/cmd/findings.sh

# The raw files: tests/judge-lib.sh's mkrun (META for size= and rate=).
# shellcheck source=tests/judge-lib.sh
source "$(dirname "$0")/judge-lib.sh"

# open_runs SUB SIZE RATE LABEL LAT CPU: 5 open-loop runs of LABEL at RATE
# in cmp/SUB, named as compare names them (LABEL-rateRATE-N.tsv).
open_runs() {
	local i
	mkdir -p "$dir/cmp/$1"
	for ((i = 1; i <= 5; i++)); do
		META=$(printf '# size=%s\n# loop=open\n# rate=%s\n# sweep=rate\n# sweep_value=%s' "$2" "$3" "$3") \
			mkrun "cmp/$1/$4-rate$3-$i.tsv" "$4" "$i" "$5" "$3" "$6"
	done
}

# comparison: cmp/, as compare --sizes leaves it: size-64/ at 20000 and
# size-1024/ at 10000 and 20000 (fast: faster and cheaper than user), a
# curve table in each; only fast at 30000 in size-1024/.
comparison() {
	[[ ! -d $dir/cmp ]] || return 0
	seed=31
	open_runs size-64 64 20000 user 100 1500
	open_runs size-64 64 20000 fast 60 900
	open_runs size-1024 1024 10000 user 120 1800
	open_runs size-1024 1024 10000 fast 70 1000
	open_runs size-1024 1024 20000 user 130 1700
	open_runs size-1024 1024 20000 fast 75 950
	open_runs size-1024 1024 30000 fast 80 900
	printf 'rate\tp99\n20000\t300\n' | gzip >"$dir/cmp/size-64/curve.tsv.gz"
	printf 'rate\tp99\n20000\t300\n' >"$dir/cmp/size-1024/curve.tsv"
}

# row OUTPUT SIZE OFFERED LABEL FIGURE: findings' row for them.
row() { awk -F'\t' -v s="$2" -v o="$3" -v l="$4" -v f="$5" '$2 == s && $3 == o && $4 == l && $6 == f' <<<"$1"; }

test_help() {
	local out
	out=$("$FINDINGS" --help)
	ok $? "exit 0"
	like "$out" "--baseline LABEL.*--figure F" "names its flags"
	like "$out" "dir size offered label baseline figure n excluded disturbed ratio lo hi" "names its columns"
}

test_rows() {
	local out err judged want got
	comparison
	out=$("$FINDINGS" "$dir/cmp/" 2>"$dir/rows.err")
	ok $? "exit 0"
	is "$(head -n1 <<<"$out")" "$(printf 'dir\tsize\toffered\tlabel\tbaseline\tfigure\tn\texcluded\tdisturbed\tratio\tlo\thi\tcoverage\tpairs\tverdict')" \
		"the header, its columns in order"
	is "$(tail -n +2 <<<"$out" | cut -f1-3 | uniq | tr '\t\n' ' |')" "$dir/cmp 64 20000|$dir/cmp 1024 10000|$dir/cmp 1024 20000|" \
		"a group per size and rate, size-64/ first, DIR as given"
	is "$(tail -n +2 <<<"$out" | wc -l)" 15 "5 figures of one server other than the baseline in each of 3 groups"
	is "$(tail -n +2 <<<"$out" | cut -f6 | sort -u | tr '\n' ' ')" "cpu machine p50 p99 rps " "judge's five figures"
	judged=$("$JUDGE" "$dir"/cmp/size-1024/*-rate10000-*.tsv)
	for f in p50 cpu; do
		want=$(line "$judged" fast "$f" | awk '{
			for (i = 2; i <= NF; i++) { eq = index($i, "="); m[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
			v = $0; sub(/.* verdict=/, "", v)
			print m["n"], m["excluded"], m["disturbed"], m["ratio"], m["ratio_lo"], m["ratio_hi"], m["ratio_coverage"], m["pairs"], v }')
		got=$(row "$out" 1024 10000 fast "$f" | cut -f7-15 | tr '\t' ' ')
		is "$got" "$want" "size 1024 at 10000, $f: judge's counts, ratio, interval, coverage, verdict"
	done
	like "$(row "$out" 64 20000 fast p50)" $'\tfaster$' "fast is faster than user"
	err=$(cat "$dir/rows.err")
	like "$err" "^findings\.sh: $dir/cmp/size-1024, size 1024, offered 30000: no runs of the baseline 'user' \(only fast\): skipped$" \
		"tables are no runs; the group without user said on stderr"
}

test_skipped() {
	local out
	comparison
	out=$("$FINDINGS" "$dir/cmp" 2>&1 >/dev/null)
	is "$(wc -l <<<"$out")" 1 "one line on stderr"
	like "$("$FINDINGS" "$dir/cmp" 2>/dev/null | cut -f3 | sort -u | tr '\n' ' ')" "^10000 20000 offered $" \
		"no row of the group without the baseline"
}

test_closed() {
	local out i
	seed=37
	mkdir -p "$dir/closed"
	for ((i = 1; i <= 5; i++)); do
		META=$(printf '# size=64\n# loop=closed\n# rate=0') mkrun "closed/user-$i.tsv" user "$i" 100 20000 1500
		META=$(printf '# size=64\n# loop=closed\n# rate=0') mkrun "closed/slow-$i.tsv" slow "$i" 200 10000 2500
	done
	out=$("$FINDINGS" --figure p50 "$dir/closed")
	is "$(tail -n +2 <<<"$out" | cut -f2-6 | tr '\t' ' ')" "64 closed slow user p50" "closed-loop runs: offered closed"
	like "$(tail -n +2 <<<"$out")" $'\tslower$' "slow is slower"
	out=$("$FINDINGS" --figure p50 --baseline slow "$dir/closed")
	like "$(tail -n +2 <<<"$out")" $'^[^\t]+\t64\tclosed\tuser\tslow\tp50\t.*\tfaster$' "--baseline slow: user is faster"
}

test_figure() {
	local out
	comparison
	out=$("$FINDINGS" --figure cpu,p50 "$dir/cmp" 2>/dev/null)
	is "$(tail -n +2 <<<"$out" | cut -f6 | tr '\n' ' ')" "p50 cpu p50 cpu p50 cpu " "only p50 and cpu, in judge's order"
}

# usage_fails NAME STATUS WHY ARGS...: findings.sh exits STATUS, its first
# line on stderr WHY.
usage_fails() {
	local name=$1 status=$2 why=$3 err rc
	shift 3
	err=$("$FINDINGS" "$@" 2>&1 >/dev/null)
	rc=$?
	is "$rc" "$status" "$name: exit $status"
	like "${err%%$'\n'*}" "^findings\.sh: $why" "$name: says why"
}

test_usage() {
	comparison
	usage_fails "no DIR" 2 "give the comparison directories"
	like "$("$FINDINGS" 2>&1)" $'\nfindings\\.sh \\[--baseline LABEL\\]' "no DIR: the usage follows"
	usage_fails "bad figure" 2 "--figure: no figure 'p90'" --figure p90 "$dir/cmp"
	usage_fails "unknown flag" 2 "unknown option '--bogus'" --bogus "$dir/cmp"
	usage_fails "missing DIR" 1 "'$dir/missing' is no directory" "$dir/missing"
}

run_tests
plan_at_end
