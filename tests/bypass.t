#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sk_msg bypass (sockredir/sockredir) in front of the user server:
# bytes in order, half-close and reset, 1000 clients, the bypass really
# taken and only where it should be, nothing left behind, clear errors.
# Cases:
#   usage               sockredir --help, and -p 70000 refused (exit 2)
#   not-root            sockredir refuses to run without root (exit 1)
#   start               run.sh user --bypass: the server in the port's
#                       cgroup, sock_ops attached there only, a second
#                       sockredir for the port refused; ebpf --bypass refused
#   1-byte, 64KiB, 1MiB messages of that size echoed exactly, >= 99% of
#                       the bytes redirected (sockredir's counters)
#   half-close          64 KiB echoed, then EOF
#   reset               a client resets with 1 MiB in flight; the server
#                       goes on and serves the next client
#   sendfile-1, splicesend-1, sendfile-65536, splicesend-65536,
#   sendfile-1048576, splicesend-1048576
#                       sendfile() or splice() into a bypassed socket:
#                       echoed exactly, all of it redirected
#   splice-receive      splice() out of one: exact, or nothing arrives
#                       (known kernel limit), never wrong bytes
#   t1000-r3            1000 threads x 3 rounds, 0 failures
#   outside-client      a client outside the cgroup: nothing redirected
#   other-port          a server on another port in the cgroup: not ours
#   flow-control        a peer that never reads: TCP and the bypass stop
#                       the sender, --flow-limit 0 does not (64 MiB) and
#                       says so; TCP memory comes back
#   early-send          a blocking send() that began before the handshake
#                       ended (tests/earlysend.c) and the message after
#                       it: read in order, sockredir's sent_unseen counts it
#   stop                run.sh stop leaves no process, program,
#                       attachment, cgroup or listener
#   kill-9              sockredir killed under load: the clients go on
#                       over TCP; run.sh stop cleans up after both
#   bench               run.sh bench user --bypass: both rows side by
#                       side; bench ebpf --bypass refused
#   cannot-attach       another sockredir holds the cgroup: run.sh says
#                       why, leaves nothing, and the next start works
#   foreign             ... and run.sh touches neither that cgroup nor
#                       state or sysctls
#   busy-port           a busy port: no sockredir left running
#   sockperf            run.sh command --bypass in front of sockperf's
#                       server: sockperf's ping-pong (run.sh client) is
#                       carried, >= 99% of its bytes redirected; stop
#                       leaves nothing; a command that is not one, or none,
#                       is refused (exit 1, saying which)
#   sockperf-judged     cmd/sockperf.sh --repeat 1: a raw file per run that
#                       judge reads (every row a round trip sockperf
#                       timed), the bypass run's counters in it, both rows
#                       in summary.md; bad flags exit 2; nothing left
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="usage not-root start 1-byte 64KiB 1MiB half-close reset
	sendfile-1 splicesend-1 sendfile-65536 splicesend-65536
	sendfile-1048576 splicesend-1048576 splice-receive t1000-r3
	outside-client other-port flow-control early-send stop kill-9 bench
	cannot-attach foreign busy-port sockperf sockperf-judged"
select_cases "$@"
root_or_bail_out

SOCKREDIR=$ECHOLAB_ROOT/sockredir/sockredir
trap 'stop_all; pkill -f "user-echo-server -p $SPARE_PORT" 2>/dev/null' EXIT

fact no-btf >/dev/null && skip_all no-btf
fact no-cgroup2 >/dev/null && skip_all no-cgroup2
cgroup2=$(cgroup2_mount)
CG=$cgroup2/echolab-bypass-$PORT


# bypass_running: the user server behind the bypass on $PORT, started by
# run.sh if it is not running. On CPUs of their own (run.sh's default)
# the server's end can enter the map after the client's first bytes, and
# that connection stays on TCP: the share checks need the bypass on one
# CPU (--cpus all), as before.
bypass_running() {
	[[ $(state server) == user && $(state fronts) == bypass ]] && default_running && return 0
	"$RUN" stop >/dev/null 2>&1
	"$RUN" user --bypass --cpus all >/dev/null
}

