# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the variables are for its users
# lib/lifecycle.sh - one server at a time: start it (with its fronts, on its
# CPUs, in a network namespace), prove it serves, stop it, prove nothing of
# it is left, and say how it is. Its state lives in $STATE_DIR, written
# here only and read through state. The sysctls a 1000-thread run needs are
# raised while a server runs and restored when it stops.
#
# Used by run.sh and the commands (cmd/, ftrace/): server_start,
# server_stop, server_status, front_enter, ensure_built. The servers'
# hooks (lib/registry.sh) run inside these functions.

# shellcheck source=lib/registry.sh
source "$(dirname "${BASH_SOURCE[0]}")/registry.sh"

STATE_DIR=${ECHOLAB_STATE_DIR:-$(echolab_default ECHOLAB_STATE_DIR)}
SERVER_LOG=$STATE_DIR/server.log
BENCH=$ECHOLAB_ROOT/bench/bench
JUDGE=$ECHOLAB_ROOT/analysis/judge
SUMMARIZE=$ECHOLAB_ROOT/analysis/summarize
DEFAULT_PORT=$(echolab_default ECHOLAB_PORT)
# Where a server listens unless --addr says otherwise: this machine only. A
# lab tool must not open a server (a kernel-mode one at that) to the network.
DEFAULT_ADDR=127.0.0.1
READY_TIMEOUT_S=5	# a server must answer an echo within this
STOP_TIMEOUT_S=5	# SIGTERM grace period before SIGKILL
WANT_BACKLOG=4096	# 1000 clients connecting at once fit with room
# Past this many TIME_WAIT sockets the kernel closes new ones at once, so a
# client may reuse a 4-tuple whose server end still lives: SYN challenged,
# connect times out. 2 GiB machines default to 8192; 1000 x 10 makes 10,000.
WANT_TW_BUCKETS=131072
# Packets each CPU queues for the loopback's receive softirq. 1000 clients
# connecting at once overflow the default 1000 once that softirq runs as
# ksoftirqd among them: in the guest, 250-6,600 drops per 1000 x 10 run
# against kecho and 1-59 samples lost (SYNs dropped three times); with
# 10000, no drop and no loss in 9 of 9 runs.
WANT_NETDEV_BACKLOG=10000
# The loopback's receive packet steering (RPS) mask: --cpus points it at
# the server's CPUs, so that the kernel's receive processing of a local
# packet runs there, and with it whatever a kernel server does in that
# context (ebpf's verdict and echo, kecho's work queued from it); by
# default it runs on the CPU that sent the packet, the client's.
LO_RPS=/sys/class/net/lo/queues/rx-0/rps_cpus

# The network namespace of the server being started or stopped (its
# state's netns); empty: this one.
_lc_netns=

# state KEY: what the lifecycle recorded (server, pid, addr, port, exe, args,
# cpus, netns, fronts, started, and each front's own), or nothing.
state() { cat "$STATE_DIR/$1" 2>/dev/null || true; }

# state_set KEY VALUE: for the hooks, which keep their own state here.
state_set() { echo "$2" >"$STATE_DIR/$1"; }

# in_netns CMD...: CMD where the server lives. nsenter, not 'ip netns
# exec': that one also remounts /sys, which hides the cgroup v2 mount.
# nsenter execs CMD: a process started so in the background is CMD's pid.
in_netns() {
	local enter=()
	[[ -z $_lc_netns ]] || enter=(nsenter --net="/run/netns/$_lc_netns")
	"${enter[@]}" "$@"
}

# port_listening PORT: the listening TCP sockets on it, as ss prints them.
port_listening() { in_netns ss -Htln "sport = :$1" 2>/dev/null || true; }

port_owner() {
	in_netns ss -Htlnp "sport = :$1" 2>/dev/null | grep -o 'users:.*' | head -n1 || true
}

# ensure_built NAME: builds server or front NAME and bench when either is
# missing, installing packages first when a tool the build needs is. One
# without dir= (a peer, run.sh command's) is not built here.
ensure_built() {
	local name=$1 tool dir
	dir=$(server_get "$name" dir)
	if [[ (-e $(server_binary "$name") || -z $dir) && -x $BENCH ]]; then
		return 0
	fi
	for tool in make $(server_get "$name" tools); do
		if ! command -v "$tool" >/dev/null; then
			say "'$tool' is missing: running 'make deps' first"
			"$ECHOLAB_ROOT/scripts/deps.sh"
			break
		fi
	done
	say "building ${dir:+$name and }bench"
	make -C "$ECHOLAB_ROOT" --no-print-directory bench >/dev/null ||
		die "building bench failed: run 'make bench' to see why"
	[[ -z $dir ]] || make -C "$ECHOLAB_ROOT/$dir" --no-print-directory >/dev/null ||
		die "the build failed: run 'make -C $dir' to see why"
}

