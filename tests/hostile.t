#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Hostile streams, every path (issue 48): tests/hostile (hostile.c) against
# each native server and through each of the proxy's paths, RUNS runs in a
# row on one start of the server: 40 connections for S seconds each run,
# messages of 1 B to 256 KiB whose every byte is checked, a reader that
# pauses so that flow control trips, every connection ending in a
# half-close and drain or in a reset mid-message.
#
# Its cases: user, uring, ebpf; user-bypass (the clients in the bypass's
# cgroup); user-proxy-copy, user-proxy-splice,
# user-proxy-uring, user-proxy-sockmap, user-proxy-skmsg (user behind the
# proxy's path; on skmsg the clients in the bypass's cgroup);
# kecho-unbound (kecho's default mode, in the qemu guest where modules do
# not load here; also named kecho). Each: a fresh ./run.sh SERVER [--proxy
# PATH], then RUNS runs, each of which must end with exit 0 (not one wrong
# byte, no timeout, no error) and leave the server (and the proxy) running
# (./run.sh status, their pids); then ./run.sh stop leaves nothing.
#
#   HOSTILE_RUNS  runs per case (default 10)
#   HOSTILE_S     seconds per run (default 20)
#   HOSTILE_N     connections at once (default 40)
#   HOSTILE_SEED  the seed of the first run (the next run's is one more);
#                 default: a new one each run, printed in its summary
#   HOSTILE_OUT   a directory to keep each run's whole output in
#                 (LABEL-RUN.txt)
#
# make check-all runs it short, 1 run of 5 s per case (the Makefile's
# HOSTILE_SHORT), and kecho-unbound in make vm-check (KECHO_LATER);
# make soak-hostile runs every case at the defaults, 10 x 20 s (about 4
# minutes a case, docs/faults.md has the figures). Each case ends with a
# '# hostile: LABEL runs=... connections=... bytes_checked=...' line.
# shellcheck disable=SC2317 # the functions run through each_variant
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# hostile_variants: the native servers' plain variants, kecho's default
# mode, user behind the sk_msg bypass (its clients in the bypass's
# cgroup), and the proxy's own paths with user behind each (not the extra
# sockmap-verdict-only, which is not exact by design, nor HAProxy and
# nginx: what people deploy is held to the proxy's contract, tests/proxy.t,
# and not to the suite's own soak).
hostile_variants() {
	local label rest
	all_variants | awk '$1 == $2 || $1 == "kecho-unbound" || $1 == "user-bypass"'
	while read -r label rest; do
		[[ -n ${_variant[$label.extra]:-}${_variant[$label.deployed]:-} ]] || echo "$label $rest"
	done < <(relayed_variants)
}

ALL_TESTS=$(variant_cases hostile_variants)
select_cases "$@"
root_or_bail_out

trap stop_all EXIT
RUNS=${HOSTILE_RUNS:-10}
DURATION=${HOSTILE_S:-20}
CONNS=${HOSTILE_N:-40}
HOSTILE=$ECHOLAB_ROOT/tests/build/hostile
KEEP=${HOSTILE_OUT:-}
[[ -z $KEEP ]] || mkdir -p "$KEEP"

# The guest's run of this file gets the same counts.
_relay_from_guest() {
	relay_from_guest "${0##*/}" ONLY_SERVERS="$*" HOSTILE_RUNS="$RUNS" HOSTILE_S="$DURATION" \
		HOSTILE_N="$CONNS" ${HOSTILE_SEED:+HOSTILE_SEED="$HOSTILE_SEED"}
}

# still_running LABEL: why the server or its proxy is gone, if one is
# (nothing printed when both run).
still_running() {
	local pid out
	pid=$(server_pid)
	[[ -z $pid ]] || kill -0 "$pid" 2>/dev/null || echo "the server (pid $pid) is gone"
	pid=$(state proxy.pid)
	[[ -z $pid ]] || kill -0 "$pid" 2>/dev/null || echo "the proxy (pid $pid) is gone"
	out=$("$RUN" status 2>&1) || echo "run.sh status exits $?: $(head -n1 <<<"$out")"
	grep -E 'is gone' <<<"$out"
}

# one_run LABEL I: hostile's run I; its summary line in $LAST, status 1
# when it or the server failed.
one_run() {
	local label=$1 i=$2 out rc gone seed=()
	[[ -z ${HOSTILE_SEED:-} ]] || seed=(-S $((HOSTILE_SEED + i - 1)))
	out=$(bounded $((DURATION + 90)) "${CLIENT[@]}" "$HOSTILE" -n "$CONNS" -s "$DURATION" "${seed[@]}" \
		127.0.0.1 "$PORT" 2>&1)
	rc=$?
	[[ -z $KEEP ]] || printf '%s\n' "$out" >"$KEEP/$label-$i.txt"
	LAST=$(grep '^hostile connections=' <<<"$out" | tail -n1)
	ok "$rc" "run $i of $RUNS: every byte exact, no timeout, no error (exit 0)"
	diag "$label: run $i: ${LAST:-no summary line}"
	((rc == 0)) || diag "$(grep -v '^hostile connections=' <<<"$out" | head -n 40)"
	gone=$(still_running)
	is "$gone" "" "run $i of $RUNS: the server and its proxy still run"
	[[ $rc == 0 && -z $gone ]]
}

# hostile LABEL SERVER [START-OPTIONS...]
hostile() {
	local label=$1 server=$2 base i key sum rc n
	shift 2
	declare -A sums=()
	base=$(leftovers_or_why) || { ok 1 "leftovers before the start (a tool failed)"; diag "$base"; return; }
	clients_for "$@"
	"$RUN" "$server" "$@" >/dev/null
	ok $? "run.sh $server $*"
	for ((i = 1; i <= RUNS; i++)); do
		one_run "$label" "$i"
		rc=$?
		for key in connections halfcloses resets bytes_checked mismatches timeouts errors; do
			n=$(field "$LAST" "$key")
			sums[$key]=$((${sums[$key]:-0} + ${n:-0}))
		done
		((rc == 0)) || break
	done
	sum=
	for key in connections halfcloses resets bytes_checked mismatches timeouts errors; do
		sum+=" $key=${sums[$key]:-0}"
	done
	echo "# hostile: $label runs=$((i > RUNS ? RUNS : i)) of $RUNS seconds=$DURATION conns=$CONNS$sum"
	# Where the clients join a front (the bypass), it carried the
	# streams: else the case held TCP to the contract, not the bypass.
	if ((${#CLIENT[@]})); then
		n=$(field "$(counters_line 2>/dev/null)" msgs_redirected)
		((${n:-0} > 0))
		ok $? "the bypass carried the streams (msgs_redirected=${n:-none})"
	fi
	"$RUN" stop >/dev/null
	ok $? "run.sh stop"
	nothing_left_since "stop" "$base"
}

each_variant hostile hostile_variants

plan_at_end
