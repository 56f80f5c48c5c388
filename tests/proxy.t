#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The proxy's contract (proxy/, servers/proxy.sh), on every path it has:
# natively, and in the qemu guest on each guest kernel (vm-proxy.t).
#
# For each proxy variant (relayed_variants; --list prints them:
# user-proxy-copy, user-proxy-splice, user-proxy-uring, user-proxy-sockmap,
# user-proxy-skmsg, and HAProxy's and nginx's), from its own start to its
# own stop (on the skmsg path every client in the bypass's cgroup, through
# run.sh client, so that both legs take the bypass, and its counters show
# that they did):
#   run.sh user --proxy PATH: the proxy on 127.0.0.1 and the port, the
#   backend on 127.0.0.1 and the next port; through it, exact echoes of
#   1 B, 64 KiB and 1 MiB, 200 fresh connections of one request each
#   (their bytes wait for the proxy to reach the backend), 16 KiB over 50
#   connections at 6,000 msg/s offered (300 in the guest; sockmap's
#   relay and the process take turns: a byte that overtakes another
#   fails an echo), a client reset with 1 MiB in flight (the proxy's end reset too), 20 half-closes;
#   a client that never reads, sending for 5 s: the kernel takes at most
#   what TCP's buffers hold along both hops and the path's own (their
#   windows hold it back, whatever the path); 10,000 connections held at
#   once (fewer where the hard limit on descriptors is under 20,064; in
#   the guest 2,000, on the sockmap path only), a client served beside
#   them; stop under load, and a kill -9 of the
#   proxy under load, leave nothing (no process, listener, program, map);
#   a busy port is refused.
#   Then the proxy alone (on the skmsg path with a sockredir of the
#   test's own, the proxy and tests/relay in its cgroup) in front of
#   tests/relay, which is both the
#   client and the backend and sees both sides of each byte: a FIN from
#   either side reaches the other after every byte before it (1 MiB), and
#   the other direction still flows; a reset from either side reaches the
#   other as a reset; a backend that goes mid-stream, or is not there,
#   ends the client's connection (never a hang); bytes sent before the
#   proxy reaches the backend (its accept queue full), with and without
#   the client's FIN, all arrive.
# And one case more:
#   usage   run.sh's --proxy and the proxy's own bad arguments refused
#           (exit 2), with the argument named
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="usage $(variant_cases relayed_variants)"
select_cases "$@"
root_or_bail_out

trap stop_all EXIT
PROXY=$(server_binary proxy)
SOCKREDIR=$(server_binary bypass)
RELAY=$ECHOLAB_ROOT/tests/build/relay
NEVERREAD=$ECHOLAB_ROOT/tests/build/neverread
BACKEND_PORT=$((PORT + 1))
# What TCP's buffers allow a client that never reads, through two hops:
# the bytes go client -> proxy -> backend -> proxy -> client, four sockets
# sending and four receiving, each at most net.ipv4.tcp_wmem's and
# tcp_rmem's largest (autotuned up to them), and what the processes hold:
# a read each (1 MiB for all), the uring path's ring of 256 buffers of
# 64 KiB (16 MiB), the sockmap path's flow limit each way (2 MiB), the
# skmsg path's bypass, which moves a send onto a peer's queue until the
# peer has its flow limit unread (4 MiB: sockredir.h), on each of the
# four ends that send (16 MiB).
# Natively 145 MiB + the path's (rmem up to 32 MiB), measured 19-69 MB; in
# the guest 41 MiB + the path's, uring measured 45 MB there (the
# '# neverread:' line). A relay without flow control reaches the cap,
# the bound + 64 MiB, in well under a second.
read -r _ _ wmem </proc/sys/net/ipv4/tcp_wmem
read -r _ _ rmem </proc/sys/net/ipv4/tcp_rmem
TCP_MIB=$(((4 * (wmem + rmem) >> 20) + 1))
# HAProxy and nginx hold a buffer of 16 KiB each way (tune.bufsize,
# proxy_buffer_size), HAProxy's spliced bytes a pipe each way.
declare -A HELD_MIB=([copy]=0 [splice]=0 [uring]=16 [sockmap]=2 [skmsg]=16 [haproxy]=1 [nginx]=1)
# 10,000 clients, or as many as the hard limit on descriptors lets the
# proxy hold at two a client, when that is fewer (20,000 here: 9,968).
# In the guest 2,000: its emulated CPU closes some 40 connections a
# second through the sockmap path (7,800 of 10,000 in 180 s on 6.1).
HOLD=$(( $(ulimit -Hn) / 2 - 32 ))
((HOLD <= 10000)) || HOLD=10000
[[ ${ECHOLAB_WHERE:-} != vm ]] || HOLD=2000
# The 16 KiB load: half the proxy's capacity natively; what the guest's
# emulated CPUs carry without timing out there (500 was client-bound).
LOAD16=6000
[[ ${ECHOLAB_WHERE:-} != vm ]] || LOAD16=300
# Half-closes in a row (0.3 s each in the guest).
HALFCLOSES=20

