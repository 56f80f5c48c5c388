#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The contract every declared server keeps (servers/*.sh), run against each
# of its variants: natively where it runs here, in the qemu guest where it
# cannot (kecho, on a kernel without modules). What only one server does
# is in its own test file.
#
#   listening on 127.0.0.1 only by default; exact echo of 1 B, 64 KiB and
#   1 MiB; a client reset mid-message; a half-close; 1000 threads x 3
#   rounds with 0 failures; a busy port and bad arguments refused with a
#   clear message; stop and kill -9 under load leave nothing behind; a
#   restart serves at once; --addr 0.0.0.0 listens on every interface,
#   with a warning from run.sh and from the server itself.
#
# Its cases are the declared variants (variant_cases contract_variants;
# --list prints them): user, user-w2, user-splice, uring, ebpf,
# kecho-unbound, kecho-bound, kecho-kthread, the servers as people deploy
# them (tokio, go: a skip that says so where make peers has not built
# them), and kecho for kecho's three. Each checks all of the above on its
# variant, from its own start to its own stop.
#
# ONLY_SERVERS="NAME..." limits it to those servers or variants (the
# guest's run).
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS=$(variant_cases contract_variants)
select_cases "$@"
root_or_bail_out

trap stop_all EXIT

# under_load: bench against the port for a few seconds, in the background.
# shellcheck disable=SC2317 # called by contract, through each_variant
under_load() {
	bounded 30 "$BENCH" -p "$PORT" -t 50 -d 5 -q -o /dev/null >/dev/null 2>&1 &
	PIDS+=($!)
	sleep 1
}

# listens_on NAME ADDR: the server listens on $PORT, on ADDR only (ss).
# shellcheck disable=SC2317 # called by contract, through each_variant
listens_on() {
	local name=$1 want="LISTEN $2:$PORT" items
	if ! items=$(listeners "$PORT" 2>&1); then
		ok 1 "$name"
		diag "$name: cannot tell, ss failed: $items"
		return
	fi
	[[ -n $items ]] && ! grep -qvxF -- "$want" <<<"$items"
	ok $? "$name"
	diag "$name: $(tr '\n' ' ' <<<"${items:-no listener}")"
}

# contract LABEL SERVER [START-OPTIONS...]
# shellcheck disable=SC2317 # called through each_variant
contract() {
	local label=$1 server=$2 base out
	shift 2
	local start=("$server" "$@")
	base=$(leftovers_or_why) || { ok 1 "$label: leftovers before the start (a tool failed)"; diag "$base"; return; }

	"$RUN" "${start[@]}" >/dev/null
	ok $? "$label: run.sh ${start[*]}"
	# A lab server must not be open to the network unless asked.
	listens_on "$label/addr: listens on 127.0.0.1 only by default" 127.0.0.1
	bench_ok "$label/1-byte" -t 1 -r 1 -s 1
	bench_ok "$label/64KiB" -t 4 -r 2 -s 65536
	bench_ok "$label/1MiB" -t 2 -r 2 -s 1048576

	reset_ok "$label/reset"
	bench_ok "$label/reset: a new client served after it" -t 10 -r 2
	bounded 60 "$PROBE" halfclose "$PORT" 65536
	ok $? "$label/half-close: 64 KiB echoed, then EOF"

	out=$(bounded 180 "$BENCH" -p "$PORT" -t 1000 -r 3 -q -o /dev/null)
	is "$(field "$out" samples)/$(field "$out" failed)" 3000/0 "$label/t1000-r3: 3000 samples, 0 failed"

	under_load
	"$RUN" stop >/dev/null
	ok $? "$label/stop under load: run.sh stop (it checks the cleanup itself)"
	wait "${PIDS[@]}" 2>/dev/null
	PIDS=()
	nothing_left_since "$label/stop under load" "$base"

	contract_restart "$label" "$base" "$server" "$@"
	busy_port_refused "$label" "${start[@]}"
	contract_bad_args "$label" "$base" "$server"
	contract_addr_any "$label" "$base" "$server" "$@"
}