# ---- a plain process server: the hooks' defaults ------------------------------

# PORT ADDR ARGS...: the binary, detached, in its own session, in the
# server's network namespace, on its CPUs and in its fronts, listening on
# ADDR (--addr); pid is set. $! must be the server itself: front_enter's
# subshell, nsenter, setsid and taskset exec, none of them forks.
default_start() {
	local port=$1 addr=$2
	shift 2
	start_detached --port "$port" --addr "$addr" "$@"
}

# start_detached ARGS...: the server's binary with ARGS, detached, in its
# namespace and on its CPUs, its pid in the state (a start hook's work for
# a binary with a command line of its own).
start_detached() { start_program "$(server_binary "$(state server)")" "$@"; }

# start_program BIN ARGS...: the same for any program (run.sh command).
start_program() {
	local bin=$1 enter=() place=()
	shift
	[[ -z $_lc_netns ]] || enter=(nsenter --net="/run/netns/$_lc_netns")
	[[ -z $(state server_cpus) ]] || place=(taskset -c "$(state server_cpus)")
	state_set exe "$bin"
	# The server joins its fronts before it opens its listener: a socket
	# belongs to the cgroup of the process that made it.
	front_enter "${enter[@]}" setsid "${place[@]}" "$bin" "$@" \
		</dev/null >"$SERVER_LOG" 2>&1 &
	pid=$!
	# Recorded at once: a start interrupted from here on (Ctrl-C of
	# compare) leaves a server that server_stop can find.
	state_set pid "$pid"
	wait_exec "$pid" "$bin"
}

default_running() { alive "$(state pid)" "$(state exe)"; }

# default_ready PORT ADDR: it serves: an echo comes back (echo_ok).
default_ready() { echo_ok "$@"; }

default_stop() { terminate "$(state server)" "$(state pid)" "$(state exe)"; }

