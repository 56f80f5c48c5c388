#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh's command line: usage errors, privileges, stop and status when idle,
# and `run.sh bench`, the quick-start command. Cases:
#   no-command, unknown-server, bad-flag, bad-port, port-not-a-number,
#   bad-addr, addr-out-of-range, stop-extra-args, list-extra-args
#                      each usage error exits 2 and points to --help
#   help               --help exits 0 and lists the servers
#   status-idle        status with no server running says so
#   list               list: every variant, and when compare measures it
#   not-root           a user that is not root is told to use sudo
#   bench              run.sh bench user: summary, raw file, server stopped
#   plots              cmd/plot.sh draws PNGs from that raw file alone
#   kecho-no-modules   kecho where modules cannot load points to --vm
#   peer               a public peer (servers/peers.sh) is listed as one;
#                      not built, it exits 1 naming cmd/peers.sh build; no
#                      contract case holds it
#   label              bench names the server run.sh started
#   stop               run.sh stop of a running server exits 0
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="no-command unknown-server bad-flag bad-port port-not-a-number
	bad-addr addr-out-of-range stop-extra-args list-extra-args help
	status-idle list not-root bench plots kecho-no-modules peer label stop"
select_cases "$@"
root_or_bail_out

QUICK_OUT=
QUICK_RC=
QUICK_RAW=
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	"$RUN" stop >/dev/null 2>&1
	[[ -z $QUICK_RAW ]] || rm -f "$QUICK_RAW"
}
trap cleanup EXIT

# refused ARGS...: exit 2 and a message that points to --help.
refused() {
	local out rc
	out=$("$RUN" "$@" 2>&1)
	rc=$?
	is "$rc" 2 "exit 2"
	like "$out" "run.sh: .*Try './run.sh --help'" "says why"
}

test_no_command() { refused; }
test_unknown_server() { refused nosuchserver; }
test_bad_flag() { refused user --bogus; }
test_bad_port() { refused user --port 0; }
test_port_not_a_number() { refused user --port abc; }
test_bad_addr() { refused user --addr 1.2.3; }
test_addr_out_of_range() { refused kecho --addr 256.0.0.1; }
test_stop_extra_args() { refused stop now; }
test_list_extra_args() { refused list all; }

test_help() {
	local out
	out=$("$RUN" --help)
	ok $? "exit 0"
	like "$out" "Usage: .*user.*ebpf.*kecho" "lists the servers"
}

test_status_idle() {
	local out
	"$RUN" stop >/dev/null 2>&1
	out=$("$RUN" status)
	ok $? "exit 0"
	like "$out" "no server is running" "says so"
}

# list: every variant compare --servers takes, and when each is measured
test_list() {
	local out
	out=$("$RUN" list)
	ok $? "exit 0"
	like "$out" "(^|"$'\n'")user +user +- +every compare" "user, measured by every compare"
	like "$out" "(^|"$'\n'")ebpf-noflow +ebpf +-- --flow-limit 0 +only when --servers names it" \
		"the ablation ebpf-noflow, measured only when named"
}

# setpriv: util-linux, which make deps installs.
test_not_root() {
	local out
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$RUN" user 2>&1)
	is $? 1 "exit 1"
	like "$out" "needs root.*sudo" "says to use sudo"
}

# quick_start: the quick-start command, run once for the cases that read
# it (bench, plots): its output in QUICK_OUT, its status in QUICK_RC, its
# raw file in QUICK_RAW.
quick_start() {
	[[ -z $QUICK_RC ]] || return 0
	QUICK_OUT=$("$RUN" bench user -t 50 -r 2 2>&1)
	QUICK_RC=$?
	QUICK_RAW=$(sed -n 's/^raw samples: //p' <<<"$QUICK_OUT")
}

# The quick-start command: start, bench, summary, raw file, stop.
test_bench() {
	local summary
	quick_start
	is "$QUICK_RC" 0 "exit 0"
	((QUICK_RC == 0)) || diag "$QUICK_OUT"
	summary=$(grep '^summary ' <<<"$QUICK_OUT")
	is "$(field "$summary" label)" user "labelled user"
	is "$(field "$summary" samples)" 100 "100 samples"
	[[ -f $QUICK_RAW ]]
	ok $? "raw file written"
	diag "bench: raw file $QUICK_RAW"
	is "$(grep -vc '^#' "$QUICK_RAW")" 100 "one row per sample"
	grep -q '^# where=native' "$QUICK_RAW"
	ok $? "metadata says where it ran"
	absent "server stopped, port free" . listeners "$PORT"
}

# make plots draws from the raw file alone.
test_plots() {
	local plotdir png
	quick_start
	plotdir=$(mktemp -d)
	cp "$QUICK_RAW" "$plotdir/"
	"$ECHOLAB_ROOT/cmd/plot.sh" "$plotdir" >/dev/null
	ok $? "exit 0"
	for png in boxplot cdf scatter-user; do
		[[ $(head -c 8 "$plotdir/$png.png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]
		ok $? "$png.png is a PNG"
	done
	rm -rf "$plotdir"
}

# kecho where modules cannot load: say so, point to the guest.
test_kecho_no_modules() {
	local out
	if fact no-modules >/dev/null; then
		out=$("$RUN" kecho 2>&1)
		is $? 1 "exit 1"
		like "$out" "CONFIG_MODULES=n.*--vm kecho" "says why and points to --vm"
	else
		skip "exit 1" modules
		skip "says why and points to --vm" modules
	fi
}

# A peer's code is not ours (cmd/peers.sh builds it outside), so what is
# checked here is how the suite treats one: ECHOLAB_PEERS names an empty
# directory, as on a machine where nobody built them.
test_peer() {
	local out empty
	empty=$(mktemp -d)
	out=$(ECHOLAB_PEERS=$empty "$RUN" list)
	like "$out" "(^|"$'\n'")cf-naive +cf-naive +- +only when --servers names it; a public peer" \
		"list: cf-naive, a peer, measured only when named"
	out=$(ECHOLAB_PEERS=$empty "$RUN" cf-naive 2>&1)
	is $? 1 "a peer that is not built: exit 1"
	like "$out" "$empty/bin/echo-naive is not there: run 'cmd/peers.sh build'" \
		"... saying where it looked and how to build it"
	out=$("$ECHOLAB_ROOT/tests/contract.t" --list)
	[[ $out == *user* && $out != *cf-* && $out != *frevib* ]]
	ok $? "the contract's cases hold no peer"
	rmdir "$empty"
}

# user_running: a user server on $PORT, started by run.sh if none is.
user_running() {
	[[ $(state server) == user ]] && default_running && return 0
	"$RUN" user >/dev/null
}

# What ./bench/bench reports after ./run.sh user: the server's name.
test_label() {
	local out
	user_running
	out=$("$BENCH" -t 2 -r 1 -q -o /dev/null)
	is "$(field "$out" label)" user "bench names the server run.sh started"
}

test_stop() {
	user_running
	"$RUN" stop >/dev/null
	ok $? "exit 0"
}

run_tests
plan_at_end