# nothing_running: no server of run.sh's on $PORT.
nothing_running() { "$RUN" stop >/dev/null 2>&1; }

# client ARGS...: bench inside the bypass's cgroup (run.sh client).
client_bench_ok() {
	local name=$1 out
	shift
	out=$(bounded 180 "$RUN" client "$BENCH" -p "$PORT" -q -o /dev/null "$@")
	ok $? "$name: exit 0"
	is "$(field "$out" failed)" 0 "$name: failed=0"
	[[ $(field "$out" failed) == 0 ]] || diag "$out"
}

# nothing_left: no program, attachment, cgroup or listener of ours.
nothing_left() {
	local progs procs
	# Other sockredir processes (other ports) may hold programs of their own.
	progs=$(count_of ' redir_sockops$' bpf_progs)
	procs=$(count_of '^[0-9]+ [^ ]*sockredir( |$)' processes sockredir)
	[[ -n $progs && -n $procs ]] && ((progs <= procs))
	ok $? "no redir_sockops in bpftool prog show but other sockredirs'"
	diag "${progs:-(bpftool failed)} redir_sockops, ${procs:-(pgrep failed)} sockredir processes"
	absent "no attachment of ours in bpftool cgroup tree" "/echolab-bypass-$PORT " bpf_attachments
	[[ ! -d $CG ]]
	ok $? "cgroup $CG removed"
	absent "port $PORT free" . listeners "$PORT"
	absent "no sockredir process" . processes "sockredir --port $PORT"
}

# ---- the loader on its own ------------------------------------------------

test_usage() {
	local out
	"$SOCKREDIR" --help | grep -q '^Usage: sockredir'
	ok $? "--help"
	out=$("$SOCKREDIR" -p 70000 2>&1)
	ok $(($? != 2)) "-p 70000 exits 2"
	like "$out" "not a port number" "says what is wrong with -p"
}

test_not_root() {
	local out
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SOCKREDIR" 2>&1)
	ok $(($? != 1)) "exits 1"
	like "$out" "must run as root" "says it needs root"
}

# ---- start -------------------------------------------------------------------

test_start() {
	nothing_running
	"$RUN" ebpf --bypass >/dev/null 2>&1
	ok $(($? != 2)) "--bypass with the ebpf server is a usage error"
	# --cpus all: see bypass_running.
	"$RUN" user --bypass --cpus all >/dev/null
	ok $? "run.sh user --bypass"
	[[ -d $CG ]] && grep -qx "$(server_pid)" "$CG/cgroup.procs"
	ok $? "the server runs in $CG"
	[[ $(count_of "^$CG (cgroup_)?sock_ops redir_sockops$" bpf_attachments) == 1 ]]
	ok $? "sock_ops attached to that cgroup"
	absent "nothing attached to the root cgroup" "^$cgroup2 (cgroup_)?sock_ops " bpf_attachments
	# Bounded: were the first one missing, this one would serve, not exit.
	bounded 10 "$SOCKREDIR" -p "$PORT" >/dev/null 2>&1
	ok $(($? != 1)) "a second sockredir for the port is refused"
	[[ $(count_of "^$CG (cgroup_)?sock_ops redir_sockops$" bpf_attachments) == 1 ]]
	ok $? "... and the first one's attachment stays"
}

# ---- bytes in order, through the bypass -----------------------------------

# bytes_ok NAME SIZE THREADS ROUNDS MESSAGES: bench checks every echoed
# byte against what it sent (a header with the thread, round and message
# number, then a pattern); every byte both ways, bench's and the
# server's sends, must take the bypass.
bytes_ok() {
	local name=$1 size=$2 t=$3 r=$4 m=$5 before after want got passed
	bypass_running
	before=$(counters_line)
	client_bench_ok "$name" -s "$size" -t "$t" -r "$r" -m "$m"
	after=$(counters_line)
	want=$((2 * size * t * r * m))
	got=$(grew "$before" "$after" bytes_redirected)
	passed=$(grew "$before" "$after" bytes_passed)
	diag "$name: $got bytes redirected, $passed through TCP, of $want"
	((got >= want * 99 / 100))
	ok $? ">= 99% of the bytes took the bypass"
}