# Where HAProxy or nginx may do otherwise than the contract: RELAY/CASE ->
# what it may do instead, as tests/relay's message says it; the case
# passes on either, by name. A reset goes on as a FIN (HAProxy's: now one,
# now the other, by timing; nginx's: always a FIN): neither has a setting
# that passes one on (HAProxy's 'option nolinger' resets every close,
# the clean ones too). HAProxy stops at once on SIGTERM, by that signal
# (status 143); its soft stop is SIGUSR1. proxy/README.md ("HAProxy and
# nginx") says more.
declare -A OTHERWISE=(
	[haproxy/rst-client]="the client's reset reached the backend as EOF"
	[haproxy/rst-backend]="the backend's reset reached the client as EOF"
	[nginx/rst-client]="the client's reset reached the backend as EOF"
	[nginx/rst-backend]="the backend's reset reached the client as EOF"
	[haproxy/sigterm]=143
)

# relay_case LABEL PATH SCENARIO [BYTES]: the proxy binary on PATH in
# front of tests/relay, which is the backend on the spare port.
relay_case() {
	local label=$1 path=$2 out rc otherwise
	shift 2
	otherwise=${OTHERWISE[$path/$1]:-}
	out=$(bounded 60 "${INTO_BYPASS[@]}" "$RELAY" "$PORT" "$SPARE_PORT" "$@" 2>&1)
	rc=$?
	if [[ -n $otherwise ]]; then
		((rc == 0)) || [[ $out == *"$otherwise"* ]]
		ok $? "$label/relay: $*: as the contract, or as $path may by design: $otherwise"
		diag "$label/relay: $*: $(head -n1 <<<"$out")"
		return
	fi
	ok "$rc" "$label/relay: $*: $(head -n1 <<<"$out")"
	((rc == 0)) || diag "$out"
	# The kernel's early EAGAIN on the skmsg path (tests/recvwait.h).
	((rc != 0)) || ! grep -q '^note: ' <<<"$out" || diag "$label/relay: $*: $(grep '^note: ' <<<"$out")"
}

# relay_listens LOG: the proxy says it listens on $PORT; HAProxy and
# nginx are asked (ss).
relay_listens() { grep -q '^proxy .* on ' "$1" || [[ -n $(listeners "$PORT") ]]; }

# The skmsg path's relay scenarios: a sockredir of the test's own on the
# proxy's port and tests/relay's (OWN_BYPASS its pid), and what puts a
# command into its cgroup first (INTO_BYPASS: a process joins a cgroup
# itself, then becomes the command).
OWN_BYPASS=
INTO_BYPASS=()

