#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What only the sockmap server does (the contract every server keeps is
# tests/contract.t): the kernel path really taken, its own cgroup, nobody
# else's sockets touched, BPF objects gone with the process, clear errors.
# Cases:
#   start                   run.sh ebpf: the server in its own cgroup, sock_ops
#                           attached there and not to the root cgroup
#   t1000-r10               five runs of 1000 threads x 10 rounds, 0 failures
#   one-connection-10000    10,000 messages on one connection, >= 99% of the
#                           bytes echoed by the kernel (its counters)
#   1MiB-x8                 8 x 1 MiB echoes at once, each past the buffers
#   quiet                   20,000 messages wake the server < 100 times
#   bystander               another port's sockets in the server's cgroup
#                           never enter the map; its connection to ours does
#   kill-9                  programs and attachment gone with the process,
#                           run.sh stop verifies, an immediate restart serves
#   stop                    run.sh stop leaves no program, attachment,
#                           cgroup or listener
#   errors                  not root, no BTF, no cgroup v2, busy port, no
#                           SOCKHASH, a bad flag: each its message and exit
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="start t1000-r10 one-connection-10000 1MiB-x8 quiet bystander kill-9
	stop errors"
select_cases "$@"
root_or_bail_out

SERVER=$ECHOLAB_ROOT/ebpf-echo/ebpf-echo-server
trap stop_all EXIT

# The server's counters, as run.sh status reads them from its BPF maps.
counters_line() { "$RUN" status | sed -n 's/^counters: *//p'; }

# map_ports: the local port of each socket in the server's map (a lister
# for absent and count_of: fails when bpftool does). Keys: local_ip4,
# remote_ip4, local_port, remote_port (u32, host order), in one line
# 'key: B0 ... B15 value: ...'.
# shellcheck disable=SC2317 # called through absent and count_of
map_ports() {
	local out
	out=$(_tool bpftool map dump name echo_socks) || return 1
	awk 'function hex(h, i, v) { for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return v }
		/^key:/ && NF >= 17 { print hex(tolower($11 $10)); next }	# little-endian
		/^Found [0-9]+ element/ { found = 1; next }
		NF { print "bpftool map dump: cannot read the line: " $0 > "/dev/stderr"; bad = 1 }
		END { if (!found) print "bpftool map dump: no element count" > "/dev/stderr"
			exit bad || !found }' <<<"$out"
}

fact no-btf >/dev/null && skip_all no-btf
fact no-cgroup2 >/dev/null && skip_all no-cgroup2
cgroup2=$(cgroup2_mount)
CG=$cgroup2/ebpf-echo-$PORT

# nothing_left: no program, attachment, cgroup or listener of ours.
nothing_left() {
	absent "no echo_sockops/echo_verdict in bpftool prog show" \
		' (echo_sockops|echo_verdict)$' bpf_progs
	absent "no cgroup attachment in bpftool cgroup tree" ' echo_sockops$' bpf_attachments
	[[ ! -d $CG ]]
	ok $? "cgroup $CG removed"
	absent "port $PORT free" . listeners "$PORT"
}

# ebpf_running: the ebpf server on $PORT, started by run.sh if none is.
ebpf_running() {
	[[ $(state server) == ebpf ]] && default_running && return 0
	"$RUN" stop >/dev/null 2>&1
	"$RUN" ebpf >/dev/null
}

# established PORT N: at least N connections of the local PORT are
# established (for wait_until).
established() { (($(count_of '^ESTAB ' connections "$1" 2>/dev/null || echo 0) >= $2)); }

test_start() {
	"$RUN" stop >/dev/null 2>&1
	"$RUN" ebpf >/dev/null
	ok $? "run.sh ebpf"
	[[ -d $CG ]] && grep -qx "$(server_pid)" "$CG/cgroup.procs"
	ok $? "the server runs in its own cgroup $CG"
	[[ $(count_of "^$CG (cgroup_)?sock_ops echo_sockops$" bpf_attachments) == 1 ]]
	ok $? "sock_ops attached to that cgroup"
	absent "nothing attached to the root cgroup" "^$cgroup2 (cgroup_)?sock_ops " bpf_attachments
}

test_t1000_r10() {
	local i out
	ebpf_running
	for i in 1 2 3 4 5; do
		out=$(bounded 180 "$BENCH" -t 1000 -r 10 -p "$PORT" -q -o /dev/null)
		is "$(field "$out" samples)/$(field "$out" failed)" 10000/0 "run $i: 10000 samples, failed=0"
	done
}

# 10,000 messages on one connection: almost every byte must take the
# kernel's redirect, not the userspace fallback.
test_one_connection_10000() {
	local before after kernel user
	ebpf_running
	before=$(counters_line)
	bench_ok "one-connection-10000" -t 1 -r 1 -m 10000
	after=$(counters_line)
	kernel=$(grew "$before" "$after" redirected_bytes)
	user=$(grew "$before" "$after" userspace_bytes)
	diag "kernel redirect: ${kernel:-?} bytes, userspace fallback: ${user:-?} bytes (counters '$before' -> '$after')"
	[[ -n $kernel && -n $user ]] && ((kernel > 0 && 100 * kernel >= 99 * (kernel + user)))
	ok $? ">= 99% of bytes echoed by the kernel"
}

# Several 1 MiB echoes at once: each larger than the socket buffers, so
# the redirect meets a full send queue (the contract sends one or two).
test_1MiB_x8() {
	ebpf_running
	bench_ok "1MiB-x8" -t 8 -r 2 -s 1048576
}