test_1_byte() { bytes_ok 1-byte 1 10 5 20; }
test_64KiB() { bytes_ok 64KiB 65536 4 2 8; }
test_1MiB() { bytes_ok 1MiB 1048576 2 2 4; }

test_half_close() {
	bypass_running
	bounded 60 "$RUN" client "$PROBE" halfclose "$PORT" 65536
	ok $? "64 KiB echoed, then EOF"
}

test_reset() {
	bypass_running
	reset_ok "reset" "$RUN" client
	kill -0 "$(server_pid)"
	ok $? "server still running"
	client_bench_ok "reset: a new client served after it" -t 10 -r 2
}

# The kernel's zero-copy paths over a bypassed connection (probe checks
# every byte, in order). Sending with sendfile() or splice() into the
# socket goes through the sk_msg program and works.
# zero_copy_ok VIA SIZE: probe VIA (sendfile, splicesend) with SIZE bytes.
zero_copy_ok() {
	local via=$1 size=$2 before after out rc
	bypass_running
	before=$(counters_line)
	out=$(bounded 60 "$RUN" client "$PROBE" "$via" "$PORT" "$size" 2>&1)
	rc=$?
	ok "$rc" "echoed exactly"
	((rc == 0)) || diag "$out"
	after=$(counters_line)
	((2 * size == $(grew "$before" "$after" bytes_redirected)))
	ok $? "all of it both ways through the bypass"
}

test_sendfile_1() { zero_copy_ok sendfile 1; }
test_splicesend_1() { zero_copy_ok splicesend 1; }
test_sendfile_65536() { zero_copy_ok sendfile 65536; }
test_splicesend_65536() { zero_copy_ok splicesend 65536; }
test_sendfile_1048576() { zero_copy_ok sendfile 1048576; }
test_splicesend_1048576() { zero_copy_ok splicesend 1048576; }

# Receiving with splice() does not work: the redirected bytes wait in the
# socket's psock queue, which tcp_splice_read() never looks at (6.1 and
# 6.18; README). What must never happen is wrong data: either the bytes
# come back exactly (a kernel that fixed it), or none arrive.
test_splice_receive() {
	local out rc
	bypass_running
	out=$(bounded 60 "$RUN" client "$PROBE" splice "$PORT" 4096 2>&1)
	rc=$?
	diag "splice receive over the bypass: exit $rc: $out"
	[[ $rc -eq 0 || $out == *"no data after"*"0 of 4096 bytes arrived"* ]]
	ok $? "exact, or nothing arrives (known kernel limit), never wrong bytes"
}

test_t1000_r3() {
	local out
	bypass_running
	out=$(bounded 180 "$RUN" client "$BENCH" -t 1000 -r 3 -p "$PORT" -q -o /dev/null)
	is "$(field "$out" samples)/$(field "$out" failed)" 3000/0 "3000 samples, failed=0"
}

# ---- only where it should be ----------------------------------------------

# A client outside the cgroup: its end is not in the map, so nothing is
# redirected either way.
test_outside_client() {
	local before after
	bypass_running
	before=$(counters_line)
	bench_ok "outside-client" -t 10 -r 2 -m 10
	after=$(counters_line)
	is "$(grew "$before" "$after" msgs_redirected)" 0 "nothing redirected"
}

# Another port, server and client both in the cgroup: not ours.
test_other_port() {
	local before after out pid
	bypass_running
	bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -p "$3"' _ "$CG" \
		"$ECHOLAB_ROOT/user-echo/user-echo-server" "$SPARE_PORT" >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_until 5 port_taken "$SPARE_PORT"
	before=$(counters_line)
	out=$(bounded 60 "$RUN" client "$BENCH" -p "$SPARE_PORT" -t 10 -r 2 -m 10 -q -o /dev/null)
	is "$(field "$out" failed)" 0 "bench in the cgroup against port $SPARE_PORT, failed=0"
	after=$(counters_line)
	is "$(grew "$before" "$after" socks_added)/$(grew "$before" "$after" msgs_redirected)" 0/0 \
		"no socket added, nothing redirected"
	stop_bounded "$pid" 2>/dev/null
	PIDS=()
}

