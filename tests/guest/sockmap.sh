#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Which sockmap behaviours the running kernel has: detected, each by a
# small experiment against the real servers (ebpf, user behind the
# sockredir bypass), then compared with what tests/sockmap-kernels.txt
# expects of this kernel (major.minor). A kernel that behaves otherwise,
# or one the file has no column for, fails its case with a line naming
# the kernel, the behaviour, what was expected and what was found, so
# that a new kernel's change is noticed. Each detection also prints
# '# found BEHAVIOUR KERNEL VALUE' for ebpf-echo/README.md's table.
#
# Runs natively (tests/sockmap.t) and in the qemu guest
# (tests/vm-sockmap.t, one run per guest kernel). Needs root. TAP.
#
# Cases (TESTS=sockmap.sh:CASE,... picks some; sockmap.t and vm-sockmap.t
# pass theirs on so), each a behaviour of the file, detected:
#   preaccept-verdict    data sent before accept: echoed by the verdict, or
#                        left for the server's recv()
#   fin-verdict          the verdict sees a zero-length skb per FIN, or none
#   map-removal-warning  a socket deleted from the map: does recvmsg warn,
#                        does the next message come back
#   splice-receive       splice() from a socket behind the bypass
#   bypass-fionread      FIONREAD behind the bypass
#   bypass-poll          epoll and poll wake up behind the bypass
#   bypass-flow-control  how much the bypass queues for a peer that never reads
#   sockhash-close-wait  does a SOCKHASH take a socket whose peer's FIN came
#                        (the proxy's sockmap path relays such a pair itself)
#   proxy-preinsert      bytes that came before the proxy inserted its
#                        sockets: does SO_RCVLOWAT hand them to the verdict
#   every-behaviour      each behaviour picked was detected (none went missing)
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/../lib.sh"
ALL_TESTS="preaccept-verdict fin-verdict map-removal-warning splice-receive
	bypass-fionread bypass-poll bypass-flow-control sockhash-close-wait proxy-preinsert
	every-behaviour"
select_cases "$@"

EXPECT=$ECHOLAB_ROOT/tests/sockmap-kernels.txt
INQ=$ECHOLAB_ROOT/tests/build/inq
SOCKHASH_INSERT=$ECHOLAB_ROOT/tests/build/sockhash-insert
SOCKREDIR=$ECHOLAB_ROOT/sockredir/sockredir
KERNEL=$(uname -r)
KV=$(cut -d. -f1,2 <<<"$KERNEL")
BEHAVIOURS=(preaccept-verdict fin-verdict splice-receive bypass-fionread
	bypass-poll bypass-flow-control map-removal-warning sockhash-close-wait
	proxy-preinsert)
JUDGED=()
trap 'stop_all; rm -f "${INQ_OUT:-}"; [[ -z ${FD:-} ]] || exec {FD}>&-' EXIT

# expected BEHAVIOUR: this kernel's column of the behaviour's line.
expected() {
	awk -v b="$1" -v k="$KV" '
		/^#/ || NF == 0 { next }
		$1 == "behaviour" { for (i = 2; i <= NF; i++) col[$i] = i; next }
		$1 == b && (k in col) { print $(col[k]) }' "$EXPECT"
}

# judge BEHAVIOUR FOUND: one case: what was found against what this kernel
# is expected to do.
judge() {
	local b=$1 found=$2 want name
	want=$(expected "$b")
	JUDGED+=("$b")
	echo "# found $b $KV $found"
	name="on $KV: as tests/sockmap-kernels.txt expects"
	if ! grep -qE "^behaviour .* $KV( |\$)" "$EXPECT"; then
		ok 1 "$name"
		diag "$b: found '$found'; tests/sockmap-kernels.txt has no column for $KV: a kernel this suite has not met, add one (and ebpf-echo/README.md's table)"
	elif [[ -z $want ]]; then
		ok 1 "$name"
		diag "$b: found '$found'; tests/sockmap-kernels.txt has no line for $b"
	elif [[ $found == "$want" ]]; then
		ok 0 "$name"
		diag "$b: $found, as expected for $KV"
	else
		ok 1 "$name"
		diag "$b: found '$found', expected '$want' for $KV: the kernel's behaviour changed (tests/sockmap-kernels.txt, ebpf-echo/README.md)"
	fi
}

kernel_warnings() { dmesg | grep -c 'recvmsg seq # bug' || true; }

# ---- the ebpf server: before accept, FIN, leaving the map ------------------