# own_bypass LOG: that sockredir, attached, or status 1.
own_bypass() {
	local cg
	"$SOCKREDIR" -p "$PORT" -p "$SPARE_PORT" >"$1" 2>&1 &
	OWN_BYPASS=$!
	wait_until 20 sockredir_cgroup "$1" >/dev/null
	cg=$(sockredir_cgroup "$1") || return 1
	# shellcheck disable=SC2016 # the inner shell's $$, $1 and $@
	INTO_BYPASS=(bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' into-bypass "$cg")
}

# own_bypass_stop LABEL LOG: it stops (exit 0, its cgroup removed), and
# its counters say it moved bytes.
own_bypass_stop() {
	local label=$1 log=$2 moved
	[[ -n $OWN_BYPASS ]] || return 0
	stop_bounded "$OWN_BYPASS"
	ok $? "$label/relay: the bypass (sockredir) exits 0 on SIGTERM"
	moved=$(sed -n 's/^counters .*bytes_redirected=\([0-9]*\).*/\1/p' "$log")
	((${moved:-0} > 0))
	ok $? "$label/relay: the bypass moved the relay's bytes ($(grep '^counters' "$log"))"
	OWN_BYPASS=''
	INTO_BYPASS=()
}

# The relay's scenarios against the proxy binary alone, on PATH, or
# HAProxy or nginx alone (proxy/relays/relay.sh).
relay_scenarios() {
	local label=$1 path=$2 pid log dir blog cmd=("$PROXY" --path "$2")
	log=$(mktemp)
	blog=$(mktemp)
	dir=$(mktemp -d)
	[[ $path != haproxy && $path != nginx ]] ||
		cmd=("$ECHOLAB_ROOT/proxy/relays/relay.sh" "$path" --dir "$dir")
	if [[ $path == skmsg ]]; then
		cmd=("$PROXY" --path copy)
		if ! own_bypass "$blog"; then
			ok 1 "$label/relay: the bypass (sockredir) attaches"
			diag "$(cat "$blog")"
			own_bypass_stop "$label" "$blog"
			rm -rf "$log" "$blog" "$dir"
			return
		fi
	fi
	"${INTO_BYPASS[@]}" "${cmd[@]}" --port "$PORT" --backend-port "$SPARE_PORT" >"$log" 2>&1 &
	pid=$!
	if ! wait_until 10 relay_listens "$log"; then
		ok 1 "$label/relay: the proxy listens"
		diag "$(cat "$log")"
		kill "$pid" 2>/dev/null
		own_bypass_stop "$label" "$blog"
		rm -rf "$log" "$blog" "$dir"
		return
	fi
	relay_case "$label" "$path" fin-client 1048576
	relay_case "$label" "$path" fin-backend 1048576
	relay_case "$label" "$path" rst-client 1048576
	relay_case "$label" "$path" rst-backend 1048576
	relay_case "$label" "$path" gone 1048576
	relay_case "$label" "$path" down
	relay_case "$label" "$path" early 65536
	relay_case "$label" "$path" early-fin 65536
	stop_bounded "$pid"
	is $? "${OTHERWISE[$path/sigterm]:-0}" "$label/relay: the proxy exits ${OTHERWISE[$path/sigterm]:-0} on SIGTERM"
	diag "$label/relay: $(tail -n1 "$log")"
	own_bypass_stop "$label" "$blog"
	rm -rf "$log" "$blog" "$dir"
}

# established_to PORT: connections established to PORT (ss).
established_to() { ss -Htn state established "sport = :$1" 2>/dev/null | wc -l; }

# backend_holds N [-]: the backend has N connections or more (with -: N
# or fewer), for wait_until.
backend_holds() {
	local n
	n=$(established_to "$BACKEND_PORT")
	if [[ ${2:-} == - ]]; then ((n <= $1)); else ((n >= $1)); fi
}

# hold_many LABEL PATH: HOLD connections at once through the proxy on
# $PORT (HAProxy: its maxconn, if that is fewer), a client served beside
# them, and their backend connections closed once they go: as many as
# before them. (HAProxy keeps the never-reading client's until its
# 'timeout server', 60 s: proxy/README.md.)
hold_many() {
	local label=$1 pid n hold=$HOLD why='' maxconn before
	before=$(established_to "$BACKEND_PORT")
	if [[ $2 == haproxy ]]; then
		maxconn=$(sed -n 's/^[[:space:]]*maxconn \([0-9]*\)$/\1/p' "$STATE_DIR/relay/haproxy.cfg")
		if ((maxconn - 32 < hold)); then
			hold=$((maxconn - 32))
			why=" (HAProxy's maxconn $maxconn, from its descriptors: proxy/relays/relay.sh)"
		fi
	fi
	(ulimit -n $((hold + 1000)) && exec "${CLIENT[@]}" "$PROBE" hold "$PORT" "$hold" 30) >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_until 60 backend_holds "$hold"
	n=$(established_to "$BACKEND_PORT")
	ok $((n < hold)) "$label/10k: $hold connections held through the proxy$why (the backend has $n)"
	bench_ok "$label/10k: a client served beside them" -t 10 -r 2
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	PIDS=()
	# The guest's emulated CPU takes a minute to close them all.
	wait_until "$([[ ${ECHOLAB_WHERE:-} == vm ]] && echo 180 || echo 30)" backend_holds "$before" -
	is "$(established_to "$BACKEND_PORT")" "$before" \
		"$label/10k: their backend connections closed once they went ($before before them)"
}

# stops_under_load LABEL BASELINE START...: run.sh stop under load, then
# a restart and a kill -9 of the proxy under load: each leaves nothing
# more than BASELINE.
stops_under_load() {
	local label=$1 base=$2 pid
	shift 2
	bounded 30 "${CLIENT[@]}" "$BENCH" -p "$PORT" -t 50 -d 5 -q -o /dev/null >/dev/null 2>&1 &
	PIDS+=($!)
	sleep 1
	"$RUN" stop >/dev/null
	ok $? "$label/stop under load: run.sh stop (it checks the cleanup itself)"
	wait "${PIDS[@]}" 2>/dev/null
	PIDS=()
	nothing_left_since "$label/stop under load" "$base"

	"$RUN" "$@" >/dev/null
	ok $? "$label/restart: run.sh $*"
	pid=$(state proxy.pid)
	bounded 30 "${CLIENT[@]}" "$BENCH" -p "$PORT" -t 50 -d 5 -q -o /dev/null >/dev/null 2>&1 &
	PIDS+=($!)
	sleep 1
	[[ -n $pid ]] && kill -9 "$pid"
	wait "${PIDS[@]}" 2>/dev/null
	PIDS=()
	"$RUN" stop >/dev/null
	ok $? "$label/kill -9 of the proxy under load: run.sh stop cleans up after it"
	nothing_left_since "$label/kill -9 of the proxy under load" "$base"
}

# proxy_contract LABEL SERVER --proxy PATH
# shellcheck disable=SC2317 # called through each_variant
proxy_contract() {
	local label=$1 server=$2 path=$4 base out items sent bound i before early
	local start=("$server" "$3" "$path")
	base=$(leftovers_or_why) || { ok 1 "$label: leftovers before the start (a tool failed)"; diag "$base"; return; }
	clients_for "${start[@]}"

	"$RUN" "${start[@]}" >/dev/null
	ok $? "$label: run.sh ${start[*]}"
	items=$( (listeners "$PORT"; listeners "$BACKEND_PORT") 2>&1 | sort | tr '\n' ' ')
	is "$items" "LISTEN 127.0.0.1:$PORT LISTEN 127.0.0.1:$BACKEND_PORT " \
		"$label: the proxy on 127.0.0.1:$PORT, the backend on 127.0.0.1:$BACKEND_PORT"
	bench_ok "$label/1-byte" -t 1 -r 1 -s 1
	bench_ok "$label/64KiB" -t 4 -r 2 -s 65536
	bench_ok "$label/1MiB" -t 2 -r 2 -s 1048576
	bench_ok "$label/fresh-connections: 200 x one request" -t 200 -r 1
	# 16 KiB messages over 50 connections, open loop: the sockmap path
	# switches between its kernel relay and the process (flow control)
	# many times a second; a byte of one overtaking the other's fails an
	# echo (2026-11-26: 11-718 failed runs' worth before caught_up()).
	before=$(bpf_counters "$(state bypass.pid)" redir_counters)
	bench_ok "$label/16KiB-load: 50 connections, $LOAD16 msg/s offered" \
		-c 50 -R "$LOAD16" -s 16384 -d 3 --warmup 1
	[[ $path != skmsg ]] || bypass_carried "$label/16KiB-load" "$before"
	reset_ok "$label/reset" "${CLIENT[@]}"
	# Twenty times: sockmap's FIN, passed up behind its peer's relay, once
	# broke that relay (EPIPE) and reset 5-12 of 200 (6.12, 2026-11-27).
	out=
	early=0
	for ((i = 0; i < HALFCLOSES; i++)); do
		out=$(bounded 60 "${CLIENT[@]}" "$PROBE" halfclose "$PORT" 65536 2>&1) || break
		! grep -q '^note: ' <<<"$out" || early=$((early + 1))
	done
	((i == HALFCLOSES))
	ok $? "$label/half-close: 64 KiB echoed, then EOF, $HALFCLOSES times"
	((early == 0)) || diag "$label/half-close: $early of them: a recv() said EAGAIN early (tests/recvwait.h)"
	((i == HALFCLOSES)) || diag "$label/half-close: the $((i + 1))th: $out; the proxy: $(bpf_counters "$(state proxy.pid)" proxy_counters)"

	# A client that never reads.
	bound=$((TCP_MIB + ${HELD_MIB[$path]:-0}))
	out=$(bounded 60 "${CLIENT[@]}" "$NEVERREAD" "$PORT" 5 $(((bound + 64) << 20)) 0 2>&1)
	sent=$(field "$out" sent)
	[[ -n $sent ]] && ((sent <= bound << 20))
	ok $? "$label/neverread: the kernel accepted at most $bound MiB from a client that never reads"
	echo "# neverread: $label sent_bytes=${sent:-?}"
	[[ -n $sent ]] || diag "$out"
	bench_ok "$label/neverread: a client served after it" -t 10 -r 2 -s 65536

	# 10,000 connections at once. In the guest, 2,000 and on the sockmap
	# path only, whose psocks are per socket and the kernel's: the other
	# paths' are the process's, checked natively.
	if [[ ${ECHOLAB_WHERE:-} == vm && $path != sockmap ]]; then
		diag "$label/10k: natively only (in the guest: the sockmap path's)"
	else
		hold_many "$label" "$path"
	fi

	stops_under_load "$label" "$base" "${start[@]}"
	busy_port_refused "$label" "${start[@]}"
	nothing_left_since "$label/busy-port" "$base"

	CLIENT=()
	relay_scenarios "$label" "$path"
	nothing_left_since "$label/relay" "$base"
}

# bypass_carried NAME BEFORE: since the counters BEFORE, the skmsg path's
# bypass moved at least BYPASS_SHARE% of the bytes sent on both legs,
# each way (the rest went through TCP: an end that sent before its peer
# was in the map stays there, sockredir.bpf.c).
BYPASS_SHARE=90
bypass_carried() {
	local name=$1 before=$2 after moved passed
	after=$(bpf_counters "$(state bypass.pid)" redir_counters)
	moved=$(grew "$before" "$after" bytes_redirected) &&
		passed=$(grew "$before" "$after" bytes_passed) &&
		((moved > 0 && moved * 100 >= (moved + passed) * BYPASS_SHARE))
	ok $? "$name: the bypass moved $moved bytes around TCP/IP, $passed through it (at least $BYPASS_SHARE% around)"
}

# usage_refused NAME WANT CMD...: exit 2, and the message says WANT.
usage_refused() {
	local name=$1 want=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	is "$rc" 2 "usage/$name: exit 2"
	like "$out" "$want" "usage/$name: says '$want'"
}

test_usage() {
	usage_refused run-no-path "--proxy needs a PATH" "$RUN" user --proxy
	usage_refused run-bad-path "'bogus' is no path" "$RUN" user --proxy bogus
	usage_refused run-with-bypass "goes only in front of user, command, not ebpf" "$RUN" ebpf --bypass --proxy copy
	usage_refused run-two-fronts "one front at a time" "$RUN" user --bypass --proxy copy
	usage_refused proxy-no-path "name a path" "$PROXY" --backend-port 1
	usage_refused proxy-no-backend "name the backend" "$PROXY" --path copy
	usage_refused proxy-bad-path "'x' is no path" "$PROXY" --path x --backend-port 1
	usage_refused proxy-itself "cannot be the proxy itself" "$PROXY" --path copy --backend-port "$PORT"
	usage_refused proxy-buffer "--buffer-size" "$PROXY" --path copy --backend-port 1 --buffer-size 10
	usage_refused proxy-stray "unexpected argument 'stray'" "$PROXY" --path copy --backend-port 1 stray
}

case_selected usage && test_usage
each_variant proxy_contract relayed_variants
plan_at_end