# ---- flow control: the kernel has none, sockredir bounds it ---------------

# A peer that never reads: TCP stops the sender at the peer's receive
# window plus its own send buffer. The bypass by itself (--flow-limit 0)
# queues on the peer without a bound below net.ipv4.tcp_mem (2.3 GB on a
# 24 GB machine, measured by hand; docs/servers.md): bounded at 64 MiB
# here. With its default bound the sender goes on through TCP once the
# peer has 4 MiB unread, and TCP stops it. sockredir by hand, on the
# spare port, so that the peer can be a listener that never accepts.
tcp_mem() { awk '/^TCP:/ { for (i = 2; i < NF; i++) if ($i == "mem") print $(i + 1) }' /proc/net/sockstat; }

# tcp_mem_below PAGES: the kernel's TCP memory is below PAGES (for wait_until).
tcp_mem_below() { (($(tcp_mem) < $1)); }

fill_against_mute() {
	local prefix=("$@") mute
	"${prefix[@]}" "$PROBE" mute "$SPARE_PORT" 30 >/dev/null &
	mute=$!
	wait_until 5 port_taken "$SPARE_PORT"
	bounded 60 "${prefix[@]}" "$PROBE" fill "$SPARE_PORT" $((64 << 20))
	kill "$mute"
	wait "$mute" 2>/dev/null
}
SPARE_CG=$cgroup2/echolab-bypass-$SPARE_PORT
# shellcheck disable=SC2016 # expanded by that bash
in_cg=(bash -c 'echo $$ >"$1/cgroup.procs" && exec "${@:2}"' _ "$SPARE_CG")

# fill_bypassed SOCKREDIR-ARGS...: the same over a sockredir of those
# arguments, started here; the probe's output in $FILLED, sockredir's
# stderr in $REDIR_ERR (both flow-control's).
fill_bypassed() {
	local spare_redir
	"$SOCKREDIR" -p "$SPARE_PORT" "$@" >/dev/null 2>"$REDIR_ERR" &
	spare_redir=$!
	wait_until 5 test -d "$SPARE_CG"
	FILLED=$(fill_against_mute "${in_cg[@]}")
	stop_bounded "$spare_redir"
	ok $? "sockredir $* on port $SPARE_PORT stops cleanly"
}

test_flow_control() {
	local mem0 tcp bounded_bypass unbounded accepted REDIR_ERR FILLED
	REDIR_ERR=$(mktemp)
	mem0=$(tcp_mem)
	tcp=$(fill_against_mute)
	fill_bypassed
	bounded_bypass=$FILLED
	fill_bypassed --flow-limit 0
	unbounded=$FILLED
	diag "never-reading peer, TCP: $tcp"
	diag "never-reading peer, bypass: $bounded_bypass"
	diag "never-reading peer, bypass --flow-limit 0: $unbounded"
	accepted=$(field "$tcp" accepted)
	((accepted > 0 && accepted < 32 << 20))
	ok $? "TCP stops the sender below 32 MiB"
	accepted=$(field "$bounded_bypass" accepted)
	((accepted > 0 && accepted < 32 << 20))
	ok $? "over the bypass too, the sender is stopped below 32 MiB"
	is "$(field "$unbounded" accepted) $(field "$unbounded" stop)" "$((64 << 20)) max" \
		"with --flow-limit 0 all 64 MiB are queued on the peer (the kernel has no bound)"
	grep -q 'WARNING: --flow-limit 0: no flow control' "$REDIR_ERR"
	ok $? "... and sockredir says so when it starts"
	rm -f "$REDIR_ERR"
	wait_until 5 tcp_mem_below $((mem0 + 2048))
	(($(tcp_mem) < mem0 + 2048))
	ok $? "TCP memory back near its baseline once closed"
	diag "flow-control: TCP memory $mem0 -> $(tcp_mem) pages"
	[[ ! -d $SPARE_CG ]]
	ok $? "cgroup $SPARE_CG removed"
}

# ---- a send that began before the handshake ended -------------------------

