#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh's command line: usage errors, privileges, stop and status when idle,
# and `run.sh bench`, the quick-start command.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out
trap '"$RUN" stop >/dev/null 2>&1' EXIT

# refused NAME ARGS...: exit 2 and a message that points to --help.
refused() {
	local name=$1 out rc
	shift
	out=$("$RUN" "$@" 2>&1)
	rc=$?
	is "$rc" 2 "run/$name: exit 2"
	like "$out" "run.sh: .*Try './run.sh --help'" "run/$name: says why"
}

plan 42

refused no-command
refused unknown-server nosuchserver
refused bad-flag user --bogus
refused bad-port user --port 0
refused port-not-a-number user --port abc
refused bad-addr user --addr 1.2.3
refused addr-out-of-range kecho --addr 256.0.0.1
refused stop-extra-args stop now
refused list-extra-args list all

out=$("$RUN" --help)
ok $? "run/help: exit 0"
like "$out" "Usage: .*user.*ebpf.*kecho" "run/help: lists the servers"

"$RUN" stop >/dev/null 2>&1
out=$("$RUN" status)
ok $? "run/status-idle: exit 0"
like "$out" "no server is running" "run/status-idle: says so"

# list: every variant compare --servers takes, and when each is measured
out=$("$RUN" list)
ok $? "run/list: exit 0"
like "$out" "(^|"$'\n'")user +user +- +every compare" "run/list: user, measured by every compare"
like "$out" "(^|"$'\n'")ebpf-noflow +ebpf +-- --flow-limit 0 +only when --servers names it" \
	"run/list: the ablation ebpf-noflow, measured only when named"

# setpriv: util-linux, which make deps installs.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$RUN" user 2>&1)
is $? 1 "run/not-root: exit 1"
like "$out" "needs root.*sudo" "run/not-root: says to use sudo"

# The quick-start command: start, bench, summary, raw file, stop.
out=$("$RUN" bench user -t 50 -r 2 2>&1)
rc=$?
is "$rc" 0 "run/bench: exit 0"
((rc == 0)) || diag "$out"
summary=$(grep '^summary ' <<<"$out")
is "$(field "$summary" label)" user "run/bench: labelled user"
is "$(field "$summary" samples)" 100 "run/bench: 100 samples"
raw=$(sed -n 's/^raw samples: //p' <<<"$out")
[[ -f $raw ]]
ok $? "run/bench: raw file written"
diag "run/bench: raw file $raw"
is "$(grep -vc '^#' "$raw")" 100 "run/bench: one row per sample"
grep -q '^# where=native' "$raw"
ok $? "run/bench: metadata says where it ran"
absent "run/bench: server stopped, port free" . listeners "$PORT"

# make plots draws from the raw file alone.
plotdir=$(mktemp -d)
cp "$raw" "$plotdir/"
"$ROOT/cmd/plot.sh" "$plotdir" >/dev/null
ok $? "run/plots: exit 0"
for png in boxplot cdf scatter-user; do
	[[ $(head -c 8 "$plotdir/$png.png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]
	ok $? "run/plots: $png.png is a PNG"
done
rm -rf "$plotdir" "$raw"

# kecho where modules cannot load: say so, point to the guest.
if fact no-modules >/dev/null; then
	out=$("$RUN" kecho 2>&1)
	is $? 1 "run/kecho-no-modules: exit 1"
	like "$out" "CONFIG_MODULES=n.*--vm kecho" "run/kecho-no-modules: says why and points to --vm"
else
	skip "run/kecho-no-modules: exit 1" modules
	skip "run/kecho-no-modules: says why and points to --vm" modules
fi

# What ./bench/bench reports after ./run.sh user: the server's name.
"$RUN" user >/dev/null
out=$("$BENCH" -t 2 -r 1 -q -o /dev/null)
is "$(field "$out" label)" user "run/label: bench names the server run.sh started"
"$RUN" stop >/dev/null
ok $? "run/stop: exit 0"

done_testing