# wait_exec PID EXE: until a started shell has become EXE (a second at most).
wait_exec() {
	local pid=$1 exe=$2 i
	for ((i = 0; i < 100; i++)); do
		[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$exe" ]] && return 0
		alive "$pid" || return 0	# server_start reports it
		sleep 0.01
	done
}

# terminate NAME PID EXE: SIGTERM, then SIGKILL after a grace period.
terminate() {
	local name=$1 pid=$2 exe=$3 i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
		alive "$pid" "$exe" || break
		sleep 0.1
	done
	if alive "$pid" "$exe"; then
		say "$name (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT_S}s: killing it"
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.2
	fi
	wait "$pid" 2>/dev/null || true
	! alive "$pid" "$exe" || die "$name (pid $pid) is still running after SIGKILL"
}

# ---- fronts ------------------------------------------------------------------

# progs_outlive_none PROG PROCESS WHAT: waits (STOP_TIMEOUT_S) until no
# more BPF programs named PROG are loaded than processes named PROCESS run
# (others', on other ports, keep theirs), and dies naming WHAT when they
# stay. The kernel drops a program with the last process that holds it
# and the last socket that used it (a psock goes after an RCU grace
# period): a front's stop hook checks this.
progs_outlive_none() {
	local prog=$1 process=$2 what=$3 i progs procs
	for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
		progs=$(bpftool prog show) || die "bpftool prog show failed: cannot check that $what's programs are gone"
		progs=$(grep -c "name $prog " <<<"$progs" || true)
		procs=$(processes_named "$process")
		((progs <= procs)) && return 0
		sleep 0.1
	done
	die "$what's programs are still loaded ($progs $prog, $procs $process running; 'bpftool prog show')"
}

# front_enter CMD...: CMD inside the running server's fronts (their enter
# hooks, nested), or just CMD when it has none.
front_enter() {
	local fronts
	read -ra fronts <<<"$(state fronts)"
	_front_enter "${fronts[@]}" -- "$@"
}
_front_enter() {
	local f=$1
	shift
	if [[ $f == -- ]]; then
		exec_or_run "$@"
	else
		server_hook "$f" enter _front_enter "$@"
	fi
}

# in_place: this process is to become the command it enters the fronts
# with (FRONT_IN_PLACE=1: run.sh client, so that the client's pid is the
# caller's, and a signal to it reaches the client), or a subshell of its
# own, which may too.
FRONT_IN_PLACE=
in_place() { [[ $BASHPID != "$$" || -n $FRONT_IN_PLACE ]]; }

# exec_or_run CMD...: CMD, in this process when in_place.
exec_or_run() {
	if in_place; then exec "$@"; fi
	"$@"
}

# ---- sysctls and placement -----------------------------------------------------

# raise_sysctl KEY VALUE: at least VALUE, the original kept for restore.
raise_sysctl() {
	local key=$1 want=$2 cur
	# Some keys are global, not per network namespace: a namespace has
	# none of its own to raise (compare --netns).
	if ! cur=$(in_netns sysctl -n "$key" 2>/dev/null); then
		say "not raising $key: there is none in this network namespace"
		return 0
	fi
	if ((cur < want)); then
		in_netns sysctl -qw "$key=$want"
		echo "$key $cur" >>"$STATE_DIR/sysctl.orig"
		say "raised $key $cur -> $want (restored on stop)"
	fi
}

restore_sysctls() {
	local key val
	if [[ -f $STATE_DIR/rps.orig ]]; then
		cat "$STATE_DIR/rps.orig" >"$LO_RPS" &&
			say "restored the loopback's RPS mask to $(<"$STATE_DIR/rps.orig")"
		rm -f "$STATE_DIR/rps.orig"
	fi
	[[ -f $STATE_DIR/sysctl.orig ]] || return 0
	while read -r key val; do
		in_netns sysctl -qw "$key=$val" && say "restored $key = $val"
	done <"$STATE_DIR/sysctl.orig"
	rm -f "$STATE_DIR/sysctl.orig"
}

# place_server CPUS RELAY: the server's process (default_start) and the
# loopback's receive processing; with a relay front (RELAY), that front
# there and the server, its backend, on the other CPUs, with the
# clients. In a network namespace the packets come over a veth this sysfs
# does not show: there the process alone moves.
place_server() {
	local cpus=$1 relay=$2
	state_set cpus "$cpus"
	state_set server_cpus "$cpus"
	if [[ -n $relay ]]; then
		state_set server_cpus "$(other_cpus "$cpus")"
		[[ -n $(state server_cpus) ]] ||
			die "--cpus $cpus leaves no CPU for the backend behind the $relay: run without --cpus, or give it fewer"
		say "the $relay on CPUs $cpus, the backend $(state server) on CPUs $(state server_cpus)"
	fi
	if [[ -n $_lc_netns ]]; then
		say "--cpus $cpus: the server's process only (its packets arrive over a veth in $_lc_netns)"
		return 0
	fi
	[[ -w $LO_RPS ]] ||
		die "--cpus: cannot steer the loopback's receive processing ($LO_RPS is missing: a kernel without CONFIG_RPS); run without --cpus"
	cat "$LO_RPS" >"$STATE_DIR/rps.orig"
	cpu_mask "$cpus" >"$LO_RPS"
	say "server on CPUs $cpus, with the loopback's receive processing (RPS mask $(cpu_mask "$cpus"), restored on stop)"
}

# ---- start and stop ------------------------------------------------------------

# reach_addr ADDR: the address a client here connects to for a server
# listening on ADDR: ADDR itself, or loopback for 0.0.0.0 (every interface).
reach_addr() {
	if [[ $1 == 0.0.0.0 ]]; then echo 127.0.0.1; else echo "$1"; fi
}

# echo_ok PORT ADDR: one real echo round trip with the server listening on
# ADDR, the only proof that a server serves; through its relay when it has
# one, which listens in this namespace.
echo_ok() {
	local _lc_netns=$_lc_netns
	[[ -z $(state backend_port) ]] || _lc_netns=
	in_netns "$BENCH" -t 1 -r 1 -s 64 -T 500 -q -H "$(reach_addr "$2")" -p "$1" \
		-l probe -o /dev/null >/dev/null 2>&1
}

# Forgets a server that never served, undoing what its start did.
abandon_start() {
	_stop_fronts >/dev/null
	restore_sysctls
	rm -rf "$STATE_DIR"
}

# server_start SERVER [--port N] [--addr ADDR] [--cpus LIST] [--netns NS]
#              [--backend-addr ADDR] [--FRONT-FLAG [VALUE]]... [-- SERVER-ARGS...]
# Stops any server of the suite, starts SERVER detached, listening on ADDR
# (default 127.0.0.1), and returns once an echo round trip to ADDR
# succeeds; dies (after cleaning up) when it does not. Behind a relay front
# (--proxy PATH) the front listens on ADDR and PORT, and SERVER, its
# backend, on PORT + 1 at --backend-addr (default ADDR), in namespace NS
# if given (compare's client namespace), the front staying in this one.
server_start() {
	local server=$1 port=$DEFAULT_PORT addr=$DEFAULT_ADDR cpus='' netns='' fronts=() f why pid=''
	local relay='' backend_addr='' sport saddr taken
	declare -A front_arg=()
	shift
	while (($#)); do
		if [[ $1 == -- ]]; then
			shift
			break
		fi
		_start_option "$@"
		shift "$taken"
	done
	_start_where
	need_root "$server"
	why=$(server_hook "$server" unavailable)
	for f in "${fronts[@]}"; do
		[[ -n $why ]] || why=$(server_hook "$f" unavailable "${front_arg[$f]:-}")
	done
	[[ -z $why ]] || die "cannot start $server${fronts[*]:+ with the ${fronts[*]}}: $why"
	for f in "${fronts[@]}"; do ensure_built "$f"; done
	ensure_built "$server"
	server_stop quiet
	_lc_netns=$netns

	if [[ -n $(port_listening "$sport") ]]; then
		die "port $sport is busy ($(port_owner "$sport")): stop that program or pick another port with --port N"
	fi
	if [[ -n $relay && -n $(_lc_netns='' port_listening "$port") ]]; then
		die "port $port is busy ($(_lc_netns='' port_owner "$port")): stop that program or pick another port with --port N"
	fi
	[[ -z $(server_get "$server" peer) ]] || wait_port_unheld "$sport"
	_start_record "$@"
	_start_launch "$@"
	_start_wait_ready
}

# The parts of server_start. They read and set its locals (server, port,
# addr, cpus, netns, fronts, front_arg, relay, backend_addr, sport, saddr,
# pid), as the servers' start hooks set its pid.

# _start_option ARGS...: server_start's first option of ARGS; taken, the
# words it took.
_start_option() {
	local f
	taken=2
	case $1 in
	--addr)
		is_ipv4 "${2:-}" ||
			usage_error "--addr: '${2:-}' is not an IPv4 address (a dotted quad such as $DEFAULT_ADDR, or 0.0.0.0 for every interface)"
		addr=$2
		;;
	--port)
		if [[ ! ${2:-} =~ ^[0-9]+$ ]] || (($2 < 1 || $2 > 65535)); then
			usage_error "--port: '${2:-}' is not a port number (1-65535)"
		fi
		port=$2
		;;
	--cpus)
		[[ -n ${2:-} ]] || usage_error "--cpus needs a CPU list (e.g. 0 or 0-1), auto or all"
		cpus=$(parse_cpus "$2")
		;;
	--netns)
		[[ -e /run/netns/${2:-} && -n ${2:-} ]] ||
			usage_error "--netns: '${2:-}' is no network namespace (ip netns list)"
		netns=$2
		;;
	--backend-addr)
		if ! is_ipv4 "${2:-}" || [[ $2 == 0.0.0.0 ]]; then
			usage_error "--backend-addr: '${2:-}' is not an IPv4 address of one interface"
		fi
		backend_addr=$2
		;;
	*)
		taken=1
		f=$(front_of_flag "$1") ||
			usage_error "$server: unknown option '$1' (server arguments go after --)"
		front_serves "$f" "$server" ||
			usage_error "$1 goes only in front of $(server_get "$f" serves | sed 's/ /, /g'), not $server: $(server_get "$f" only_why)"
		if [[ -n $(server_get "$f" value) ]]; then
			front_value "$f" "${2:-}"
			front_arg[$f]=$2
			taken=2
		fi
		[[ -z $(server_get "$f" relay) ]] || relay=$f
		fronts+=("$f")
		;;
	esac
}