# A blocking send() that sleeps until the handshake ends goes on through
# TCP, unseen by the sk_msg program (tests/earlysend.c says how it is
# made: the accept queue full, the SYN sent again a second later). The
# end must stay on TCP, or its next message overtakes those bytes: the
# server read "second-8first-8-" before sockredir's rule for it
# (redir_join_seq). Its counters show the case was made: sent_unseen.
test_early_send() {
	local spare_redir log out rc unseen redirected
	log=$(mktemp)
	"$SOCKREDIR" -p "$SPARE_PORT" >/dev/null 2>"$log" &
	spare_redir=$!
	wait_until 5 test -d "$SPARE_CG"
	out=$(bounded 30 "${in_cg[@]}" "$ECHOLAB_ROOT/tests/build/earlysend" "$SPARE_PORT" 2>&1)
	rc=$?
	diag "$out"
	is "$rc" 0 "early-send: the server read, and the client got back, both messages in order"
	stop_bounded "$spare_redir"
	ok $? "early-send: sockredir on port $SPARE_PORT stops cleanly"
	out=$(sed -n 's/^counters //p' "$log" | tail -n 1)
	diag "early-send: $out"
	unseen=$(field "$out" sent_unseen)
	redirected=$(field "$out" msgs_redirected)
	((${unseen:-0} >= 1 && ${redirected:-0} >= 1))
	ok $? "early-send: the send it missed was seen (sent_unseen), the echo still bypassed"
	rm -f "$log"
	[[ ! -d $SPARE_CG ]]
	ok $? "early-send: cgroup $SPARE_CG removed"
}

# ---- stop, kill -9 ------------------------------------------------------------

test_stop() {
	bypass_running
	"$RUN" stop >/dev/null
	ok $? "run.sh stop (checks sockredir, cgroup, programs, dmesg)"
	nothing_left
}

# sockredir killed under load: the connections go on over TCP.
test_kill_9() {
	local out rc loadout loadraw load
	nothing_running
	out=$("$RUN" user --bypass 2>&1)
	rc=$?
	ok "$rc" "run.sh user --bypass"
	((rc == 0)) || diag "$out"
	loadout=$(mktemp)
	loadraw=$(mktemp)
	"$RUN" client "$BENCH" -p "$PORT" -t 50 -d 4 -q -o "$loadraw" >"$loadout" 2>&1 &
	load=$!
	sleep 1.5	# under load: the test
	kill -9 "$(state bypass.pid)"
	wait "$load"
	ok $? "under load: bench exit 0"
	is "$(field "$(cat "$loadout")" failed)" 0 "under load: failed=0"
	if [[ $(field "$(cat "$loadout")" failed) != 0 ]]; then
		diag "$(cat "$loadout")"
		# shellcheck disable=SC2016 # awk
		diag "statuses: $(awk '!/^#/ { n[$5]++ } END { for (s in n) printf "%s=%d ", s, n[s] }' "$loadraw")"
		diag "first failure: $(grep -v '^#' "$loadraw" | grep -vm1 'ok$')"
	fi
	rm -f "$loadout" "$loadraw"
	absent "sockredir is gone" . processes "sockredir --port $PORT"
	kill -9 "$(server_pid)"
	"$RUN" stop >/dev/null
	ok $? "run.sh stop cleans up after both (no kernel warnings)"
	nothing_left
}

# bench user --bypass: both, side by side, in one results directory.
test_bench() {
	local sbs out rows
	nothing_running
	sbs=$(mktemp -d)
	out=$(ECHOLAB_TW_MAX=1000000 bounded 120 "$RUN" bench user --bypass -t 10 -r 1 -m 20 --out "$sbs" 2>&1)
	ok $? "run.sh bench user --bypass exits 0"
	rows=$(summary_rows "$sbs/summary.md" | tr '\n' ,)
	is "$rows" "user 200 0,user-bypass 200 0," "user and user-bypass side by side, 200 samples each, 0 failed"
	[[ $rows == "user 200 0,user-bypass 200 0," ]] || diag "$out"
	rm -rf "$sbs"
	"$RUN" bench ebpf --bypass >/dev/null 2>&1
	is $? 2 "--bypass with ebpf is a usage error"
}

