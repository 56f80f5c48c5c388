#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# cmd/findings.sh on synthetic comparisons: a row per group, server and
# figure, judge's own figures in it; cmd/check-findings.sh on a page of
# its own and on the suite's pages (PAGES): every quoted ratio, interval
# and verdict judge's for the directory its text links. No root, no
# server; KEEP=1 keeps the generated files. Its cases:
#   help        --help: exit 0, names its flags and columns
#   rows        the header; groups by size (size-S/) and offered rate,
#               tables such as curve.tsv.gz left out; each row's ratio,
#               interval, coverage and verdict judge's for that group
#   skipped     a group without the baseline: skipped, one line on stderr
#   closed      closed-loop runs: offered 'closed'; --baseline names another,
#               --every-baseline takes each in turn
#   figure      --figure cpu,p50: those figures only
#   usage       bad usage exits 2 with the usage; a missing DIR exits 1
#   check       check-findings.sh on a page of its own: figures that hold
#               pass (a table row, a paragraph over lines, a bare ratio);
#               a wrong verdict, a changed digit and a figure that links
#               no directory fail, each named with its line and what
#               judge says; units, `code` and code blocks are no figures
#   pages       every figure PAGES quote holds (fails until the pages
#               quote today's judge: the count of those that do not in
#               a diagnostic)
#   one-digit   a copy of a page with one digit of one quoted interval
#               changed, one that holds in the page: the checker fails,
#               naming it
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="help rows skipped closed figure usage check pages one-digit"
select_cases "$@"

dir=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$dir"' EXIT
FINDINGS=$ROOT/cmd/findings.sh
CHECK=$ROOT/cmd/check-findings.sh
# The pages whose figures are findings, relative to the checkout: every
# ratio, interval and verdict in them must be today's judge's. (A page
# that keeps figures as their day's judge gave them, as a history does,
# says so and is not one of them.)
PAGES="README.md results/README.md"

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
	out=$("$FINDINGS" --figure p50 --every-baseline "$dir/closed")
	is "$(tail -n +2 <<<"$out" | cut -f4,5,15 | tr '\t\n' ' |')" "user slow faster|slow user slower|" \
		"--every-baseline: each server in turn as the baseline"
}

test_figure() {
	local out
	comparison
	out=$("$FINDINGS" --figure cpu,p50 "$dir/cmp" 2>/dev/null)
	is "$(tail -n +2 <<<"$out" | cut -f6 | tr '\n' ' ')" "p50 cpu p50 cpu p50 cpu " "only p50 and cpu, in judge's order"
}

# usage_fails NAME STATUS WHY ARGS...: findings.sh exits STATUS, its first
# line on stderr WHY.
usage_fails() { fails_with "$1" "$2" "^findings\.sh: $3" "$FINDINGS" "${@:4}"; }

test_usage() {
	comparison
	usage_fails "no DIR" 2 "give the comparison directories"
	like "$("$FINDINGS" 2>&1)" $'\nfindings\\.sh \\[--baseline LABEL \\| --every-baseline\\]' "no DIR: the usage follows"
	usage_fails "bad figure" 2 "--figure: no figure 'p90'" --figure p90 "$dir/cmp"
	usage_fails "unknown flag" 2 "unknown option '--bogus'" --bogus "$dir/cmp"
	usage_fails "missing DIR" 1 "'$dir/missing' is no directory" "$dir/missing"
}

# ---- cmd/check-findings.sh ---------------------------------------------------

