# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the variables are for the tests
# Part of tests/lib.sh, which sources it (source that, not this): what the
# tests that start servers share, and what a server may leave behind.

# ---- shared by the tests that start servers -------------------------------

# stop_bounded PID [SECONDS]: SIGTERM to a process this shell started, and
# its exit status; SIGKILL when it is still there after SECONDS (10), so a
# process that ignores SIGTERM fails its case (status 137) instead of
# hanging the file in wait.
stop_bounded() {
	local pid=$1
	kill -TERM "$pid" 2>/dev/null
	wait_until "${2:-10}" pid_gone "$pid"	# bash reaps its children
	if kill -0 "$pid" 2>/dev/null; then
		diag "pid $pid still there ${2:-10} s after SIGTERM: SIGKILL"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid"
}

PIDS=()	# helper processes (probes) to kill on exit

# Kills the probes and stops any server run.sh started; trapped on EXIT.
# shellcheck disable=SC2317 # called by the EXIT trap
stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	"$RUN" stop >/dev/null 2>&1
}

# busy_port_refused LABEL START...: with another program listening on
# $PORT, run.sh START fails and says the port is busy (two cases).
busy_port_refused() {
	local label=$1 out
	shift
	"$PROBE" mute "$PORT" 30 >/dev/null &
	PIDS+=($!)
	wait_until 3 port_taken "$PORT"
	out=$("$RUN" "$@" 2>&1)
	ok $((!$?)) "$label/busy-port: run.sh fails"
	like "$out" "port $PORT is busy" "$label/busy-port: says the port is busy"
	kill "${PIDS[@]}" 2>/dev/null
	wait "${PIDS[@]}" 2>/dev/null
	PIDS=()
}

# clients_for START-OPTIONS...: CLIENT for a server started with them:
# run.sh client where the clients must join a front to take it (the
# bypass's cgroup: --bypass, and the proxy's skmsg path for both legs),
# else nothing.
clients_for() {
	CLIENT=()
	[[ " $* " != *" --proxy skmsg "* && " $* " != *" --bypass "* ]] || CLIENT=("$RUN" client)
}

# counters_line: the running bypass's (sockredir's) counters, as run.sh
# status reads them from its BPF map.
counters_line() { "$RUN" status | sed -n 's/^ *counters \(socks_added=\)/\1/p'; }

# bench_ok NAME ARGS...: bench against $PORT (inside CLIENT), no sample
# may fail.
bench_ok() {
	local name=$1 out
	shift
	out=$(bounded 180 "${CLIENT[@]}" "$BENCH" -p "$PORT" -q -o /dev/null "$@")
	ok $? "$name: exit 0"
	is "$(field "$out" failed)" 0 "$name: failed=0"
	[[ $(field "$out" failed) == 0 ]] || diag "$out"
}

server_pid() { state pid; }

# tcp_counters NAME...: 'NAME VALUE' for each of the kernel's TCP counters
# named as nstat names them (TcpEstabResets, TcpExtListenOverflows), from
# /proc/net/snmp and netstat, which the guest has without nstat: a line
# of names, then a line of values, each led by 'Tcp:' or 'TcpExt:'.
tcp_counters() {
	awk -v want="$*" '
		BEGIN { n = split(want, w); for (i = 1; i <= n; i++) wanted[w[i]] = 1 }
		$1 == "TcpExt:" || $1 == "Tcp:" {
			p = substr($1, 1, length($1) - 1)
			if (!(p in names)) { names[p] = $0; next }
			split(names[p], f)
			for (i = 2; i <= NF; i++) if ((p f[i]) in wanted) print p f[i], $i
			delete names[p]
		}' /proc/net/snmp /proc/net/netstat
}

# tcp_estab_resets: connections reset out of ESTABLISHED or CLOSE_WAIT, at
# either end, counted by the kernel.
tcp_estab_resets() { tcp_counters TcpEstabResets | awk '{ print $2 }'; }

