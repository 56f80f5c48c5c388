#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# ftrace/ in the qemu guest (function_graph, fentry, kecho): boots it, runs
# tests/guest/ftrace.sh there, then draws the guest's data on the host.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

need_guest
if ! make -C "$ROOT/ftrace" --no-print-directory >&2; then
	echo "Bail out! cannot build ftrace/funclat"
	exit 1
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# The guest prints the plan (with room for the case below) and its cases.
# One vCPU: with two, one CI run's guest hung for good during these
# cases (a soft lockup in a bash, 800 s; its stack was not shown). Not seen
# in 22 runs of funclat + trace.sh kecho since. Writing to tracefs patches
# kernel text, and on one CPU that waits for no other. A lockup now panics
# the guest, and run-vm.sh prints the kernel's last words.
VM_SMP=1 VM_TOOLS="${VM_TOOLS:-} perf" "$ROOT/vm/run-vm.sh" --timeout 900 --out "$OUT" -- bash tests/guest/ftrace.sh --extra 2 |
	tee "$OUT/tap.txt"
_tap_n=$(grep -cE '^(not )?ok ' "$OUT/tap.txt")
_tap_failed=$(grep -c '^not ok ' "$OUT/tap.txt")

bounded 60 "$ROOT/ftrace/wq-latency.sh" kecho --out "$OUT" --plot-only >/dev/null 2>&1
[[ $(head -c 4 "$OUT/wq-kecho-cdf.png" 2>/dev/null | od -An -c | tr -d ' ') == 211PNG ]]
ok $? "wq-latency/plot: the host draws the guest's kecho data (wq-kecho-cdf.png)"

# --vm from the host, bench arguments after --: they reach bench, and the
# results come back here.
bounded 300 "$ROOT/ftrace/trace.sh" kecho --vm --out "$OUT/host" -- -t 2 -r 2 -m 10 >/dev/null 2>&1
like "$(cat "$OUT/host/ftrace-kecho-digest.txt" 2>/dev/null)" $'\n'"kecho_work +[1-9]" \
	"trace/--vm: run from the host with bench flags after --, digest back on the host"
done_testing