# attached_by_hand: the sockredir started by hand has attached its program
# to the port's cgroup (for wait_until, 5 s at most): the cgroup alone is
# made before, and a run.sh started in between races it instead.
attached_by_hand() {
	[[ $(count_of "^$CG (cgroup_)?sock_ops redir_sockops$" bpf_attachments) == 1 ]]
}

# A bypass that cannot attach (another sockredir holds the port's cgroup):
# run.sh says why and leaves nothing, and the next start works.
test_cannot_attach() {
	local out pid
	nothing_running
	"$SOCKREDIR" -p "$PORT" >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_until 5 attached_by_hand
	out=$("$RUN" user --bypass 2>&1)
	ok $(($? == 0)) "run.sh user --bypass fails"
	like "$out" "another instance serves this port.*sockredir exited before it attached" \
		"says why"
	[[ ! -e $STATE_DIR ]] && port_free "$PORT"
	ok $? "no state left, port free" ||
		diag "cannot-attach: state dir: $(find "$STATE_DIR" -mindepth 1 -maxdepth 1 -printf "%f " 2>&1); listeners on $PORT: $(listeners "$PORT" 2>&1 | tr '\n' ' ')"
	stop_bounded "$pid" 2>/dev/null
	PIDS=()
	"$RUN" user --bypass >/dev/null && "$RUN" stop >/dev/null
	ok $? "the next start and stop work"
}

# Another sockredir (by hand) owns the port's cgroup: ours cannot attach,
# and run.sh neither touches that cgroup nor leaves state or sysctls.
test_foreign() {
	local backlog out rc pid
	nothing_running
	backlog=$(sysctl -n net.core.netdev_max_backlog)
	"$SOCKREDIR" -p "$PORT" >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_until 5 attached_by_hand
	out=$("$RUN" user --bypass 2>&1)
	ok $(($? == 0)) "run.sh user --bypass fails"
	[[ ! -e $STATE_DIR && $(sysctl -n net.core.netdev_max_backlog) == "$backlog" ]]
	rc=$?
	ok "$rc" "no state left, sysctls as found"
	((rc == 0)) ||
		diag "state: $(ls "$STATE_DIR" 2>&1); netdev_max_backlog $(sysctl -n net.core.netdev_max_backlog), was $backlog; run.sh said: $out"
	[[ $(count_of "^$CG (cgroup_)?sock_ops redir_sockops$" bpf_attachments) == 1 ]]
	ok $? "the other sockredir's cgroup and program untouched"
	stop_bounded "$pid" 2>/dev/null
	PIDS=()
}

# A busy port: no sockredir is left running.
test_busy_port() {
	local out pid
	nothing_running
	"$PROBE" mute "$PORT" 5 >/dev/null &
	pid=$!
	PIDS+=("$pid")
	wait_until 3 port_taken "$PORT"
	out=$("$RUN" user --bypass 2>&1)
	ok $(($? == 0)) "run.sh user --bypass fails"
	like "$out" "port $PORT is busy" "says the port is busy"
	absent "no sockredir left" . processes "sockredir --port $PORT"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	PIDS=()
}

