#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Faults: every declared variant, the bypass included, against clients that
# misbehave and against a server that is stopped or killed under load:
# natively where it runs here, in the qemu guest where it cannot (kecho).
#
#   crowds of FAULT_CLIENTS (default 1000) connections, one kind at a time:
#   trickle (a message a byte every 100 ms), noread (send, never read),
#   idle (connect, send nothing), resets (before sending, mid-message,
#   with the echo queued); beside each, a well-behaved client (bench -t 10
#   -r 20) with no failure and no response slower than BOUND_MS, and the
#   server's memory growth per crowd connection under its bound;
#   afterwards the server holds none of their connections open.
#   Then SIGSTOP/SIGCONT for 2 s under load (no request lost), kill -9 or
#   rmmod under load, the bypass's loader killed mid-run: nothing left, a
#   restart serves at once, and dmesg has no warning.
#
# Each crowd's figures (time, memory per connection) are on a '# faults:'
# line of the output: README "Faults and scale" has them.
#
# Its cases are the declared variants, the bypass's included
# (variant_cases all_variants; --list prints them): user, user-w2,
# user-splice, uring, user-bypass, ebpf, kecho-unbound, kecho-bound,
# kecho-kthread, and kecho for kecho's three. Each checks all of the above
# on its variant, from its own start to its own stop.
#
# ONLY_SERVERS="NAME..." limits it to those servers or variants (the
# guest's run).
# shellcheck disable=SC2317 # the functions run through each_variant
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS=$(variant_cases all_variants)
select_cases "$@"
root_or_bail_out

trap stop_all EXIT
export ECHOLAB_TW_MAX=1000000	# function, not timing

N=${FAULT_CLIENTS:-1000}
# The well-behaved client's slowest response while a crowd runs; the
# guest's TCG runs 10-50 x slower than the host.
if [[ ${ECHOLAB_WHERE:-} == vm ]]; then
	BOUND_MS=10000
	NOREAD_MAX=$((128 << 10))	# 1000 of them in the guest's 2 GiB
else
	BOUND_MS=1000
	NOREAD_MAX=$((1 << 20))
fi
# What the server itself (its process: RSS) may grow by per connection of
# a crowd; a server that buffers what it cannot send grows far beyond.
RSS_BOUND_KB=64

# has_line FILE REGEX: a line of FILE matches (for wait_until).
has_line() { grep -qE "$2" "$1" 2>/dev/null; }

# process_state_is PID STATE: the process's state (/proc/PID/stat) is
# STATE (for wait_until).
process_state_is() { [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) == "$2" ]]; }

# crowd LABEL KIND READY-REGEX PROBE-ARGS...: the probe's crowd against the
# server (through PREFIX), a well-behaved client beside it, the memory at
# the crowd's peak: when the probe's output matches READY-REGEX ('-': a
# crowd that holds nothing, memory not measured).
crowd() {
	local label=$1 kind=$2 ready=$3 out bench rc mem0 mem1 rss tcp slab probe good
	shift 3
	out=$(mktemp)
	mem0=$(memory_of "$PID")
	bounded 120 "${PREFIX[@]}" "$PROBE" "$@" >"$out" 2>&1 &
	probe=$!
	[[ $ready == - ]] || wait_until 30 has_line "$out" "$ready"
	mem1=$(memory_of "$PID")
	bench=$(bounded 120 "${PREFIX[@]}" "$BENCH" -p "$PORT" -t 10 -r 20 -q -o /dev/null 2>&1)
	wait "$probe"
	rc=$?
	ok "$rc" "$label/$kind: $N clients"
	if ((rc == 0)); then diag "$label/$kind: $(tail -n1 "$out")"; else diag "$(cat "$out")"; fi
	rm -f "$out"
	is "$(field "$bench" failed)" 0 "$label/$kind: a well-behaved client beside them: 0 failed"
	good=$(ms "$bench" max_us)
	((${good:-BOUND_MS + 1} <= BOUND_MS))
	ok $? "$label/$kind: ... none of its responses slower than $BOUND_MS ms"
	diag "$label/$kind: its slowest response ${good:-?} ms"
	drained "$label/$kind"
	[[ $ready != - ]] || return 0
	read -r rss tcp slab <<<"$(memory_growth "$mem0" "$mem1")"
	((rss <= RSS_BOUND_KB * N))
	ok $? "$label/$kind: the server's RSS grew at most $RSS_BOUND_KB KiB for each of $N connections"
	echo "# faults: $label $kind clients=$N rss_kb=$rss tcp_kb=$tcp slab_kb=$slab" \
		"per_conn_bytes=$(((rss + tcp + slab) * 1024 / N)) good_max_ms=${good:-?}"
}

# drained LABEL: the server holds none of the crowd's connections open
# (ESTABLISHED, CLOSE-WAIT: not closed by it; SYN-RECV) within 30 s: a
# guest's thousand kthreads end slowly under TCG. What it has closed
# (LAST-ACK, FIN-WAIT, TIME-WAIT) the kernel's TCP finishes on its timers.
drained() {
	wait_until 30 none_held_open
	is "$(held_open)" "" "$1: afterwards the server holds none of their connections open"
}