# ebpf_running: the ebpf server on $PORT, started by run.sh (a case of
# its own: setup) if it is not running.
ebpf_running() {
	[[ $(state server) == ebpf && -z $(state fronts) ]] && default_running && return 0
	"$RUN" stop >/dev/null 2>&1
	"$RUN" ebpf >/dev/null 2>&1
	ok $? "setup: run.sh ebpf"
}

# bypass_running: the user server behind the bypass, likewise.
bypass_running() {
	[[ $(state server) == user && $(state fronts) == bypass ]] && default_running && return 0
	"$RUN" stop >/dev/null 2>&1
	"$RUN" user --bypass >/dev/null 2>&1
	ok $? "setup: run.sh user --bypass"
}

# connect_stopped PID BEHAVIOUR: the server stopped (SIGSTOP: it cannot
# accept), a connection to it open on FD; on failure the server goes on
# and the behaviour's case fails.
connect_stopped() {
	kill -STOP "$1"
	exec {FD}<>"/dev/tcp/127.0.0.1/$PORT" && return 0
	kill -CONT "$1"
	ok 1 "connect to the stopped server"
	return 1
}

# Data before accept: with the server stopped it cannot accept, so its end
# has no struct socket yet. A verdict that runs anyway echoes the bytes
# (the kernel redirects them, the process is not needed); one that is
# skipped leaves them in the receive queue until the server's recv().
test_preaccept_verdict() {
	local pid found reply=""
	ebpf_running || return 1
	pid=$(server_pid)
	connect_stopped "$pid" preaccept-verdict || return 1
	printf 'hello world' >&"$FD"
	read -r -t 2 -N 11 -u "$FD" reply
	if [[ $reply == 'hello world' ]]; then found=runs; else found=skipped; fi
	kill -CONT "$pid"
	judge preaccept-verdict "$found"
	if [[ $found == skipped ]]; then
		read -r -t 5 -N 11 -u "$FD" reply
		is "$reply" 'hello world' "the server's recv() after accept pushes them through (its workaround)"
	fi
	exec {FD}>&-
	FD=
}

# FIN: the verdict sees one zero-length skb per cleanly closed
# connection (fin_skbs), or none.
# fins_seen BEFORE N: run.sh status counts N more fin_skbs than BEFORE.
fins_seen() { [[ $(grew "$1" "$("$RUN" status)" fin_skbs) == "$2" ]]; }

test_fin_verdict() {
	local before after fins out
	ebpf_running || return 1
	before=$("$RUN" status)
	out=$(bounded 60 "$BENCH" -p "$PORT" -t 1 -r 10 -m 2 -q -o /dev/null)
	is "$(field "$out" failed)" 0 "10 connections echoed, failed=0"
	wait_until 0.5 fins_seen "$before" 10
	after=$("$RUN" status)
	fins=$(grew "$before" "$after" fin_skbs)
	case $fins in
	10) judge fin-verdict zero-length-skb ;;
	0) judge fin-verdict not-seen ;;
	*) judge fin-verdict "fin_skbs+$fins-of-10" ;;
	esac
}

# A live socket taken out of the map by hand (bpftool map delete), after
# its first bytes came before accept: does TCP's recvmsg then warn, and
# does the next message still come back (through userspace)?
detect_map_removal() {
	local pid id keys key warn0 warn1 found reply=""
	ebpf_running || return 1
	pid=$(server_pid)
	warn0=$(kernel_warnings)
	connect_stopped "$pid" map-removal-warning || return 1
	printf 'first bytes' >&"$FD"
	sleep 0.3
	kill -CONT "$pid"
	read -r -t 5 -N 11 -u "$FD" reply
	is "$reply" 'first bytes' "pre-accept bytes echoed" || diag "reply '$reply'"
	id=$(bpf_maps "$pid" echo_socks | head -n 1)
	keys=$(bpftool -j map dump id "$id" 2>/dev/null | grep -o '"key":\[[^]]*\]')
	is "$(grep -c . <<<"$keys")" 1 "one live connection in echo_socks" ||
		diag "keys: $keys"
	key=$(head -n 1 <<<"$keys" | grep -o '0x[0-9a-f]*' | tr '\n' ' ')
	# shellcheck disable=SC2086 # the key: one word per byte
	[[ -n $key ]] && bpftool map delete id "$id" key $key
	ok $? "its key deleted from echo_socks"
	diag "map-removal-warning: key ${key:-(none)}"
	printf 'after leave' >&"$FD"
	reply=
	read -r -t 5 -N 11 -u "$FD" reply
	exec {FD}>&-
	FD=
	sleep 0.5
	warn1=$(kernel_warnings)
	diag "after leaving the map: the next message came back as '$reply'; seq # warnings $warn0 -> $warn1"
	if ((warn1 > warn0)); then found=warns; else found=quiet; fi
	if [[ $reply == 'after leave' ]]; then found+=-echoed; else found+=-stuck; fi
	judge map-removal-warning "$found"
	"$RUN" stop >/dev/null 2>&1
}

