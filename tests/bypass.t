#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sk_msg bypass (sockredir/sockredir) in front of the user server:
# bytes in order, half-close and reset, 1000 clients, the bypass really
# taken and only where it should be, nothing left behind, clear errors.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
root_or_bail_out

SOCKREDIR=$ROOT/sockredir/sockredir
trap 'stop_all; pkill -f "user-echo-server -p $SPARE_PORT" 2>/dev/null' EXIT

fact no-btf >/dev/null && skip_all no-btf
fact no-cgroup2 >/dev/null && skip_all no-cgroup2
cgroup2=$(cgroup2_mount)
CG=$cgroup2/echolab-bypass-$PORT

# sockredir's counters, as run.sh status reads them from its BPF map.
counters_line() { "$RUN" status | sed -n 's/^ *counters \(socks_added=\)/\1/p'; }

# client ARGS...: bench inside the bypass's cgroup (run.sh client).
client_bench_ok() {
	local name=$1 out
	shift
	out=$(bounded 180 "$RUN" client "$BENCH" -p "$PORT" -q -o /dev/null "$@")
	ok $? "$name: exit 0"
	is "$(field "$out" failed)" 0 "$name: failed=0"
	[[ $(field "$out" failed) == 0 ]] || diag "$out"
}

# nothing_left NAME: no program, attachment, cgroup or listener of ours.
nothing_left() {
	local name=$1
	local progs procs
	# Other sockredir processes (other ports) may hold programs of their own.
	progs=$(count_of ' redir_sockops$' bpf_progs)
	procs=$(count_of '^[0-9]+ [^ ]*sockredir( |$)' processes sockredir)
	[[ -n $progs && -n $procs ]] && ((progs <= procs))
	ok $? "$name: no redir_sockops in bpftool prog show but other sockredirs'"
	diag "$name: ${progs:-(bpftool failed)} redir_sockops, ${procs:-(pgrep failed)} sockredir processes"
	absent "$name: no attachment of ours in bpftool cgroup tree" "/echolab-bypass-$PORT " bpf_attachments
	[[ ! -d $CG ]]
	ok $? "$name: cgroup $CG removed"
	absent "$name: port $PORT free" . listeners "$PORT"
	absent "$name: no sockredir process" . processes "sockredir --port $PORT"
}

plan 83

# ---- the loader on its own ------------------------------------------------

"$SOCKREDIR" --help | grep -q '^Usage: sockredir'
ok $? "sockredir/usage: --help"
out=$("$SOCKREDIR" -p 70000 2>&1)
ok $(($? != 2)) "sockredir/usage: -p 70000 exits 2"
like "$out" "not a port number" "sockredir/usage: says what is wrong with -p"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SOCKREDIR" 2>&1)
ok $(($? != 1)) "sockredir/not-root: exits 1"
like "$out" "must run as root" "sockredir/not-root: says it needs root"

# ---- start -------------------------------------------------------------------

"$RUN" ebpf --bypass >/dev/null 2>&1
ok $(($? != 2)) "bypass/start: --bypass with the ebpf server is a usage error"

# On CPUs of their own (run.sh's default) the server's end can enter the
# map after the client's first bytes, and that connection stays on TCP:
# the share checks below need the bypass on one CPU, as before.
"$RUN" user --bypass --cpus all >/dev/null
ok $? "bypass/start: run.sh user --bypass"
[[ -d $CG ]] && grep -qx "$(server_pid)" "$CG/cgroup.procs"
ok $? "bypass/start: the server runs in $CG"
[[ $(count_of "^$CG (cgroup_)?sock_ops redir_sockops$" bpf_attachments) == 1 ]]
ok $? "bypass/start: sock_ops attached to that cgroup"
absent "bypass/start: nothing attached to the root cgroup" "^$cgroup2 (cgroup_)?sock_ops " bpf_attachments
# Bounded: were the first one missing, this one would serve, not exit.
bounded 10 "$SOCKREDIR" -p "$PORT" >/dev/null 2>&1
ok $(($? != 1)) "bypass/start: a second sockredir for the port is refused"
[[ $(count_of "^$CG (cgroup_)?sock_ops redir_sockops$" bpf_attachments) == 1 ]]
ok $? "bypass/start: ... and the first one's attachment stays"

# ---- bytes in order, through the bypass -----------------------------------