# Seed 004's instrument: sockperf's own server behind the bypass, its
# ping-pong client in the bypass's cgroup. Every message goes out and
# comes back: 2 x 64 bytes a message sockperf counts (its warm-up's
# messages on top). --cpus all: see bypass_running.
test_sockperf() {
	local out before after sent recvd got passed
	nothing_running
	if ! command -v sockperf >/dev/null; then
		ok 1 "sockperf is installed (sudo make deps installs it)"
		return
	fi
	"$RUN" command --bypass --cpus all -- sockperf server --tcp -i '{addr}' -p '{port}' >/dev/null
	ok $? "run.sh command --bypass -- sockperf server --tcp -i {addr} -p {port}"
	[[ $(state server) == command ]] && grep -qx "$(server_pid)" "$CG/cgroup.procs" 2>/dev/null
	ok $? "sockperf's server runs in $CG"
	before=$(counters_line)
	out=$(bounded 60 "$RUN" client sockperf ping-pong --tcp -i 127.0.0.1 -p "$PORT" -m 64 -t 2 2>&1)
	ok $? "sockperf ping-pong through the bypass: exit 0"
	after=$(counters_line)
	sent=$(sed -n 's/.*\[Total Run\].*SentMessages=\([0-9]*\);.*/\1/p' <<<"$out")
	recvd=$(sed -n 's/.*\[Total Run\].*ReceivedMessages=\([0-9]*\).*/\1/p' <<<"$out")
	got=$(grew "$before" "$after" bytes_redirected)
	passed=$(grew "$before" "$after" bytes_passed)
	diag "sockperf: $sent sent, $recvd received; $got bytes redirected, $passed through TCP; $(grep -o 'Summary: Latency is .*' <<<"$out")"
	[[ -n $sent && -n $recvd && -n $got && -n $passed ]] && ((recvd > 1000 && got >= 64 * (sent + recvd) * 99 / 100 &&
		passed * 99 <= got))
	ok $? "sockperf's messages, both ways: >= 99% of their bytes redirected"
	"$RUN" stop >/dev/null
	ok $? "run.sh stop"
	nothing_left
	absent "no sockperf process" . processes "sockperf server --tcp -i 127.0.0.1 -p $PORT"
	out=$("$RUN" command --bypass 2>&1)
	[[ $? == 1 && $out == *"give the server's command line after --"* ]]
	ok $? "run.sh command with no command: exit 1, says what to give"
	out=$("$RUN" command -- no-such-server-xyz -p '{port}' 2>&1)
	[[ $? == 1 && $out == *"'no-such-server-xyz' is not a command here"* ]]
	ok $? "run.sh command with one that does not exist: exit 1, names it"
	nothing_left
}

# cmd/sockperf.sh, briefly: one pair of 1-second runs.
test_sockperf_judged() {
	local out dir rows msgs
	nothing_running
	dir=$(mktemp -d)
	out=$(bounded 120 "$ECHOLAB_ROOT/cmd/sockperf.sh" --repeat 1 --seconds 1 --seed 7 --out "$dir" 2>&1)
	ok $? "cmd/sockperf.sh --repeat 1 --seconds 1: exit 0"
	[[ -s $dir/size-14/sockperf-1.tsv.gz && -s $dir/size-14/sockperf-bypass-1.tsv.gz ]]
	ok $? "a raw file per run, gzipped"
	rows=$(zcat "$dir/size-14/sockperf-bypass-1.tsv.gz" 2>/dev/null | grep -vc '^#')
	msgs=$(zcat "$dir/size-14/sockperf-bypass-1.tsv.gz" 2>/dev/null | sed -n 's/^# sockperf_messages=//p')
	[[ $rows -gt 1000 && -n $msgs && $rows -le $msgs ]]
	ok $? "the bypass run: a row per message of sockperf's window, no more than it counted"
	diag "sockperf-judged: $rows rows, sockperf counted ${msgs:-none} messages"
	zcat "$dir/size-14/sockperf-bypass-1.tsv.gz" 2>/dev/null |
		awk -F= '$1 == "# bytes_redirected" { r = $2 } $1 == "# bytes_passed" { p = $2 } END { exit !(r > 0 && p * 99 <= r) }'
	ok $? "the bypass run records its counters: >= 99% redirected"
	grep -q '^| sockperf-bypass | 1 |' "$dir/size-14/summary.md" 2>/dev/null &&
		grep -q '^| sockperf | 1 |' "$dir/size-14/summary.md"
	ok $? "summary.md has judge's table and sockperf's own figures for both"
	grep -q "order=size-14 repeat=1 sockperf" "$dir/meta.txt" 2>/dev/null
	ok $? "meta.txt records the pair's order"
	[[ $out == *"sockperf says latency"* ]] || diag "$(tail -n 5 <<<"$out")"
	nothing_left
	absent "no sockperf process" . processes "sockperf server --tcp -i 127.0.0.1 -p $PORT"
	bounded 10 "$ECHOLAB_ROOT/cmd/sockperf.sh" --repeat x >/dev/null 2>&1
	is $? 2 "--repeat x exits 2"
	bounded 10 "$ECHOLAB_ROOT/cmd/sockperf.sh" --sizes 0 >/dev/null 2>&1
	is $? 2 "--sizes 0 exits 2"
	rm -rf "$dir"
}

run_tests
plan_at_end
