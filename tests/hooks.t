#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# hooks/commit-msg, then the hook wired the way 'make hooks' wires it
# (core.hooksPath), in a throwaway repository. No root. Cases:
#   subject     a subject of 72 characters passes, one of 73 fails
#   body        a good message passes; no blank line, no body, or blank
#               lines only after the subject fail
#   empty       an empty message (comments only) fails
#   comments    git's comment lines and all below the scissors line ignored
#   exempt      merges, fixup! and squash! pass
#   hooks-path  through core.hooksPath git itself refuses a bad message
#               and takes a good one
set -uo pipefail

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="subject body empty comments exempt hooks-path"
select_cases "$@"

HOOK=$ECHOLAB_ROOT/hooks/commit-msg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# verdict WANT NAME < MESSAGE: run the hook on the message; WANT is pass or fail.
verdict() {
	local want=$1 name=$2 got=pass out
	cat >"$tmp/msg"
	out=$("$HOOK" "$tmp/msg" 2>&1) || got=fail
	[[ $got == "$want" ]]
	ok $? "$name"
	[[ $got == "$want" ]] || diag "wanted $want, got $got: $out"
}

subject72=$(printf 'a%.0s' {1..72})
subject73=${subject72}b

test_subject() {
	verdict pass "72-character subject passes" < <(printf '%s\n\nWhy.\n' "$subject72")
	verdict fail "73-character subject fails" < <(printf '%s\n\nWhy.\n' "$subject73")
}

test_body() {
	verdict pass "good message passes" < <(printf 'Add the docs test\n\nSo a stale flag fails a test.\n')
	verdict fail "missing blank line fails" < <(printf 'Add the docs test\nSo a stale flag fails a test.\n')
	verdict fail "no body fails" < <(printf 'Add the docs test\n')
	verdict fail "blank lines only after the subject fail" < <(printf 'Add the docs test\n\n\n')
}

test_empty() {
	verdict fail "empty message fails" < <(printf '\n# Please enter the commit message\n')
}

test_comments() {
	verdict pass "comment lines are ignored" < <(printf '# a comment\nAdd the docs test\n# another\n\nWhy.\n# %s\n' "$subject73")
	verdict pass "nothing below the scissors line counts" < <(printf 'Add the docs test\n\nWhy.\n# ------------------------ >8 ------------------------\n%s\n' "$subject73")
}

test_exempt() {
	verdict pass "merge commit passes" < <(printf "Merge branch 'docs20' of a very long remote name that goes on and on past the limit\n")
	verdict pass "fixup! passes" < <(printf 'fixup! Add the docs test\n')
	verdict pass "squash! passes" < <(printf 'squash! Add the docs test\n')
}

# Wired as 'make hooks' does, but to this checkout's hooks/ by absolute
# path: the throwaway repository has no hooks/ of its own.
test_hooks_path() {
	local repo=$tmp/repo
	git init -q "$repo" && git -C "$repo" config core.hooksPath "$ECHOLAB_ROOT/hooks"
	echo a >"$repo/a" && git -C "$repo" add a
	gitc "$repo" commit -q -m "$subject73" -m "Why." >/dev/null 2>&1
	[[ $? != 0 && -z $(git -C "$repo" rev-list --all 2>/dev/null) ]]
	ok $? "git refuses a 73-character subject through core.hooksPath"
	gitc "$repo" commit -q -m "Add a" -m "Why: a test." >/dev/null 2>&1
	ok $? "git takes a good message through core.hooksPath"
}

gitc() {
	local repo=$1
	shift
	git -C "$repo" -c user.name=test -c user.email=test@example.invalid "$@"
}

run_tests
plan_at_end