# bench checks every echoed byte against what it sent (a header with the
# thread, round and message number, then a pattern).
for spec in "1-byte:1:-t 10 -r 5 -m 20" "64KiB:65536:-t 4 -r 2 -m 8" \
	"1MiB:1048576:-t 2 -r 2 -m 4"; do
	IFS=: read -r name size args <<<"$spec"
	before=$(counters_line)
	# shellcheck disable=SC2086 # args: several bench flags
	client_bench_ok "bypass/$name" -s "$size" $args
	after=$(counters_line)
	# Every byte both ways: bench's and the server's sends.
	# shellcheck disable=SC2086
	set -- $args
	want=$((2 * size * $2 * $4 * $6))
	got=$(grew "$before" "$after" bytes_redirected)
	passed=$(grew "$before" "$after" bytes_passed)
	diag "$name: $got bytes redirected, $passed through TCP, of $want"
	((got >= want * 99 / 100))
	ok $? "bypass/$name: >= 99% of the bytes took the bypass"
done

bounded 60 "$RUN" client "$PROBE" halfclose "$PORT" 65536
ok $? "bypass/half-close: 64 KiB echoed, then EOF"
reset_ok "bypass/reset" "$RUN" client
kill -0 "$(server_pid)"
ok $? "bypass/reset: server still running"
client_bench_ok "bypass/reset: a new client served after it" -t 10 -r 2

# The kernel's zero-copy paths over a bypassed connection (probe checks
# every byte, in order). Sending with sendfile() or splice() into the
# socket goes through the sk_msg program and works.
for size in 1 65536 1048576; do
	for via in sendfile splicesend; do
		before=$(counters_line)
		out=$(bounded 60 "$RUN" client "$PROBE" "$via" "$PORT" "$size" 2>&1)
		rc=$?
		ok $rc "bypass/$via-$size: echoed exactly"
		((rc == 0)) || diag "$out"
		after=$(counters_line)
		((2 * size == $(grew "$before" "$after" bytes_redirected)))
		ok $? "bypass/$via-$size: all of it both ways through the bypass"
	done
done
# Receiving with splice() does not work: the redirected bytes wait in the
# socket's psock queue, which tcp_splice_read() never looks at (6.1 and
# 6.18; README). What must never happen is wrong data: either the bytes
# come back exactly (a kernel that fixed it), or none arrive.
out=$(bounded 60 "$RUN" client "$PROBE" splice "$PORT" 4096 2>&1)
rc=$?
diag "splice receive over the bypass: exit $rc: $out"
[[ $rc -eq 0 || $out == *"no data after"*"0 of 4096 bytes arrived"* ]]
ok $? "bypass/splice-receive: exact, or nothing arrives (known kernel limit), never wrong bytes"

out=$(bounded 180 "$RUN" client "$BENCH" -t 1000 -r 3 -p "$PORT" -q -o /dev/null)
is "$(field "$out" samples)/$(field "$out" failed)" 3000/0 "bypass/t1000-r3: 3000 samples, failed=0"

# ---- only where it should be ----------------------------------------------

# A client outside the cgroup: its end is not in the map, so nothing is
# redirected either way.
before=$(counters_line)
bench_ok "bypass/outside-client" -t 10 -r 2 -m 10
after=$(counters_line)
is "$(grew "$before" "$after" msgs_redirected)" 0 "bypass/outside-client: nothing redirected"

# Another port, server and client both in the cgroup: not ours.
bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -p "$3"' _ "$CG" \
	"$ROOT/user-echo/user-echo-server" "$SPARE_PORT" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do port_free "$SPARE_PORT" || break; sleep 0.1; done
before=$(counters_line)
out=$(bounded 60 "$RUN" client "$BENCH" -p "$SPARE_PORT" -t 10 -r 2 -m 10 -q -o /dev/null)
is "$(field "$out" failed)" 0 "bypass/other-port: bench in the cgroup against port $SPARE_PORT, failed=0"
after=$(counters_line)
is "$(grew "$before" "$after" socks_added)/$(grew "$before" "$after" msgs_redirected)" 0/0 \
	"bypass/other-port: no socket added, nothing redirected"
stop_bounded "${PIDS[-1]}" 2>/dev/null

# ---- flow control: the kernel has none, sockredir bounds it ---------------