# _reset_seen: for reset_ok, through wait_until (bash's dynamic scope: it
# reads reset_ok's before and cport, and sets its n and left): both ends
# counted reset and the server's socket gone.
_reset_seen() {
	n=$(($(tcp_estab_resets) - before))
	left=$(connections "$PORT" "$cport") || left=unread
	((n >= 2)) && [[ -z $left ]]
}

# reset_ok NAME [PREFIX...]: a client resets with 1 MiB in flight (probe
# reset, run through PREFIX: run.sh client for the bypass), and the proof
# that the reset reached the server: the kernel counted two ESTABLISHED
# connections reset (the probe's end and the server's; a FIN instead would
# count one) and ss shows no socket of the server's end left. Two cases.
reset_ok() {
	local name=$1 out rc before cport n=0 left=unread
	shift
	before=$(tcp_estab_resets)
	out=$(bounded 60 "$@" "$PROBE" reset "$PORT" 1048576 2>&1)
	rc=$?
	ok $rc "$name: the client resets with 1 MiB in flight"
	((rc == 0)) || diag "$out"
	cport=$(sed -n 's/^reset from port \([0-9]*\) .*/\1/p' <<<"$out")
	((rc != 0)) || wait_until 5 _reset_seen
	[[ -n $cport ]] && ((n >= 2)) && [[ -z $left ]]
	ok $? "$name: the server's end was reset"
	diag "$name: EstabResets +$n; port ${cport:-?}'s peer socket: ${left:-gone}"
}

# ---- what a server leaves behind ------------------------------------------

# leftovers: what a server could leave behind, as text to compare before
# and after: listeners on the port and the next (a relay's backend),
# processes of the servers' and the fronts' binaries,
# BPF programs and cgroup attachments, cgroup v2 directories, modules,
# the loopback's RPS mask (run.sh --cpus).
# Fails when a tool fails (the listers of tests/lib.sh): a missing or
# broken bpftool, ss or pgrep must not read as "nothing".
leftovers() {
	local s b cg items
	listeners "$PORT" || return 1
	listeners "$((PORT + 1))" || return 1	# a relay's backend (run.sh --proxy)
	for s in "${SERVERS[@]}" "${DEPLOYED[@]}" "${FRONTS[@]}" haproxy nginx; do
		b=$(server_binary "$s")
		# The proxy's relays people deploy (servers/proxy.sh), where
		# installed: nginx's workers name themselves 'nginx: worker
		# process', its master 'nginx: master process'.
		case $s in
		haproxy) b=$(command -v haproxy) || continue ;;
		nginx) b='^nginx: '; command -v nginx >/dev/null || continue ;;
		esac
		items=$(processes "$b") || return 1
		[[ -z $items ]] || awk -v s="$s" '{ print s, "pid", $1 }' <<<"$items"
	done
	items=$(bpf_progs) || return 1
	[[ -z $items ]] || awk '{ print "prog", $2, $3 }' <<<"$items" | sort
	items=$(bpf_attachments) || return 1
	[[ -z $items ]] || awk '{ print "attached", $0 }' <<<"$items" | sort
	cg=$(cgroup2_mount)
	[[ -z $cg ]] || find "$cg" -mindepth 1 -maxdepth 1 -type d | sort
	[[ ! -e /proc/modules ]] || cut -d' ' -f1 /proc/modules | sort
	echo "loopback rps_cpus $(<"$LO_RPS")"
}

# leftovers_or_why: leftovers, or (status 1) why a tool failed.
leftovers_or_why() {
	local err out
	err=$(mktemp)
	if out=$(leftovers 2>"$err"); then
		rm -f "$err"
		echo "$out"
		return 0
	fi
	cat "$err"
	rm -f "$err"
	return 1
}

# nothing_left_since NAME BASELINE: nothing more than BASELINE (leftovers
# before the server started) is left behind.
nothing_left_since() {
	local name=$1 now
	if ! now=$(leftovers_or_why); then
		ok 1 "$name: nothing left (a tool failed: cannot tell)"
		diag "$now"
		return
	fi
	is "$(diff <(echo "$2") <(echo "$now"))" "" \
		"$name: nothing left (no process, listener, BPF program, attachment, cgroup or module)"
}

