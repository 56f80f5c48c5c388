#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# prove.sh FILE.t...: prove -v on the test files, then the line make check
# ends with: how many cases passed, failed and were skipped (by reason),
# and which files skipped whole. prove's own summary says whether files
# passed; this line says how much of the suite that was.
#
# TESTS="NAME[:CASE[,CASE...]] ...", when set, names the files to run
# instead of the arguments: NAME is a file of tests/, with or without
# tests/ and .t, any file (make check TESTS=scale runs scale.t, which only
# check-all runs otherwise). CASE is for the file itself: a variant or a
# case of ALL_TESTS (tests/lib.sh, select_cases). For example
#     sudo make check TESTS="contract:user-w2 compare:bypass run"
# A case a file does not have is a usage error, status 2, with the file's
# cases listed, before any file runs.
#
# Exit status: prove's; 1 as well when a case failed, or, under CI
# (CI=true), when a skip names a reason that is not one of the platform
# facts of tests/lib.sh (skip does that per case already; this is the
# check that nothing got past it, whole-file skips included).
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# tests_named: the files TESTS names, each once, in its order; status 2
# when one does not exist.
tests_named() {
	local e f entries
	local -A seen=()
	read -ra entries <<<"$TESTS"
	for e in "${entries[@]}"; do
		f=${e%%:*}
		f=$(dirname "$0")/${f##*/}
		f=${f%.t}.t
		if [[ ! -f $f ]]; then
			echo "prove.sh: TESTS names '$e', but there is no $f" >&2
			return 2
		fi
		[[ -n ${seen[$f]:-} ]] || echo "$f"
		seen[$f]=1
	done
}

# cases_known: each case TESTS names is one of its file's (the file's own
# select_cases says, through --list); status 2 and the file's message
# when one is not.
cases_known() {
	local e f entries
	read -ra entries <<<"$TESTS"
	for e in "${entries[@]}"; do
		[[ $e == *:* ]] || continue
		f=${e%%:*}
		f=$(dirname "$0")/${f##*/}
		f=${f%.t}.t
		if ! grep -q '^select_cases' "$f"; then
			echo "prove.sh: ${f##*/} does not declare its cases (ALL_TESTS, select_cases): run it whole" >&2
			return 2
		fi
		TESTS=$e bash "$f" --list >/dev/null || return 2
	done
}

if [[ -n ${TESTS:-} ]]; then
	named=$(tests_named) || exit 2
	cases_known || exit 2
	mapfile -t named_files <<<"$named"
	set -- "${named_files[@]}"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# --timer: each file's time, in ms, after its cases.
prove -v --timer "$@" | tee "$log"
rc=${PIPESTATUS[0]}

# 'passed failed skipped', then one line per skip reason (its fact, the
# words before the first ':'), then 'file FILE REASON' per file skipped
# whole. prove -v prints each file's TAP as it came, after a header line;
# a whole-file skip is its header: 'tests/x.t .. skipped: REASON'
# (after the time it ended, '[HH:MM:SS] ', with --timer).
# shellcheck disable=SC2016 # awk
counts=$(awk '
	{ sub(/^\[[0-9:]+\] /, "") }
	/^ok [0-9]+/ && / # SKIP / { s++; r = $0; sub(/.* # SKIP /, "", r)
		sub(/ \(not a platform fact.*/, "", r); sub(/:.*/, "", r); why[r]++; next }
	/^ok [0-9]+/ { p++; next }
	/^not ok [0-9]+/ { f++; next }
	/^[^ ]+\.t \.+ skipped: / { r = $0; sub(/.* skipped: /, "", r); file[$1] = r }
	END { print p + 0, f + 0, s + 0
		for (r in why) print "reason", why[r], r
		for (x in file) print "file", x, file[x] }' "$log")

read -r passed failed skipped <<<"$counts"
reasons=$(awk '$1 == "reason" { k = $2; $1 = $2 = ""; sub(/^ +/, "")
	printf "%s%s %d", n++ ? ", " : "", $0, k }' <<<"$counts")
files=$(awk '$1 == "file" { x = $2; $1 = $2 = ""; sub(/^ +/, ""); r = $0; sub(/:.*/, "", r)
	printf "%s%s (%s)", n++ ? ", " : "", x, r }' <<<"$counts")

# Under CI, every reason must be a platform fact (status 2: not one).
bad=
if [[ ${CI:-} == true ]]; then
	while read -r kind _ r; do
		case $kind in
		reason) ;;
		file) r=${r%%:*} ;;
		*) continue ;;
		esac
		fact "$r" >/dev/null
		(($? != 2)) || bad+=" '$r'"
	done <<<"$counts"
fi

echo "make check: $passed passed, $failed failed, $skipped skipped${reasons:+ ($reasons)}${files:+; skipped whole: $files}"
if [[ -n $bad ]]; then
	echo "make check: CI=true and skipped for what is not a platform fact:$bad" >&2
	rc=1
fi
((failed == 0)) || ((rc != 0)) || rc=1
exit "$rc"