# How long a socket that closed first holds its port: FIN_WAIT2 until the
# peer closes (orphaned, net.ipv4.tcp_fin_timeout: 60 s by default), then
# TIME_WAIT's 60 s.
PORT_LINGER_S=125

# _port_unheld PORT: no socket, in any state, has PORT as its own.
_port_unheld() { [[ -z $(in_netns ss -Htan "sport = :$1" 2>/dev/null) ]]; }

# wait_port_unheld PORT: until no closing socket holds PORT (saying so),
# for a server that is not ours (a peer, run.sh command's): it may bind
# without SO_REUSEADDR, as sockperf's does, and then fails (EADDRINUSE)
# while one does. Ours set it and need not wait.
wait_port_unheld() {
	_port_unheld "$1" && return 0
	say "sockets that closed still hold port $1; waiting for them to go (up to ${PORT_LINGER_S}s): a server that binds without SO_REUSEADDR cannot take it before"
	wait_until "$PORT_LINGER_S" _port_unheld "$1" ||
		say "warning: port $1 still held after ${PORT_LINGER_S}s; starting anyway"
}

# _start_where: the fronts that go together, and where the server itself
# listens (sport, saddr): behind a relay, on the next port.
_start_where() {
	local f
	[[ -n $relay || -z $backend_addr ]] ||
		usage_error "--backend-addr: there is no relay in front of $server (--proxy PATH)"
	# A relay's sockets are its own, not the server's: no other front
	# (the bypass, in the server's cgroup) would see the clients' traffic.
	if [[ -n $relay && ${#fronts[@]} -gt 1 ]]; then
		usage_error "$(for f in "${fronts[@]}"; do server_get "$f" flag; done | paste -sd' ' | sed 's/ / and /g'): one front at a time (the $relay's sockets are not in the server's cgroup, so the others would carry nothing)"
	fi
	sport=$port saddr=$addr
	if [[ -n $relay ]]; then
		sport=$((port + 1))
		((sport <= 65535)) || usage_error "--port $port: the backend behind the $relay needs the next port, and there is none"
		saddr=${backend_addr:-$(reach_addr "$addr")}
	fi
}

# _start_record SERVER-ARGS...: the state of the server about to start,
# and the sysctls it needs raised.
_start_record() {
	local f
	mkdir -p "$STATE_DIR"
	: >"$STATE_DIR/sysctl.orig"
	state_set netns "$netns"
	raise_sysctl net.core.somaxconn "$WANT_BACKLOG"
	raise_sysctl net.ipv4.tcp_max_syn_backlog "$WANT_BACKLOG"
	raise_sysctl net.ipv4.tcp_max_tw_buckets "$WANT_TW_BUCKETS"
	raise_sysctl net.core.netdev_max_backlog "$WANT_NETDEV_BACKLOG"
	state_set server "$server"
	[[ -z $cpus ]] || place_server "$cpus" "$relay"
	dmesg_mark >"$STATE_DIR/dmesg.mark"
	state_set addr "$addr"
	state_set port "$port"
	state_set server_port "$sport"
	state_set args "$*"
	if [[ -n $relay ]]; then
		state_set backend_addr "$saddr"
		state_set backend_port "$sport"
	fi
	for f in "${!front_arg[@]}"; do state_set "$f.arg" "${front_arg[$f]}"; done
	date +%s >"$STATE_DIR/started"
}

# _start_launch SERVER-ARGS...: the fronts, then the server, detached.
_start_launch() {
	local f
	# Every front is stopped on a failure, those not started yet too:
	# their stop hooks find nothing of theirs and return.
	state_set fronts "${fronts[*]}"
	for f in "${fronts[@]}"; do
		server_hook "$f" start "$port" || {
			abandon_start
			die "$f did not start (its output is above)"
		}
	done
	[[ $addr != 0.0.0.0 ]] ||
		warn "warning: --addr 0.0.0.0: $server listens on every interface; any host that can reach this machine can connect"
	if ! server_hook "$server" start "$sport" "$saddr" "$@" >>"$SERVER_LOG" 2>&1; then
		dmesg_since "$(state dmesg.mark)" | grep -i "$server" >>"$SERVER_LOG" || true
		sed 's/^/  | /' "$SERVER_LOG" >&2
		abandon_start
		die "$server did not start (its messages are above)"
	fi
	state_set pid "$pid"
}

# _start_wait_ready: until an echo round trip succeeds (say so, and tell
# the fronts), or the server exits, or READY_TIMEOUT_S passes (die).
_start_wait_ready() {
	local f i what
	for ((i = 0; i < READY_TIMEOUT_S * 10; i++)); do
		if ! server_hook "$server" running; then
			[[ -z $pid ]] || wait "$pid" 2>/dev/null || true
			sed 's/^/  | /' "$SERVER_LOG" >&2
			server_stop quiet
			die "$server exited before it served (its output is above)"
		fi
		if server_hook "$server" ready "$port" "$addr"; then
			say "$server running: ${pid:+pid $pid, }address $saddr port $sport (log: $SERVER_LOG)"
			for f in "${fronts[@]}"; do server_hook "$f" started "$port"; done
			return 0
		fi
		sleep 0.1
	done
	server_stop quiet
	what="answer an echo"
	! declare -F "${server}_ready" >/dev/null || what="serve (its ready hook)"
	die "$server did not $what on $(reach_addr "$addr") port $port${relay:+ (through the $relay)} within ${READY_TIMEOUT_S}s; its log was $SERVER_LOG"
}

# Stops the running server's fronts, last started first.
_stop_fronts() {
	local fronts i
	read -ra fronts <<<"$(state fronts)"
	for ((i = ${#fronts[@]} - 1; i >= 0; i--)); do
		server_hook "${fronts[i]}" stop
	done
}

# server_stop [quiet]: stops the running server, then checks the cleanup:
# port free, the server's clean hook, nothing new in the kernel's log.
server_stop() {
	local quiet=${1:-} server pid port sport gone_before='' bad
	server=$(state server)
	_lc_netns=$(state netns)
	if [[ -z $server || -z $(state port) ]]; then
		# A start that died half-way (before it recorded the port, so
		# before it started anything) leaves state but no server: undo
		# what it did (a front, raised sysctls, the RPS mask) before
		# forgetting it.
		[[ ! -d $STATE_DIR ]] || abandon_start
		[[ -n $quiet ]] || say "no server is running"
		_lc_netns=
		return 0
	fi
	pid=$(state pid)
	port=$(state port)
	sport=$(state server_port)
	sport=${sport:-$port}

	if ! server_hook "$server" running; then
		gone_before=1
	else
		server_hook "$server" stop
	fi
	_stop_fronts
	restore_sysctls
	server_hook "$server" clean "$sport"

	[[ -z $(port_listening "$sport") ]] ||
		die "$server stopped but port $sport is still listening ($(port_owner "$sport"))"
	[[ $sport == "$port" || -z $(_lc_netns='' port_listening "$port") ]] ||
		die "the relay in front of $server stopped but port $port is still listening ($(_lc_netns='' port_owner "$port"))"
	bad=$(kernel_complaints "$(state dmesg.mark)")
	rm -rf "$STATE_DIR"	# the server is gone either way: report, once
	_lc_netns=
	[[ -z $bad ]] || die "the kernel logged problems while $server ran:"$'\n'"$bad"
	if [[ -n $gone_before ]]; then
		say "$server${pid:+ (pid $pid)} had already gone (killed or crashed); cleaned up after it, port $port is free"
	elif [[ -z $quiet ]]; then
		say "stopped $server${pid:+ (pid $pid)}; port $port is free"
	fi
}

# server_status: the running server, its placement, connections and
# counters; status 1 when it is gone.
server_status() {
	local server pid port started conns f
	server=$(state server)
	if [[ -z $server ]]; then
		echo "no server is running"
		return 0
	fi
	_lc_netns=$(state netns)
	pid=$(state pid)
	port=$(state port)
	started=$(state started)
	if ! server_hook "$server" running; then
		echo "$server${pid:+ (pid $pid)} is gone (crashed or killed); './run.sh stop' cleans up"
		return 1
	fi
	conns=$(in_netns ss -Htn state established "sport = :$(state server_port)" 2>/dev/null | wc -l)
	echo "server:      $server"
	echo "pid:         ${pid:-(kernel module)}"
	echo "address:     $(state addr)$([[ $(state addr) != 0.0.0.0 ]] || echo ' (every interface: open to any host that can reach this machine)')"
	echo "port:        $port"
	echo "args:        $(state args)"
	[[ -z $(state cpus) ]] || echo "cpus:        $(state cpus) (process and loopback receive processing)"
	echo "uptime:      $(($(date +%s) - ${started:-0}))s"
	echo "connections: $conns established"
	echo "log:         $SERVER_LOG"
	if [[ -s $STATE_DIR/sysctl.orig ]]; then
		echo "raised:      $(awk '{printf "%s (was %s) ", $1, $2}' "$STATE_DIR/sysctl.orig")"
	fi
	server_hook "$server" status
	for f in $(state fronts); do server_hook "$f" status; done
}