# ---- the bypass (sk_msg, no verdict program): splice, FIONREAD, poll -----

test_splice_receive() {
	local out rc
	bypass_running || return 1
	out=$(bounded 60 "$RUN" client "$PROBE" splice "$PORT" 4096 2>&1)
	rc=$?
	diag "probe splice: exit $rc: $out"
	if ((rc == 0)); then
		judge splice-receive works
	elif [[ $out == *"no data after"*"0 of 4096 bytes arrived"* ]]; then
		judge splice-receive never-arrives
	else
		judge splice-receive "wrong-bytes"
	fi
}

# inq_out: tests/build/inq's line over the bypass (1000 bytes), checked.
inq_out() {
	local out
	out=$(bounded 30 "$RUN" client "$INQ" "$PORT" 1000 2>&1)
	ok $? "inq got its 1000 bytes back exactly" || diag "$out"
	diag "inq: $out"
	echo "$out" >"$INQ_OUT"
}

test_bypass_fionread() {
	local fionread
	bypass_running || return 1
	inq_out
	fionread=$(field "$(cat "$INQ_OUT")" fionread)
	case $fionread in
	1000) judge bypass-fionread counts ;;
	0) judge bypass-fionread zero ;;
	*) judge bypass-fionread "fionread-$fionread" ;;
	esac
}

test_bypass_poll() {
	local epoll poll
	bypass_running || return 1
	inq_out
	epoll=$(field "$(cat "$INQ_OUT")" epoll)
	poll=$(field "$(cat "$INQ_OUT")" poll)
	case $epoll/$poll in
	in/in) judge bypass-poll wakes ;;
	timeout/in) judge bypass-poll no-wakeup ;;
	in/no) judge bypass-poll wakes-not-readable ;;
	*) judge bypass-poll "epoll-$epoll-poll-$poll" ;;
	esac
}

# The bypass against a peer that never reads: TCP stops the sender at
# window + send buffer; the bypass queues on the peer (bounded at 64 MiB
# here). sockredir by hand on the spare port, so the peer can be a
# listener that never accepts (as tests/bypass.t), with --flow-limit 0:
# what the kernel does by itself, not sockredir's bound over it.
test_bypass_flow_control() {
	local cg spare mute out accepted
	"$RUN" stop >/dev/null 2>&1
	cg=$(cgroup2_mount)/echolab-bypass-$SPARE_PORT
	"$SOCKREDIR" -p "$SPARE_PORT" --flow-limit 0 >/dev/null 2>&1 &
	spare=$!
	PIDS+=("$spare")
	wait_until 5 test -d "$cg"
	ok $? "setup: sockredir on port $SPARE_PORT made $cg" || return 1
	# shellcheck disable=SC2016 # expanded by that bash
	bash -c 'echo $$ >"$1/cgroup.procs" && exec "${@:2}"' _ "$cg" "$PROBE" mute "$SPARE_PORT" 30 >/dev/null &
	mute=$!
	wait_until 5 port_taken "$SPARE_PORT"
	# shellcheck disable=SC2016
	out=$(bounded 60 bash -c 'echo $$ >"$1/cgroup.procs" && exec "${@:2}"' _ "$cg" \
		"$PROBE" fill "$SPARE_PORT" $((64 << 20)))
	kill "$mute" 2>/dev/null
	wait "$mute" 2>/dev/null
	stop_bounded "$spare"
	ok $? "setup: sockredir on port $SPARE_PORT stops cleanly"
	diag "never-reading peer over the bypass: $out"
	accepted=$(field "$out" accepted)
	if [[ $accepted == $((64 << 20)) ]]; then
		judge bypass-flow-control none
	elif [[ -n $accepted ]] && ((accepted > 0)); then
		judge bypass-flow-control "stops-at-$((accepted >> 10))KiB"
	else
		judge bypass-flow-control "probe-failed"
	fi
}

# ---- the proxy's sockmap path (proxy/): what its process relies on ------

