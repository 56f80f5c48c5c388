#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh soak, the short form (2 runs of bench -t 1000 -r 10 per variant,
# kecho's in the guest where modules do not load): no run fails and
# nothing the server holds grows from the first run to the second (3
# runs until 2026-11-28: a descriptor or connection kept shows after one
# more run as after two, and kecho's runs in the guest took most of the
# file's 91 s; make soak's 20 runs are where slow growth shows). Then
# the verdict itself, on doctored copies of the record: each kind of
# growth is caught.
#
#   soak     run.sh soak --runs 2 exits 0 and names its directory; every
#            variant (the bypass's included) has its runs, none failed,
#            nothing grew
#   verdict  run.sh soak --verdict on copies of that record whose last
#            user row grew (fds, RSS, slab, connections) or failed: exit 1,
#            and user's row names what
#   usage    --runs 0 and an unknown variant: usage errors that say why
#
# verdict judges the record soak made (soak_record): run alone, it makes
# one first.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="soak verdict usage"
select_cases "$@"
root_or_bail_out

TMP=$(mktemp -d)
trap 'stop_all; rm -rf "$TMP"' EXIT
RUNS=2

# soak_record: run.sh soak --runs $RUNS into $TMP/soak, once; its output
# in $TMP/soak.out, its exit status in $TMP/soak.rc.
soak_record() {
	[[ -e $TMP/soak.rc ]] && return 0
	"$RUN" soak --runs "$RUNS" --out "$TMP/soak" >"$TMP/soak.out" 2>&1
	echo $? >"$TMP/soak.rc"
}

test_soak() {
	local out rc label row
	soak_record
	out=$(cat "$TMP/soak.out")
	rc=$(cat "$TMP/soak.rc")
	ok "$rc" "run.sh soak --runs $RUNS exits 0"
	((rc == 0)) || diag "$(tail -n 30 <<<"$out")"
	is "$(tail -n1 <<<"$out")" "results: $TMP/soak" "the last line names the directory"

	# Every variant, here or in the guest, with its runs and its verdict.
	while read -r label _; do
		row=$(grep "^| $label |" "$TMP/soak/summary.md")
		is "$(awk -F' [|] ' '{ print $3, $4, $NF }' <<<"$row")" "$RUNS 0 ok |" \
			"soak/$label: $RUNS runs, 0 failed, nothing grew"
		is "$(awk -F'\t' -v l="$label" '$1 == l && $5 == 0 && $4 == 10000' "$TMP/soak/soak.tsv" | wc -l)" "$RUNS" \
			"soak/$label: soak.tsv has $RUNS rows of 10000 samples, 0 failed"
	done < <(all_variants)
}

# doctored COLUMN HOW: a copy of the record with the last user row changed.
doctored() {
	local d=$TMP/$1
	mkdir -p "$d"
	awk -F'\t' -v OFS='\t' -v name="$1" -v how="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
		$1 == "user" && $3 == runs { $c[name] = how == "+1" ? $c[name] + 1 : int($c[name] * 1.2) }
		{ print }' runs="$RUNS" "$TMP/soak/soak.tsv" >"$d/soak.tsv"
	echo "$d"
}

# The verdict, on copies whose last row of one variant says it grew.
test_verdict() {
	local check column how word d rc
	soak_record
	for check in "fds +1 fds" "rss_kb x1.2 RSS" "slab_kb x1.2 slab" "sockets +1 connections" "failed +1 failed"; do
		read -r column how word <<<"$check"
		d=$(doctored "$column" "$how")
		"$RUN" soak --verdict "$d" >/dev/null 2>&1
		rc=$?
		is "$rc/$(grep -c "^| user | .*grew or failed:.*\\b$word\\b" "$d/summary.md")" 1/1 \
			"$column $how in user's last run: exit 1, user's row says '$word'"
	done
}

test_usage() {
	local out
	out=$("$RUN" soak --runs 0 2>&1)
	is "$?" 2 "run.sh soak --runs 0: exit 2 (a usage error)"
	like "$out" "--runs needs a positive number" "run.sh soak --runs 0: says why"
	out=$("$RUN" soak nosuch 2>&1)
	is "$?" 2 "run.sh soak nosuch: exit 2 (a usage error)"
	like "$out" "unknown variant 'nosuch'" "run.sh soak nosuch: names it"
}

run_tests
plan_at_end