# A peer that never reads: TCP stops the sender at the peer's receive
# window plus its own send buffer. The bypass by itself (--flow-limit 0)
# queues on the peer without a bound below net.ipv4.tcp_mem (2.3 GB on a
# 24 GB machine, measured by hand; docs/servers.md): bounded at 64 MiB
# here. With its default bound the sender goes on through TCP once the
# peer has 4 MiB unread, and TCP stops it. sockredir by hand, on the
# spare port, so that the peer can be a listener that never accepts.
tcp_mem() { awk '/^TCP:/ { for (i = 2; i < NF; i++) if ($i == "mem") print $(i + 1) }' /proc/net/sockstat; }
fill_against_mute() {
	local prefix=("$@") mute
	"${prefix[@]}" "$PROBE" mute "$SPARE_PORT" 30 >/dev/null &
	mute=$!
	for _ in $(seq 50); do port_free "$SPARE_PORT" || break; sleep 0.1; done
	bounded 60 "${prefix[@]}" "$PROBE" fill "$SPARE_PORT" $((64 << 20))
	kill "$mute"
	wait "$mute" 2>/dev/null
}
SPARE_CG=$cgroup2/echolab-bypass-$SPARE_PORT
# shellcheck disable=SC2016 # expanded by that bash
in_cg=(bash -c 'echo $$ >"$1/cgroup.procs" && exec "${@:2}"' _ "$SPARE_CG")
# fill_bypassed SOCKREDIR-ARGS...: the same over a sockredir of those
# arguments, started here; the probe's output in $FILLED, sockredir's
# stderr in $REDIR_ERR.
REDIR_ERR=$(mktemp)
fill_bypassed() {
	local spare_redir
	"$SOCKREDIR" -p "$SPARE_PORT" "$@" >/dev/null 2>"$REDIR_ERR" &
	spare_redir=$!
	for _ in $(seq 50); do [[ -d $SPARE_CG ]] && break; sleep 0.1; done
	FILLED=$(fill_against_mute "${in_cg[@]}")
	stop_bounded "$spare_redir"
	ok $? "bypass/flow-control: sockredir $* on port $SPARE_PORT stops cleanly"
}
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
ok $? "bypass/flow-control: TCP stops the sender below 32 MiB"
accepted=$(field "$bounded_bypass" accepted)
((accepted > 0 && accepted < 32 << 20))
ok $? "bypass/flow-control: over the bypass too, the sender is stopped below 32 MiB"
is "$(field "$unbounded" accepted) $(field "$unbounded" stop)" "$((64 << 20)) max" \
	"bypass/flow-control: with --flow-limit 0 all 64 MiB are queued on the peer (the kernel has no bound)"
grep -q 'WARNING: --flow-limit 0: no flow control' "$REDIR_ERR"
ok $? "bypass/flow-control: ... and sockredir says so when it starts"
rm -f "$REDIR_ERR"
for _ in $(seq 50); do (($(tcp_mem) < mem0 + 2048)) && break; sleep 0.1; done
(($(tcp_mem) < mem0 + 2048))
ok $? "bypass/flow-control: TCP memory back near its baseline once closed"
diag "bypass/flow-control: TCP memory $mem0 -> $(tcp_mem) pages"
[[ ! -d $SPARE_CG ]]
ok $? "bypass/flow-control: cgroup $SPARE_CG removed"

# ---- stop, kill -9 ------------------------------------------------------------

"$RUN" stop >/dev/null
ok $? "bypass/stop: run.sh stop (checks sockredir, cgroup, programs, dmesg)"
nothing_left "bypass/stop"

# sockredir killed under load: the connections go on over TCP.
out=$("$RUN" user --bypass 2>&1)
rc=$?
ok $rc "bypass/kill-9: run.sh user --bypass"
((rc == 0)) || diag "$out"
loadout=$(mktemp)
loadraw=$(mktemp)
"$RUN" client "$BENCH" -p "$PORT" -t 50 -d 4 -q -o "$loadraw" >"$loadout" 2>&1 &
load=$!
sleep 1.5
kill -9 "$(state bypass.pid)"
wait "$load"
ok $? "bypass/kill-9 under load: bench exit 0"
is "$(field "$(cat "$loadout")" failed)" 0 "bypass/kill-9 under load: failed=0"
if [[ $(field "$(cat "$loadout")" failed) != 0 ]]; then
	diag "$(cat "$loadout")"
	# shellcheck disable=SC2016 # awk
	diag "statuses: $(awk '!/^#/ { n[$5]++ } END { for (s in n) printf "%s=%d ", s, n[s] }' "$loadraw")"
	diag "first failure: $(grep -v '^#' "$loadraw" | grep -vm1 'ok$')"