# re TEXT: TEXT as a regex that matches it alone.
# shellcheck disable=SC2001 # a class of characters: sed says it plainest
re() { sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$1"; }

# bump 'R [L, H]': the same with H's last digit one more (9 becomes 0).
bump() { sed -E 's/([0-9])\]$/\1X]/; s/0X/1/; s/1X/2/; s/2X/3/; s/3X/4/; s/4X/5/; s/5X/6/; s/6X/7/; s/7X/8/; s/8X/9/; s/9X/0/' <<<"$1"; }

# quote OUTPUT SIZE OFFERED LABEL FIGURE: 'R [L, H] VERDICT' of that row.
quote() { row "$@" | awk -F'\t' '{ print $10 " [" $11 ", " $12 "] " $15 }'; }

test_check() {
	local out rows q r verdict wrong changed page=$dir/site/results/README.md
	comparison
	mkdir -p "$dir/site/results"
	ln -sfn "$dir/cmp" "$dir/site/results/cmp"
	rows=$("$FINDINGS" "$dir/cmp" 2>/dev/null)
	q=$(quote "$rows" 64 20000 fast p50)
	r=${q%% *} verdict=${q##* }
	wrong=$([[ $verdict == faster ]] && echo slower || echo faster)
	changed=$(bump "${q% *}")
	cat >"$page" <<-EOF
		# A page

		At 64 B fast's p50 is **$q** ([cmp](cmp/summary.md)).

		| size | fast vs user |
		|---|---|
		| 64 B | $q ([cmp](cmp/summary.md)) |

		- Across lines: fast's p50 against user's
		  in [cmp](cmp/summary.md) is $r, $verdict; 12.345 us, 2.000 x
		  and \`9.999\` are no ratios.

		    9.999 [9.998, 9.999] in a code block

		Wrong verdict: ${q% *} $wrong ([cmp](cmp/summary.md)).

		A changed digit: $changed ([cmp](cmp/summary.md)).

		Linking nothing: $q.
	EOF
	out=$("$CHECK" "$page" 2>"$dir/check.err")
	is $? 1 "exit 1"
	is "$(wc -l <<<"$out")" 3 "three figures fail, no other"
	like "$(sed -n 1p <<<"$out")" "^$page:15: $(re "${q% *}") $wrong: judge's verdict is another: $dir/site/results/cmp, 64 B, offered 20000: fast against user, p50 $(re "${q% *}") $verdict\$" \
		"a wrong verdict: its line, the figure, judge's verdict"
	like "$(sed -n 2p <<<"$out")" "^$page:17: $(re "$changed"): judge gives no such ratio and interval; the nearest: .*fast against user, p50 $(re "$q")\$" \
		"a changed digit: its line, the figure, the row nearest"
	like "$(sed -n 3p <<<"$out")" "^$page:19: $(re "$q"): its paragraph, list item or row links no results directory: link the directory it comes from" \
		"no link: link the directory it comes from"
	like "$(cat "$dir/check.err")" "^check-findings\.sh: 3 of 6 quoted figures fail: 2 are not what judge says for the directories their text links, 1 link none$" \
		"the count on stderr: the table row, the paragraph over lines and the bare ratio hold"
	head -n 12 "$page" >"$dir/site/results/good.md"
	"$CHECK" "$dir/site/results/good.md" >/dev/null 2>&1
	is $? 0 "a page whose figures all hold: exit 0"
	"$CHECK" >/dev/null 2>&1
	is $? 2 "no page: exit 2"
	"$CHECK" "$dir/missing.md" >/dev/null 2>&1
	is $? 1 "a page that is not there: exit 1"
}

# checked: check-findings.sh --all over PAGES from the checkout, once for
# both cases that read it: $dir/pages.out (and .err, .rc).
checked() {
	[[ -e $dir/pages.rc ]] && return 0
	# shellcheck disable=SC2086 # PAGES: space-separated
	(cd "$ROOT" && "$CHECK" --all $PAGES) >"$dir/pages.out" 2>"$dir/pages.err"
	echo $? >"$dir/pages.rc"
}

# The suite's own pages: it fails until they quote today's judge.
test_pages() {
	checked
	diag "$(cat "$dir/pages.err")"
	grep -v ': ok$' "$dir/pages.out" | head -n 20 | while IFS= read -r l; do diag "$l"; done
	is "$(cat "$dir/pages.rc")" 0 "every ratio, interval and verdict $PAGES quote is judge's for the directory they link"
}

# One digit of one quoted interval that holds, changed in a copy of its
# page: the checker fails, naming it (issue 47's 'Done means').
test_one_digit() {
	local hit page line fig new copy d out
	checked
	# Read from a file, not a pipe: the loop's break would leave grep
	# writing to a closed pipe, and pipefail would fail on its SIGPIPE.
	grep -E '^[^:]+:[0-9]+: [0-9]+\.[0-9]{3} \[[0-9]+\.[0-9]{3}, [0-9]+\.[0-9]{3}\]( [a-z ]+)?: ok$' \
		"$dir/pages.out" >"$dir/holding"
	hit=$(while IFS=: read -r page line fig _; do
		fig=${fig# } fig=${fig%%]*}]
		[[ $(sed -n "${line}p" "$ROOT/$page") == *"$fig"* ]] && { echo "$page:$line:$fig"; break; }
	done <"$dir/holding")
	[[ -n $hit ]]
	ok $? "a quoted interval that holds in $PAGES, on one line" || return
	IFS=: read -r page line fig <<<"$hit"
	new=$(bump "$fig")
	copy=$dir/copy/$page
	mkdir -p "$dir/copy/results"
	for d in "$ROOT"/results/*/; do ln -sfn "${d%/}" "$dir/copy/results/"; done
	awk -v n="$line" -v from="$fig" -v to="$new" 'FNR == n { i = index($0, from); $0 = substr($0, 1, i - 1) to substr($0, i + length(from)) } 1' \
		"$ROOT/$page" >"$copy"
	is "$(diff "$ROOT/$page" "$copy" | grep -c '^[<>]')" 2 "the copy differs in one line"
	diag "one-digit: $page:$line: '$fig' made '$new'"
	out=$(cd "$dir/copy" && "$CHECK" "$page" 2>/dev/null)
	is $? 1 "the checker fails"
	like "$out" "(^|"$'\n'")$page:$line: $(re "$new")( [a-z ]+)?: judge gives no such ratio and interval" \
		"it names the line, the changed figure and what judge says"
}

run_tests
plan_at_end