# held_open: the connections of $PORT not closed by the server ('ss
# failed' when ss did: that is not "none").
held_open() {
	local items
	items=$(connections "$PORT") || items="ss failed"
	awk '$1 == "ESTAB" || $1 == "CLOSE-WAIT" || $1 == "SYN-RECV" || $1 == "ss"' <<<"$items"
}

# none_held_open: held_open lists nothing (for wait_until).
none_held_open() { [[ -z $(held_open) ]]; }

# faults LABEL SERVER [START-OPTIONS...]
faults() {
	local label=$1 server=$2 base marks out
	shift 2
	PREFIX=()
	[[ " $* " != *" --bypass "* ]] || PREFIX=("$RUN" client)
	base=$(leftovers_or_why) || { ok 1 "$label: leftovers before the start (a tool failed)"; diag "$base"; return; }
	marks=$(dmesg_mark)

	"$RUN" "$server" "$@" >/dev/null
	ok $? "$label: run.sh $server $*"
	PID=$(server_pid)
	crowd "$label" trickle '^connected' trickle "$PORT" "$N" 20 100
	crowd "$label" noread '^noread' noread "$PORT" "$N" "$NOREAD_MAX" 3
	crowd "$label" idle '^holding' hold "$PORT" "$N" 3
	crowd "$label" resets - resets "$PORT" $((N / 3))

	faults_sigstop "$label"
	faults_loader_killed "$label" "$base" "$server" "$@"
	faults_killed "$label" "$base" "$server" "$@"

	out=$(kernel_complaints "$marks")
	is "$out" "" "$label: dmesg has no warning, bug or leak since the start"
}

# faults_sigstop LABEL: SIGSTOP for 2 s: the requests wait (bench's
# timeout is 10 s) and none is lost. The slowest response shows the
# stall where the process echoes; ebpf's echo is the kernel's and goes
# on without it.
faults_sigstop() {
	local label=$1 out load state stopped_at rest_us
	if [[ -n $PID ]]; then
		out=$(mktemp)
		bounded 60 "${PREFIX[@]}" "$BENCH" -p "$PORT" -t 50 -d 4 -T 10000 -q -o /dev/null >"$out" 2>&1 &
		load=$!
		sleep 0.5
		kill -STOP "$PID"
		stopped_at=$(_now_us)
		wait_until 1 process_state_is "$PID" T
		state=$(awk '{ print $3 }' "/proc/$PID/stat")
		# The rest of the 2 s.
		rest_us=$((2000000 - ($(_now_us) - stopped_at)))
		((rest_us > 0)) || rest_us=0
		sleep "$((rest_us / 1000000)).$(printf '%06d' $((rest_us % 1000000)))"
		kill -CONT "$PID"
		wait "$load"
		out=$(cat "$out"; rm -f "$out")
		is "$state" T "$label/sigstop: the server's process stopped (state T)"
		is "$(field "$out" failed)" 0 "$label/sigstop: stopped for 2 s under load: 0 failed"
		diag "$label/sigstop: the slowest response $(ms "$out" max_us) ms"
	fi
}

# faults_loader_killed LABEL BASE SERVER [START-OPTIONS...]: the bypass's
# loader killed mid-run: the kernel drops its programs, the connections
# go on over TCP.
faults_loader_killed() {
	local label=$1 base=$2 server=$3 pid load out
	shift 3
	pid=$(state bypass.pid)
	if [[ -n $pid ]]; then
		bounded 60 "${PREFIX[@]}" "$BENCH" -p "$PORT" -t 50 -d 3 -q -o /dev/null >/dev/null 2>&1 &
		load=$!
		sleep 1
		kill -9 "$pid"
		wait "$load"
		bench_ok "$label/loader killed: the server still serves" -t 10 -r 2
		out=$("$RUN" stop 2>&1)
		ok $? "$label/loader killed: run.sh stop cleans up after it"
		nothing_left_since "$label/loader killed" "$base"
		"$RUN" "$server" "$@" >/dev/null
		ok $? "$label/loader killed: restart"
		bench_ok "$label/loader killed: the restart serves at once" -t 10 -r 1
	fi
}

# faults_killed LABEL BASE SERVER [START-OPTIONS...]: kill -9 (a process)
# or rmmod (a module) under load, then a restart.
faults_killed() {
	local label=$1 base=$2 server=$3 load out rc
	shift 3
	bounded 60 "$BENCH" -p "$PORT" -t 50 -d 3 -q -o /dev/null >/dev/null 2>&1 &
	load=$!
	sleep 1
	PID=$(server_pid)
	if [[ -n $PID ]]; then
		kill -9 "$PID"
		out=$("$RUN" stop 2>&1)
		rc=$?
		ok "$rc" "$label/kill -9 under load: run.sh stop cleans up after it"
	else
		out=$("$RUN" stop 2>&1)
		rc=$?
		ok "$rc" "$label/rmmod under load: run.sh stop (rmmod) with 50 clients connected"
	fi
	((rc == 0)) || diag "$out"
	wait "$load"
	nothing_left_since "$label/killed under load" "$base"
	"$RUN" "$server" "$@" >/dev/null
	ok $? "$label/restart after the kill"
	bench_ok "$label/restart after the kill: serves at once" -t 10 -r 1
	"$RUN" stop >/dev/null
	nothing_left_since "$label/stop" "$base"
}

each_variant faults all_variants

plan_at_end