fi
rm -f "$loadout" "$loadraw"
absent "bypass/kill-9: sockredir is gone" . processes "sockredir --port $PORT"
kill -9 "$(server_pid)"
"$RUN" stop >/dev/null
ok $? "bypass/kill-9: run.sh stop cleans up after both (no kernel warnings)"
nothing_left "bypass/kill-9"

# bench user --bypass: both, side by side, in one results directory.
sbs=$(mktemp -d)
out=$(ECHOLAB_TW_MAX=1000000 bounded 120 "$RUN" bench user --bypass -t 10 -r 1 -m 20 --out "$sbs" 2>&1)
ok $? "bypass/bench: run.sh bench user --bypass exits 0"
rows=$(summary_rows "$sbs/summary.md" | tr '\n' ,)
is "$rows" "user 200 0,user-bypass 200 0," "bypass/bench: user and user-bypass side by side, 200 samples each, 0 failed"
[[ $rows == "user 200 0,user-bypass 200 0," ]] || diag "$out"
rm -rf "$sbs"
"$RUN" bench ebpf --bypass >/dev/null 2>&1
is $? 2 "bypass/bench: --bypass with ebpf is a usage error"

# attached_by_hand: until the sockredir started by hand has attached its
# program to the port's cgroup (5 s at most): the cgroup alone is made
# before, and a run.sh started in between races it instead.
attached_by_hand() {
	for _ in $(seq 50); do
		[[ $(count_of "^$CG (cgroup_)?sock_ops redir_sockops$" bpf_attachments) == 1 ]] && return
		sleep 0.1
	done
}

# A bypass that cannot attach (another sockredir holds the port's cgroup):
# run.sh says why and leaves nothing, and the next start works.
"$SOCKREDIR" -p "$PORT" >/dev/null 2>&1 &
PIDS+=($!)
attached_by_hand
out=$("$RUN" user --bypass 2>&1)
ok $(($? == 0)) "bypass/cannot-attach: run.sh user --bypass fails"
like "$out" "another instance serves this port.*sockredir exited before it attached" \
	"bypass/cannot-attach: says why"
[[ ! -e $STATE_DIR ]] && port_free "$PORT"
ok $? "bypass/cannot-attach: no state left, port free"
stop_bounded "${PIDS[-1]}" 2>/dev/null
"$RUN" user --bypass >/dev/null && "$RUN" stop >/dev/null
ok $? "bypass/cannot-attach: the next start and stop work"

# Another sockredir (by hand) owns the port's cgroup: ours cannot attach,
# and run.sh neither touches that cgroup nor leaves state or sysctls.
backlog=$(sysctl -n net.core.netdev_max_backlog)
"$SOCKREDIR" -p "$PORT" >/dev/null 2>&1 &
PIDS+=($!)
attached_by_hand
out=$("$RUN" user --bypass 2>&1)
ok $(($? == 0)) "bypass/foreign: run.sh user --bypass fails"
[[ ! -e $STATE_DIR && $(sysctl -n net.core.netdev_max_backlog) == "$backlog" ]]
rc=$?
ok $rc "bypass/foreign: no state left, sysctls as found"
((rc == 0)) ||
	diag "state: $(ls "$STATE_DIR" 2>&1); netdev_max_backlog $(sysctl -n net.core.netdev_max_backlog), was $backlog; run.sh said: $out"
[[ $(count_of "^$CG (cgroup_)?sock_ops redir_sockops$" bpf_attachments) == 1 ]]
ok $? "bypass/foreign: the other sockredir's cgroup and program untouched"
stop_bounded "${PIDS[-1]}" 2>/dev/null

# A busy port: no sockredir is left running.
"$PROBE" mute "$PORT" 5 >/dev/null &
PIDS+=($!)
sleep 0.3
out=$("$RUN" user --bypass 2>&1)
ok $(($? == 0)) "bypass/busy-port: run.sh user --bypass fails"
like "$out" "port $PORT is busy" "bypass/busy-port: says the port is busy"
absent "bypass/busy-port: no sockredir left" . processes "sockredir --port $PORT"
kill "${PIDS[-1]}" 2>/dev/null
wait "${PIDS[-1]}" 2>/dev/null

done_testing