# contract_restart LABEL BASE SERVER [START-OPTIONS...]: restarted on
# CPU 0 where there are two: run.sh --cpus steers the loopback's receive
# processing, and stop must put it back; then killed (-9) under load.
# shellcheck disable=SC2317 # called by contract, through each_variant
contract_restart() {
	local label=$1 base=$2 server=$3 pid out
	shift 3
	local restart=("$server" "$@")
	(($(nproc) < 2)) || restart=("$server" --cpus 0 "$@")
	"$RUN" "${restart[@]}" >/dev/null
	ok $? "$label/restart: run.sh ${restart[*]}"
	bench_ok "$label/restart: serves at once" -t 10 -r 1
	pid=$(server_pid)
	if [[ -n $pid ]]; then
		under_load
		kill -9 "$pid"
		wait "${PIDS[@]}" 2>/dev/null
		PIDS=()
		out=$("$RUN" stop 2>&1)
		ok $? "$label/kill -9 under load: run.sh stop cleans up after it"
		like "$out" "had already gone" "$label/kill -9 under load: run.sh stop says it was gone"
		nothing_left_since "$label/kill -9 under load" "$base"
	else
		# A kernel module has no process to kill -9: its stop (rmmod)
		# after a restart is what there is to check.
		"$RUN" stop >/dev/null
		ok $? "$label/restart: run.sh stop (a module: no process to kill -9)"
		nothing_left_since "$label/restart: stop" "$base"
	fi
}

# contract_bad_args LABEL BASE SERVER: the declaration's bad_args refused,
# the message naming the argument, nothing left; a binary says so with
# exit 2.
# shellcheck disable=SC2317 # called by contract, through each_variant
contract_bad_args() {
	local label=$1 base=$2 server=$3 bad word out rc
	while IFS= read -r bad; do
		[[ -n $bad ]] || continue
		word=${bad%% *}
		# shellcheck disable=SC2086 # an argument list
		out=$("$RUN" "$server" -- $bad 2>&1)
		rc=$?
		((rc != 0)) && [[ $out == *"$word"* ]]
		ok $? "$label/bad-args: '$bad' refused, the message names '$word'"
		((rc != 0 && rc != 2)) || diag "$out"
		if [[ $(server_get "$server" kind) == process ]]; then
			# shellcheck disable=SC2086 # an argument list
			"$(server_binary "$server")" --port "$SPARE_PORT" $bad >/dev/null 2>&1
			is $? 2 "$label/bad-args: '$bad': $(basename "$(server_binary "$server")") exits 2"
		fi
	done < <(tr ';' '\n' <<<"$(server_get "$server" bad_args)")
	nothing_left_since "$label/bad-args" "$base"
}

# contract_addr_any LABEL BASE SERVER [START-OPTIONS...]: asked for every
# interface, it listens there, and both run.sh and the server (its log;
# kecho in dmesg) say who can connect.
# shellcheck disable=SC2317 # called by contract, through each_variant
contract_addr_any() {
	local label=$1 base=$2 server=$3 mark out own
	shift 3
	mark=$(dmesg_mark)
	out=$("$RUN" "$server" --addr 0.0.0.0 "$@" 2>&1)
	ok $? "$label/addr-any: run.sh $server --addr 0.0.0.0${*:+ $*}"
	listens_on "$label/addr-any: listens on 0.0.0.0" 0.0.0.0
	like "$out" "0\.0\.0\.0.*any host that can reach this machine can connect" \
		"$label/addr-any: run.sh warns that any host can connect"
	if [[ $(server_get "$server" kind) == module ]]; then
		own=$(dmesg_since "$mark" | grep "$server:")
	else
		own=$(cat "$SERVER_LOG" 2>/dev/null)
	fi
	like "$own" "0\.0\.0\.0.*any host that can reach this machine can connect" \
		"$label/addr-any: the server itself warns that any host can connect"
	[[ $own == *"any host"* ]] || diag "$own"
	"$RUN" stop >/dev/null
	ok $? "$label/addr-any: run.sh stop"
	nothing_left_since "$label/addr-any" "$base"
}

each_variant contract contract_variants

plan_at_end