# A SOCKHASH takes established (and listening) sockets only: an accepted
# socket whose client has sent its FIN is in CLOSE_WAIT, and the proxy
# relays such a pair in its process (insert_fallbacks). tests/build/
# sockhash-insert tries both states with the bpf(2) call itself.
test_sockhash_close_wait() {
	local out
	out=$(bounded 10 "$SOCKHASH_INSERT" 2>&1)
	ok $? "sockhash-insert ran" || { diag "$out"; return 1; }
	diag "sockhash-insert: $out"
	is "$(field "$out" established)" ok "an established socket goes in"
	case $(field "$out" close_wait) in
	ok) judge sockhash-close-wait taken ;;
	EOPNOTSUPP) judge sockhash-close-wait refused ;;
	*) judge sockhash-close-wait "refused-$(field "$out" close_wait)" ;;
	esac
}

# Bytes that reach the proxy's client socket before the proxy inserted it
# wait in its receive queue, where the verdict does not look by itself
# (preaccept-verdict: skipped). After inserting, the proxy sets
# SO_RCVLOWAT, which makes TCP call the socket's data_ready: the kernel
# then relays them (the process moved no byte), or the process has to
# (its bytes_to_backend counts them), or they are stuck. With the proxy
# stopped (SIGSTOP) the connection and its bytes wait before accept.
test_proxy_preinsert() {
	local pid reply="" out moved found
	"$RUN" stop >/dev/null 2>&1
	"$RUN" user --proxy sockmap >/dev/null 2>&1
	ok $? "setup: run.sh user --proxy sockmap" || return 1
	pid=$(state proxy.pid)
	connect_stopped "$pid" proxy-preinsert || return 1
	printf 'hello world' >&"$FD"
	sleep 0.3
	kill -CONT "$pid"
	read -r -t 5 -N 11 -u "$FD" reply
	exec {FD}>&-
	FD=
	# The proxy's counters, from its last words (run.sh stop).
	out=$("$RUN" stop 2>&1)
	ok $? "setup: run.sh stop" || diag "$out"
	moved=$(field "$out" bytes_to_backend)
	diag "proxy-preinsert: the echo came back as '$reply'; the proxy's process moved ${moved:-?} bytes to the backend; $(grep -o 'insert_fallbacks=[0-9]*' <<<"$out")"
	if [[ $reply != 'hello world' ]]; then
		found=stuck
	elif [[ $moved == 0 ]]; then
		found='kernel-relays'
	elif [[ -n $moved ]]; then
		found='process-relays'
	else
		found='no-counters'
	fi
	judge proxy-preinsert "$found"
}

# It provokes a WARN: where that panics, the machine would go down; on the
# user's own kernel (not the guest's) it taints it, so there it runs only
# when asked: SOCKMAP_WARN_OK=1 (how the 6.18 column was found).
warn_not_provoked() { [[ ${ECHOLAB_WHERE:-} != vm && ${SOCKMAP_WARN_OK:-} != 1 ]]; }

test_map_removal_warning() {
	if fact panic-on-warn >/dev/null; then
		skip "map-removal-warning: on $KV: as tests/sockmap-kernels.txt expects" panic-on-warn
		JUDGED+=(map-removal-warning)
	elif warn_not_provoked; then
		diag "map-removal-warning: not provoked on this machine's own kernel (it WARNs and taints it); sudo SOCKMAP_WARN_OK=1 bash tests/sockmap.t does"
	else
		detect_map_removal
	fi
}

# A detection that could not run is a failure, not a missing line: each
# behaviour picked (but the warning where it is not provoked) was judged
# by the cases before.
test_every_behaviour() {
	local b want=()
	for b in "${BEHAVIOURS[@]}"; do
		case_selected "$b" || continue
		[[ $b == map-removal-warning ]] && ! fact panic-on-warn >/dev/null &&
			warn_not_provoked && continue
		want+=("$b")
	done
	is "$(printf '%s\n' "${JUDGED[@]}" | grep . | sort | tr '\n' ' ')" \
		"$(printf '%s\n' "${want[@]}" | grep . | sort | tr '\n' ' ')" \
		"every behaviour picked detected on $KV"
	diag "sockmap: ${#want[@]} of ${#BEHAVIOURS[@]} behaviours to detect on $KERNEL"
}

[[ -x $INQ && -x $PROBE && -x $SOCKREDIR && -x $SOCKHASH_INSERT ]] || {
	echo "Bail out! build first: make all tests"
	exit 1
}
diag "kernel $KERNEL: expectations from the $KV column of $EXPECT"
INQ_OUT=$(mktemp)
run_tests
"$RUN" stop >/dev/null 2>&1
plan_at_end
