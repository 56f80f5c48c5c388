#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The suite's own helpers (tests/lib.sh) against broken tools and bad
# input: a "nothing left" check must fail when its tool is missing, fails
# or prints something else; a skip must be for a platform fact; ok must
# not pass on a garbled status. No server, no root needed: the tools are
# fakes in a directory of our own.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

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

# tap CMD...: the first TAP line that a helper prints in a shell of its own
# (its counters are not ours).
tap() { (_tap_n=0; "$@") 2>&1 | grep -m1 -E '^(not )?ok |^Bail out!'; }

plan 18

# ok: a status that is not a number is a failure.
like "$(tap ok '' x)" '^not ok' "lib/ok: an empty status fails"
like "$(tap ok 'garbled' x)" '^not ok' "lib/ok: a non-numeric status fails"
like "$(tap ok 0 x)" '^ok 1 - x$' "lib/ok: status 0 passes"

# absent: a missing, failing or unreadable tool is "cannot tell", a failure.
like "$(PATH=$fake/nobpftool tap absent x 'echo_' bpf_progs)" '^not ok' \
	"lib/absent: bpftool missing from PATH fails 'no program left'"
like "$(PATH=$fake/nobpftool tap absent x 'echo_' bpf_attachments)" '^not ok' \
	"lib/absent: bpftool missing from PATH fails 'no attachment left'"
like "$(PATH=$fake/broken tap absent x 'echo_' bpf_progs)" '^not ok' \
	"lib/absent: bpftool output it cannot read fails 'no program left'"
like "$(PATH=$fake/broken tap absent x 'echo_' bpf_attachments)" '^not ok' \
	"lib/absent: bpftool output it cannot read fails 'no attachment left'"
like "$(PATH=$fake/broken tap absent x . listeners "$SPARE_PORT")" '^not ok' \
	"lib/absent: a failing ss fails 'port free'"
PATH=$fake/broken port_free "$SPARE_PORT" 2>/dev/null
is $? 1 "lib/port_free: false when ss fails"
like "$(PROC_ROOT=$fake tap absent x . processes sockredir)" '^not ok' \
	"lib/absent: a /proc it cannot read fails 'no process left'"
like "$(tap absent x . processes 'no-such-process-[0-9]{9}')" '^ok' \
	"lib/absent: no process matching is nothing found"
like "$(sleep 5 & tap absent x . processes '^sleep 5$'; kill $!)" '^not ok' \
	"lib/absent: a process matching is found"

# skip: for a platform fact that holds, else a failure (under CI always).
other=one-cpu
fact one-cpu >/dev/null && other=modules
fact "$other" >/dev/null && other=no-modules
like "$(tap skip x "$other")" '^not ok' "lib/skip: a fact this machine does not have ($other) fails"
like "$(CI='' tap skip x 'port is busy')" '^ok 1 - x # SKIP port is busy \(not a platform fact' \
	"lib/skip: any other reason is a visible skip outside CI"
like "$(CI=true tap skip x 'port is busy')" '^not ok' "lib/skip: any other reason fails under CI=true"
like "$( (skip_all 'port is busy') 2>&1)" '^Bail out!' "lib/skip_all: only for a platform fact"

# grew: a counter that could not be read is no number.
grew "a=1" "b=2" a >/dev/null
is $? 1 "lib/grew: fails when the second line lacks the counter"

# stop_bounded: a process that ignores SIGTERM is killed, not waited for.
bash -c 'trap "" TERM; sleep 60' &
sleep 0.5	# its trap set before the SIGTERM comes
start=$SECONDS
stop_bounded $! 1 >/dev/null 2>&1
rc=$?
((rc == 137 && SECONDS - start < 10))
ok $? "lib/stop_bounded: SIGKILL after its bound"
diag "lib/stop_bounded: status $rc after $((SECONDS - start)) s"

done_testing
