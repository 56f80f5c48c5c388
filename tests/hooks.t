#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# hooks/commit-msg: a subject of at most 72 characters, a blank line, a
# body; git's comments ignored; merges and fixup!/squash! pass. Then the
# hook wired the way 'make hooks' wires it (core.hooksPath), in a
# throwaway repository: git itself refuses a bad message. No root.
set -uo pipefail

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
HOOK=$ROOT/hooks/commit-msg
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

plan 14
verdict pass "hook/good message passes" < <(printf 'Add the docs test\n\nSo a stale flag fails a test.\n')
verdict pass "hook/72-character subject passes" < <(printf '%s\n\nWhy.\n' "$subject72")
verdict fail "hook/73-character subject fails" < <(printf '%s\n\nWhy.\n' "$subject73")
verdict fail "hook/missing blank line fails" < <(printf 'Add the docs test\nSo a stale flag fails a test.\n')
verdict fail "hook/no body fails" < <(printf 'Add the docs test\n')
verdict fail "hook/blank lines only after the subject fail" < <(printf 'Add the docs test\n\n\n')
verdict fail "hook/empty message fails" < <(printf '\n# Please enter the commit message\n')
verdict pass "hook/comment lines are ignored" < <(printf '# a comment\nAdd the docs test\n# another\n\nWhy.\n# %s\n' "$subject73")
verdict pass "hook/nothing below the scissors line counts" < <(printf 'Add the docs test\n\nWhy.\n# ------------------------ >8 ------------------------\n%s\n' "$subject73")
verdict pass "hook/merge commit passes" < <(printf "Merge branch 'docs20' of a very long remote name that goes on and on past the limit\n")
verdict pass "hook/fixup! passes" < <(printf 'fixup! Add the docs test\n')
verdict pass "hook/squash! passes" < <(printf 'squash! Add the docs test\n')

# Wired as 'make hooks' does, but to this checkout's hooks/ by absolute
# path: the throwaway repository has no hooks/ of its own.
repo=$tmp/repo
git init -q "$repo" && git -C "$repo" config core.hooksPath "$ROOT/hooks"
gitc() { git -C "$repo" -c user.name=test -c user.email=test@example.invalid "$@"; }
echo a >"$repo/a" && git -C "$repo" add a
gitc commit -q -m "$subject73" -m "Why." >/dev/null 2>&1
[[ $? != 0 && -z $(git -C "$repo" rev-list --all 2>/dev/null) ]]
ok $? "hook/git refuses a 73-character subject through core.hooksPath"
gitc commit -q -m "Add a" -m "Why: a test." >/dev/null 2>&1
ok $? "hook/git takes a good message through core.hooksPath"

done_testing