# (No test removes a live socket from the map: on this kernel that makes
# tcp_recvmsg WARN, see ebpf-echo/README.md, "Kernel behaviour".)

# Steady state: redirected messages do not wake the server process.
test_quiet() {
	local before after wakeups
	ebpf_running
	before=$(counters_line)
	bench_ok "quiet" -t 4 -r 1 -m 5000
	after=$(counters_line)
	wakeups=$(grew "$before" "$after" userspace_wakeups)
	[[ -n $wakeups ]] && ((wakeups < 100))
	ok $? "20,000 messages woke the server fewer than 100 times"
	diag "quiet: ${wakeups:-(unread)} wakeups"
}

# bystander_connected: the bystander's two connections to the spare port
# and its one to ours are established, ours in the map (for wait_until).
bystander_connected() {
	established "$SPARE_PORT" 2 && established "$PORT" 1 &&
		(($(count_of "^$PORT$" map_ports 2>/dev/null || echo 0) >= 1))
}

# A bystander in the server's own cgroup, on another port: its sockets must
# never enter the map, while its connection to our port must.
test_bystander() {
	local ours
	ebpf_running
	(
		echo "$BASHPID" >"$CG/cgroup.procs"
		"$PROBE" mute "$SPARE_PORT" 5 >/dev/null &
		wait_until 3 port_taken "$SPARE_PORT"
		"$PROBE" hold "$SPARE_PORT" 2 4 >/dev/null &
		"$PROBE" hold "$PORT" 1 4 >/dev/null &
		wait
	) &
	PIDS+=($!)
	wait_until 3 bystander_connected
	absent "no socket of port $SPARE_PORT in the map" "^$SPARE_PORT$" map_ports
	ours=$(count_of "^$PORT$" map_ports)
	((ours >= 1))
	ok $? "its connection to port $PORT is in the map"
	diag "bystander: ${ours:-(bpftool failed)} sockets of port $PORT in the map"
	wait "${PIDS[@]}" 2>/dev/null
	PIDS=()
}

# ebpf_objects_gone PID: the process is gone, and its programs and
# attachment with it (for wait_until).
ebpf_objects_gone() {
	pid_gone "$1" &&
		[[ $(count_of ' (echo_sockops|echo_verdict)$' bpf_progs 2>/dev/null) == 0 ]] &&
		[[ $(count_of ' echo_sockops$' bpf_attachments 2>/dev/null) == 0 ]]
}

# kill -9: the kernel drops programs and attachments with the process.
test_kill_9() {
	local pid
	ebpf_running
	"$PROBE" hold "$PORT" 5 3 >/dev/null &
	PIDS+=($!)
	wait_until 5 established "$PORT" 5
	pid=$(server_pid)
	kill -9 "$pid"
	wait_until 0.5 ebpf_objects_gone "$pid"
	absent "programs gone with the process" ' (echo_sockops|echo_verdict)$' bpf_progs
	absent "attachment gone with the process" ' echo_sockops$' bpf_attachments
	"$RUN" stop >/dev/null
	ok $? "run.sh stop verifies the cleanup"
	nothing_left
	"$RUN" ebpf >/dev/null
	ok $? "immediate restart"
	bench_ok "kill-9: restarted server serves" -t 10 -r 2
	kill "${PIDS[@]}" 2>/dev/null
	PIDS=()
}

test_stop() {
	ebpf_running
	"$RUN" stop >/dev/null
	ok $? "exit 0"
	nothing_left
}

# expect_error NAME REGEX CMD...: CMD fails (not by the time bound) and
# says what failed.
expect_error() {
	local name=$1 re=$2 out rc
	shift 2
	out=$(bounded 20 "$@" 2>&1)
	rc=$?
	((rc != 0 && rc != 124))
	ok $? "errors/$name: non-zero exit"
	diag "errors/$name: exit $rc"
	like "$out" "$re" "errors/$name: says what failed"
}

# Errors: each with its message and a non-zero exit.
test_errors() {
	# setpriv: util-linux, which make deps installs.
	expect_error not-root "must run as root" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$SERVER" -p "$SPARE_PORT"
	expect_error no-btf "no kernel BTF" "$SERVER" -p "$SPARE_PORT" --btf /nonexistent
	expect_error no-cgroup2 "not a cgroup v2 directory" "$SERVER" -p "$SPARE_PORT" --cgroup-root /tmp
	"$PROBE" mute "$SPARE_PORT" 10 >/dev/null &
	PIDS+=($!)
	wait_until 3 port_taken "$SPARE_PORT"
	expect_error busy-port "port $SPARE_PORT is busy" "$SERVER" -p "$SPARE_PORT"
	kill "${PIDS[@]}" 2>/dev/null
	PIDS=()
	# No SOCKHASH: this kernel has it, so libbpf's probe is made to say it has
	# not (tests/no-sockhash.c), the answer a kernel without it gives.
	expect_error no-sockmap "lacks SOCKHASH maps.*use the 'user' server" \
		env LD_PRELOAD="$ECHOLAB_ROOT/tests/build/no-sockhash.so" "$SERVER" -p "$SPARE_PORT"
	"$SERVER" --bogus >/dev/null 2>&1
	is $? 2 "errors/bad-flag: exit 2"
	[[ ! -d $cgroup2/ebpf-echo-$SPARE_PORT ]]
	ok $? "failed starts leave no cgroup behind"
}

run_tests
plan_at_end
