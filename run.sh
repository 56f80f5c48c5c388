#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh - start, stop, inspect and measure the suite's echo servers.
#
# What servers there are, and how each is built, started, stopped and
# checked, is declared in servers/NAME.sh (read through servers/lib.sh).
# This script owns the lifecycle around them: one server at a time, its
# state in $STATE_DIR (written here only), the sysctls a 1000-thread run
# needs, the bypass, readiness (a real echo) and the proof of cleanup.
# compare (scripts/compare.sh), soak (scripts/soak.sh) and the guest
# (vm/lib.sh) are libraries it sources: calls go from here to them, never
# back.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=servers/lib.sh
source "$ROOT/servers/lib.sh"
# shellcheck source=vm/lib.sh
source "$ROOT/vm/lib.sh"
# shellcheck source=scripts/compare.sh
source "$ROOT/scripts/compare.sh"
# shellcheck source=scripts/soak.sh
source "$ROOT/scripts/soak.sh"

BENCH=$ROOT/bench/bench
SOCKREDIR=$ROOT/ebpf-echo/sockredir
LOG=$STATE_DIR/server.log
DEFAULT_PORT=12345
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
WHERE=${ECHOLAB_WHERE:-native}	# native, vm or netns: written into raw files

BYPASS=0	# --bypass: the server behind sockredir (sk_msg)
CPUS=		# --cpus: the CPUs the server gets (taskset -c list; LO_RPS)
NETNS=		# the network namespace the server runs in (compare --netns)

usage() {
	cat <<EOF
Usage: sudo ./run.sh SERVER [--port N] [--cpus LIST] [--bypass] [-- SERVER-ARGS...]
       sudo ./run.sh bench SERVER [--port N] [--cpus LIST] [--bypass] [--out DIR] [BENCH-ARGS...]
       sudo ./run.sh client COMMAND [ARGS...]
       sudo ./run.sh --vm [--kernel VERSION] SERVER [--port N] [BENCH-ARGS...]
       sudo ./run.sh compare [--netns | --vm [--kernel VERSION]] [--netem SPEC] [--bypass] [--repeat N] [--sweep K=V,...] [--cpus auto|none|LIST] [BENCH-ARGS...]
       sudo ./run.sh soak [--runs N] [--vm [--kernel VERSION]] [VARIANT...]
       sudo ./run.sh stop
       ./run.sh status

Servers: ${SERVERS[*]} (declared in servers/)

  SERVER        stop any running server of the suite, start SERVER detached,
                wait until an echo round trip succeeds, print its pid and port
  bench SERVER  start SERVER, run bench/bench against it (default -t 1000
                -r 10), print the summary and the raw file, stop SERVER;
                with --bypass: user without and then with the bypass, side
                by side, with plots (compare --bypass --repeat 1)
  client CMD    run a client command where the server's bypass reaches it
                (in its cgroup); without --bypass it just runs CMD. Not
                for programs that receive with splice(): on 6.1 and 6.18
                their bytes never arrive over the bypass
  --vm SERVER   the same inside a qemu guest running a kernel that loads
                modules (how kecho runs where insmod cannot)
  --kernel V    with --vm: the guest's kernel, ${KERNEL_VERSIONS[*]} (default
                $KERNEL_DEFAULT); 6.12 is fetched into a cache on first use
                (vm/kernels.sh, never into /boot); raw files record it
  compare       every server this machine can run, measured alike, into
                results/DATE-PLACE/ (raw files, summary.md, plots); see
                './run.sh compare --help'
  soak          every server, N x (bench -t 1000 -r 10) in a row, and what
                it holds after each run: nothing may grow; see
                './run.sh soak --help'
  stop          stop the server and check that nothing is left behind
  status        show the running server

Options:
  --port N      port to serve on (default $DEFAULT_PORT)
  --cpus LIST   give the server these CPUs (taskset -c syntax: 0, 0-1):
                its process runs there, and so does the loopback's receive
                processing (RPS), which carries ebpf's and kecho's echo.
                Pair it with 'bench --cpus OTHERS' for a client that cannot
                take the server's CPUs ('bench' does that itself)
  --bypass      user only: also start ebpf-echo/sockredir, whose sk_msg
                program moves the payload of local connections to the port
                straight to the peer socket, around TCP/IP. Only processes
                in its cgroup take the bypass: the server, and clients run
                with 'run.sh client' (bench, in 'bench user --bypass')
  -h, --help    this text

SERVER-ARGS for kecho are module parameters: mode=unbound|bound|kthread,
backlog=N. State lives in $STATE_DIR. While a server runs, net.core.somaxconn and
net.ipv4.tcp_max_syn_backlog are raised to at least $WANT_BACKLOG,
net.ipv4.tcp_max_tw_buckets to $WANT_TW_BUCKETS and net.core.netdev_max_backlog
to $WANT_NETDEV_BACKLOG if they are lower; stop restores them.
EOF
}

die() {
	echo "run.sh: $*" >&2
	exit 1
}

usage_error() {
	echo "run.sh: $*" >&2
	echo "Try './run.sh --help'." >&2
	exit 2
}

say() { echo "run.sh: $*"; }

need_root() {
	[[ $(id -u) -eq 0 ]] ||
		die "'$1' needs root (it changes sysctls and writes $STATE_DIR): run it with sudo"
}

# cpu_mask LIST: a taskset -c list ("0", "0-1,3") as the hex mask sysfs takes.
cpu_mask() {
	local part mask=0 c
	local -a parts
	IFS=, read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		for ((c = ${part%-*}; c <= ${part#*-}; c++)); do
			((mask |= 1 << c))
		done
	done
	printf '%x\n' "$mask"
}

# A taskset -c CPU list of CPUs this machine has, or a usage error.
parse_cpus() {
	if [[ ! $1 =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
		! taskset -c "$1" true 2>/dev/null; then
		usage_error "--cpus: '$1' is not a list of this machine's CPUs (0-$(($(nproc) - 1)), e.g. 0 or 0-1)"
	fi
	echo "$1"
}

# other_cpus LIST: this machine's CPUs that LIST leaves, as a list; empty
# when none are left.
other_cpus() {
	local mask c out=()
	mask=$((16#$(cpu_mask "$1")))
	for ((c = 0; c < $(nproc); c++)); do
		((mask & 1 << c)) || out+=("$c")
	done
	(IFS=,; echo "${out[*]}")
}

parse_port() {
	if [[ ! $1 =~ ^[0-9]+$ ]] || (($1 < 1 || $1 > 65535)); then
		usage_error "--port: '$1' is not a port number (1-65535)"
	fi
	echo "$1"
}

# in_netns CMD...: CMD where the server lives. nsenter, not 'ip netns
# exec': that one also remounts /sys, which hides the cgroup v2 mount.
# nsenter execs CMD: a process started so in the background is CMD's pid.
in_netns() {
	local enter=()
	[[ -z $NETNS ]] || enter=(nsenter --net="/run/netns/$NETNS")
	"${enter[@]}" "$@"
}

# Builds what SERVER and bench need, installing packages first if missing.
ensure_built() {
	local server=$1 tool
	if [[ -e $(server_binary "$server") && -x $BENCH ]]; then
		return 0
	fi
	for tool in make $(server_get "$server" tools); do
		if ! command -v "$tool" >/dev/null; then
			say "'$tool' is missing: running 'make deps' first"
			"$ROOT/scripts/deps.sh"
			break
		fi
	done
	say "building $server and bench"
	make -C "$ROOT" --no-print-directory "$server" bench >/dev/null ||
		die "the build failed: run 'make $server bench' to see why"
}

# ---- a plain process server: the hooks' defaults ----------------------------

# PORT ARGS...: the binary, detached, in its own session, on its CPUs
# (--cpus); pid is set. A simple command, not in_netns: $! must be the
# server itself (setsid, nsenter and taskset exec, they do not fork).
default_start() {
	local port=$1 bin enter=() place=()
	shift
	[[ -z $NETNS ]] || enter=(nsenter --net="/run/netns/$NETNS")
	[[ -z $CPUS ]] || place=(taskset -c "$CPUS")
	bin=$(server_binary "$(state server)")
	echo "$bin" >"$STATE_DIR/exe"
	if ((BYPASS)); then
		# The server joins the cgroup before it opens its listener: a
		# socket belongs to the cgroup of the process that made it.
		# shellcheck disable=SC2016 # expanded by that bash
		"${enter[@]}" setsid bash -c 'echo "$$" >"$1/cgroup.procs" && exec "${@:2}"' \
			run.sh "$(state bypass)" "${place[@]}" "$bin" --port "$port" "$@" </dev/null >"$LOG" 2>&1 &
	else
		"${enter[@]}" setsid "${place[@]}" "$bin" --port "$port" "$@" </dev/null >"$LOG" 2>&1 &
	fi
	pid=$!
	wait_exec "$pid" "$bin"
}

default_running() { alive "$(state pid)" "$(state exe)"; }

default_stop() { terminate "$(state server)" "$(state pid)" "$(state exe)"; }

# Waits (up to a second) until a started shell has become binary exe.
wait_exec() {
	local pid=$1 exe=$2 i
	for ((i = 0; i < 100; i++)); do
		[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$exe" ]] && return 0
		alive "$pid" || return 0	# start_server reports it
		sleep 0.01
	done
}

# Ends a server process: SIGTERM, then SIGKILL after a grace period.
terminate() {
	local server=$1 pid=$2 exe=$3 i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
		alive "$pid" "$exe" || break
		sleep 0.1
	done
	if alive "$pid" "$exe"; then
		say "$server (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT_S}s: killing it"
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.2
	fi
	wait "$pid" 2>/dev/null || true
	! alive "$pid" "$exe" || die "$server (pid $pid) is still running after SIGKILL"
}

# ---- the bypass: ebpf-echo/sockredir ---------------------------------------

# Starts sockredir for PORT and waits until its programs are attached;
# its cgroup goes to $STATE_DIR/bypass.
start_bypass() {
	local port=$1 pid i
	if [[ ! -x $SOCKREDIR ]]; then
		make -C "$ROOT" --no-print-directory ebpf >/dev/null ||
			die "building ebpf-echo/sockredir failed: run 'make ebpf' to see why"
	fi
	setsid "$SOCKREDIR" --port "$port" </dev/null >"$STATE_DIR/bypass.log" 2>&1 &
	pid=$!
	echo "$pid" >"$STATE_DIR/bypass.pid"
	for ((i = 0; i < READY_TIMEOUT_S * 10; i++)); do
		if grep -q '^bypass on port' "$STATE_DIR/bypass.log"; then
			sed -n 's/^bypass on port [0-9]* for cgroup //p' \
				"$STATE_DIR/bypass.log" >"$STATE_DIR/bypass"
			say "bypass: sockredir (pid $pid) attached to cgroup $(state bypass)"
			return 0
		fi
		alive "$pid" "$SOCKREDIR" || break
		sleep 0.1
	done
	local why="did not attach within ${READY_TIMEOUT_S}s"
	alive "$pid" "$SOCKREDIR" || why="exited before it attached"
	sed 's/^/  | /' "$STATE_DIR/bypass.log" >&2
	restore_sysctls
	stop_bypass >/dev/null
	rm -rf "$STATE_DIR"
	die "sockredir $why (its output is above)"
}

# Stops sockredir, if it was started, and checks that nothing of it stays:
# no process, no cgroup (a killed one leaves it, empty), no programs.
stop_bypass() {
	local pid cg progs procs i last
	pid=$(state bypass.pid)
	[[ -n $pid ]] || return 0
	last=$(bpf_counters "$pid" redir_counters)
	if alive "$pid" "$SOCKREDIR"; then
		terminate sockredir "$pid" "$SOCKREDIR"
	else
		wait "$pid" 2>/dev/null || true
	fi
	# Only the cgroup ours attached to (a killed one leaves it behind): one
	# that never attached made none, and the directory may be another's.
	cg=$(state bypass)
	if [[ -n $cg && -d $cg ]]; then
		[[ ! -s $cg/cgroup.procs ]] ||
			die "cgroup $cg still holds processes: $(tr '\n' ' ' <"$cg/cgroup.procs")"
		# Ours is gone; a program attached there is another sockredir's.
		progs=$(bpftool cgroup show "$cg") ||
			die "bpftool cgroup show $cg failed: cannot tell whose cgroup it is"
		! grep -q redir_sockops <<<"$progs" ||
			die "cgroup $cg belongs to another sockredir (sock_ops attached): stop it ('pgrep -a sockredir')"
		rmdir "$cg" || die "cannot remove $cg"
		say "removed the empty cgroup $cg left by a killed sockredir"
	fi
	# The kernel drops the programs with the last sockredir that holds them
	# and the last socket that used them (a psock goes after an RCU grace
	# period): none may outnumber the sockredir processes (others, on other
	# ports) for long.
	for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
		progs=$(bpftool prog show) || die "bpftool prog show failed: cannot check that sockredir's programs are gone"
		progs=$(grep -c 'name redir_msg ' <<<"$progs" || true)
		procs=$(pgrep -xc sockredir || true)
		((progs <= procs)) && break
		sleep 0.1
	done
	((progs <= procs)) ||
		die "sockredir's programs are still loaded ($progs redir_msg, $procs sockredir running; 'bpftool prog show')"
	rm -f "$STATE_DIR/bypass.pid" "$STATE_DIR/bypass"
	say "bypass: sockredir stopped${cg:+, cgroup $cg removed}${last:+; its counters $last}"
}

# in_bypass CMD...: runs CMD in the bypass cgroup when there is one.
in_bypass() {
	local cg
	cg=$(state bypass)
	(
		if [[ -n $cg ]]; then
			echo "$BASHPID" >"$cg/cgroup.procs" ||
				die "cannot move into $cg (is the bypass still running?)"
		fi
		exec "$@"
	)
}

# ---- state ----------------------------------------------------------------

# Listening TCP sockets on a port, as ss prints them (empty if none).
listeners() {
	in_netns ss -Htln "sport = :$1" 2>/dev/null || true
}

port_owner() {
	in_netns ss -Htlnp "sport = :$1" 2>/dev/null | grep -o 'users:.*' | head -n1 || true
}

# Raises a sysctl to at least a value and remembers the original.
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

# Gives the server CPUS: its process (default_start) and the loopback's
# receive processing. In a namespace of compare --netns the packets come
# over a veth this sysfs does not show: there the process alone moves.
place_server() {
	echo "$CPUS" >"$STATE_DIR/cpus"
	if [[ -n $NETNS ]]; then
		say "--cpus $CPUS: the server's process only (its packets arrive over a veth in $NETNS)"
		return 0
	fi
	[[ -w $LO_RPS ]] ||
		die "--cpus: cannot steer the loopback's receive processing ($LO_RPS is missing: a kernel without CONFIG_RPS); run without --cpus"
	cat "$LO_RPS" >"$STATE_DIR/rps.orig"
	cpu_mask "$CPUS" >"$LO_RPS"
	say "server on CPUs $CPUS, with the loopback's receive processing (RPS mask $(cpu_mask "$CPUS"), restored on stop)"
}

# ---- lifecycle ------------------------------------------------------------

# One real echo round trip: the only proof that a server serves.
echo_ok() {
	in_netns "$BENCH" -t 1 -r 1 -s 64 -T 500 -q -p "$1" -l probe -o /dev/null \
		>/dev/null 2>&1
}

# Kernel log lines since the server started.
new_dmesg() { dmesg_since "$(state dmesg.mark)"; }

# Forgets a server that never served, undoing what its start did.
abandon_start() {
	stop_bypass >/dev/null
	restore_sysctls
	rm -rf "$STATE_DIR"
}

start_server() {
	local server=$1 port=$2 why pid="" i
	shift 2
	need_root "$server"
	why=$(server_unavailable "$server" "$( ((BYPASS)) && echo --bypass)")
	[[ -z $why ]] || die "cannot start ${server}$( ((BYPASS)) && echo ' with the bypass'): $why"
	if ((BYPASS)); then
		grep -q " $server " <<<"$(bypass_variants)" ||
			usage_error "--bypass goes with the user server only: ebpf's sockets are in its own sockmap, kecho's are the kernel's"
		ensure_built ebpf
	fi
	ensure_built "$server"
	stop_server quiet

	if [[ -n $(listeners "$port") ]]; then
		die "port $port is busy ($(port_owner "$port")): stop that program or pick another port with --port N"
	fi

	mkdir -p "$STATE_DIR"
	: >"$STATE_DIR/sysctl.orig"
	echo "$NETNS" >"$STATE_DIR/netns"
	raise_sysctl net.core.somaxconn "$WANT_BACKLOG"
	raise_sysctl net.ipv4.tcp_max_syn_backlog "$WANT_BACKLOG"
	raise_sysctl net.ipv4.tcp_max_tw_buckets "$WANT_TW_BUCKETS"
	raise_sysctl net.core.netdev_max_backlog "$WANT_NETDEV_BACKLOG"
	[[ -z $CPUS ]] || place_server
	dmesg_mark >"$STATE_DIR/dmesg.mark"
	echo "$server" >"$STATE_DIR/server"
	echo "$port" >"$STATE_DIR/port"
	echo "$*" >"$STATE_DIR/args"
	date +%s >"$STATE_DIR/started"

	((BYPASS)) && start_bypass "$port"
	if ! server_hook "$server" start "$port" "$@" >>"$LOG" 2>&1; then
		new_dmesg | grep -i "$server" >>"$LOG"
		sed 's/^/  | /' "$LOG" >&2
		abandon_start
		die "$server did not start (its messages are above)"
	fi
	echo "$pid" >"$STATE_DIR/pid"

	for ((i = 0; i < READY_TIMEOUT_S * 10; i++)); do
		if ! server_hook "$server" running; then
			[[ -z $pid ]] || wait "$pid" 2>/dev/null || true
			sed 's/^/  | /' "$LOG" >&2
			stop_server quiet
			die "$server exited before it served (its output is above)"
		fi
		if echo_ok "$port"; then
			say "$server running: ${pid:+pid $pid, }port $port (log: $LOG)"
			((BYPASS)) && say "bypass: clients take it only inside its cgroup: sudo ./run.sh client ./bench/bench -p $port" &&
				say "bypass: never a client that receives with splice() there: its bytes would never arrive (README)"
			return 0
		fi
		sleep 0.1
	done
	stop_server quiet
	die "$server did not answer an echo on port $port within ${READY_TIMEOUT_S}s; its log was $LOG"
}

# stop_server [quiet]: stops the running server, then checks the cleanup.
stop_server() {
	local quiet=${1:-} server pid port gone_before='' bad
	# Where the server to stop runs (its callees see this one); the
	# caller's NETNS, where its own server is to start, stays as it was.
	local NETNS
	server=$(state server)
	NETNS=$(state netns)
	if [[ -z $server ]]; then
		# A start that died half-way leaves state but no server: undo
		# what it did (a sockredir, raised sysctls) before forgetting it.
		[[ ! -d $STATE_DIR ]] || abandon_start
		[[ -n $quiet ]] || say "no server is running"
		return 0
	fi
	pid=$(state pid)
	port=$(state port)

	if ! server_hook "$server" running; then
		gone_before=1
	else
		server_hook "$server" stop
	fi
	stop_bypass
	restore_sysctls
	server_hook "$server" clean "$port"

	[[ -z $(listeners "$port") ]] ||
		die "$server stopped but port $port is still listening ($(port_owner "$port"))"
	bad=$(new_dmesg | grep -E 'WARNING|BUG|Oops|Call Trace|refcount_t' || true)
	rm -rf "$STATE_DIR"	# the server is gone either way: report, once
	[[ -z $bad ]] || die "the kernel logged problems while $server ran:"$'\n'"$bad"
	if [[ -n $gone_before ]]; then
		say "$server${pid:+ (pid $pid)} had already gone (killed or crashed); cleaned up after it, port $port is free"
	elif [[ -z $quiet ]]; then
		say "stopped $server${pid:+ (pid $pid)}; port $port is free"
	fi
}

show_status() {
	local server pid port started conns NETNS
	server=$(state server)
	if [[ -z $server ]]; then
		echo "no server is running"
		return 0
	fi
	NETNS=$(state netns)
	pid=$(state pid)
	port=$(state port)
	started=$(state started)
	if ! server_hook "$server" running; then
		echo "$server${pid:+ (pid $pid)} is gone (crashed or killed); './run.sh stop' cleans up"
		return 1
	fi
	conns=$(in_netns ss -Htn state established "sport = :$port" 2>/dev/null | wc -l)
	echo "server:      $server"
	echo "pid:         ${pid:-(kernel module)}"
	echo "port:        $port"
	echo "args:        $(state args)"
	[[ -z $(state cpus) ]] || echo "cpus:        $(state cpus) (process and loopback receive processing)"
	echo "uptime:      $(($(date +%s) - ${started:-0}))s"
	echo "connections: $conns established"
	echo "log:         $LOG"
	if [[ -s $STATE_DIR/sysctl.orig ]]; then
		echo "raised:      $(awk '{printf "%s (was %s) ", $1, $2}' "$STATE_DIR/sysctl.orig")"
	fi
	server_hook "$server" status
	bypass_status
}

bypass_status() {
	local pid
	pid=$(state bypass.pid)
	[[ -n $pid ]] || return 0
	if ! alive "$pid" "$SOCKREDIR"; then
		echo "bypass:      sockredir (pid $pid) is gone: no bypass; './run.sh stop' cleans up"
		return 0
	fi
	echo "bypass:      sockredir pid $pid, cgroup $(state bypass)"
	echo "             counters $(bpf_counters "$pid" redir_counters)"
}

# ---- commands ---------------------------------------------------------------

# parse_options OPTION...: the options run.sh's commands share, --port N
# (into opt_port), --out DIR (into opt_out) and --bypass, up to the first
# other word; what follows is left in ARGS.
parse_options() {
	opt_port=$DEFAULT_PORT
	opt_out=
	while (($#)); do
		case $1 in
		--port)
			[[ $# -ge 2 ]] || usage_error "--port needs a value"
			opt_port=$(parse_port "$2")
			shift 2
			;;
		--out)
			[[ $# -ge 2 ]] || usage_error "--out needs a directory"
			opt_out=$2
			shift 2
			;;
		--bypass)
			BYPASS=1
			shift
			;;
		--cpus)
			[[ $# -ge 2 ]] || usage_error "--cpus needs a CPU list, e.g. 0 or 0-1"
			CPUS=$(parse_cpus "$2")
			shift 2
			;;
		*) break ;;
		esac
	done
	ARGS=("$@")
}

# SERVER [--port N] [--bypass] [-- SERVER-ARGS...]
cmd_start() {
	local server=$1
	shift
	parse_options "$@"
	[[ -z $opt_out ]] || usage_error "$server: --out goes with bench"
	if ((${#ARGS[@]})); then
		[[ ${ARGS[0]} == -- ]] ||
			usage_error "$server: unknown option '${ARGS[0]}' (server arguments go after --)"
		ARGS=("${ARGS[@]:1}")
	fi
	start_server "$server" "$opt_port" "${ARGS[@]}"
}

# bench SERVER [--port N] [--out DIR] [--bypass] [bench args]: the main
# job in one command.
cmd_bench() {
	local server=$1 port dir out client_cpus rc=0
	shift
	parse_options "$@"
	set -- "${ARGS[@]}"
	port=$opt_port
	dir=$opt_out
	if ((BYPASS)); then
		grep -q " $server " <<<"$(bypass_variants)" ||
			usage_error "--bypass goes with the user server only"
		# Without and with, same flags, one after the other, waiting out
		# the first run's TIME_WAIT sockets: what compare does.
		say "bench $server --bypass: $server without, then with the bypass (run.sh compare --bypass --repeat 1)"
		BYPASS=0
		PORT=$port
		compare_main --bypass --repeat 1 ${dir:+--out "$dir"} "$@"
		return
	fi
	if [[ -n $CPUS ]]; then
		client_cpus=$(other_cpus "$CPUS")
		[[ -n $client_cpus ]] || usage_error "--cpus $CPUS leaves no CPU for bench"
		set -- --cpus "$client_cpus" "$@"
	fi
	start_server "$server" "$port"
	# Beside hand-run benches (bench's own default), where make plots
	# draws the day's newest run of each server.
	if [[ -n $dir ]]; then
		out=$dir/$server-1.tsv
	else
		dir=${ECHOLAB_RUNS_DIR:-$ROOT/results/runs}/$(date +%Y%m%d)
		out=$dir/$server-$(date +%H%M%S).tsv
	fi
	mkdir -p "$dir"
	say "bench against $server: ${*:--t 1000 -r 10}"
	# Defaults first: flags given later on the command line win.
	"$BENCH" -t 1000 -r 10 -p "$port" -l "$server" -o "$out" \
		--meta "where=$WHERE" "$@" || rc=$?
	[[ " $* " != *" -q "* && " $* " != *" --quiet "* ]] ||
		say "raw samples: $out"
	stop_server
	return "$rc"
}

# --vm SERVER [--port N] [bench args]: start SERVER and bench it in the
# qemu guest; the raw file comes back to results/runs/.
cmd_vm() {
	local server=$1 dir rc=0
	shift
	need_root --vm
	dir=$ROOT/results/runs/$(date +%Y%m%d-%H%M%S)-vm-$server
	in_guest "$dir" "${VM_TIMEOUT:-1800}" ./run.sh bench "$server" --out /out "$@" || rc=$?
	# bench user --bypass is a comparison: the guest has no gnuplot.
	if [[ -e $dir/summary.md ]]; then
		"$ROOT/results/plot.sh" "$dir" | sed 's/^/  /'
		echo "results: $dir"
	fi
	return "$rc"
}

# take_kernel ARGS...: --kernel VERSION (before any --) picks the guest's
# kernel, for run-vm.sh (ECHOLAB_KERNEL); ARGS gets the rest. Only with
# --vm: natively the kernel is the one running.
take_kernel() {
	local vm=0 given=
	ARGS=()
	while (($#)); do
		case $1 in
		--) ARGS+=("$@"); break ;;
		--vm) vm=1; ARGS+=("$1") ;;
		--kernel)
			(($# >= 2)) || usage_error "--kernel needs a version (${KERNEL_VERSIONS[*]})"
			kernel_check "$2" 2>/dev/null ||
				usage_error "--kernel $2: unknown kernel; the guest boots ${KERNEL_VERSIONS[*]}"
			given=$2
			shift
			;;
		*) ARGS+=("$1") ;;
		esac
		shift
	done
	[[ -n $given ]] || return 0
	((vm)) || usage_error "--kernel picks the qemu guest's kernel: use it with --vm" \
		"(natively the kernel is the running one, $(uname -r))"
	export ECHOLAB_KERNEL=$given
}

main() {
	local cmd server
	take_kernel "$@"
	set -- "${ARGS[@]}"
	cmd=${1:-}
	[[ -n $cmd ]] || usage_error "no command: name a server (${SERVERS[*]}), or bench, stop, status"
	shift
	case $cmd in
	-h | --help | help)
		usage
		;;
	stop)
		(($# == 0)) || usage_error "stop takes no arguments"
		need_root stop
		stop_server
		;;
	status)
		(($# == 0)) || usage_error "status takes no arguments"
		show_status
		;;
	compare)
		compare_main "$@"
		;;
	soak)
		soak_main "$@"
		;;
	--vm)
		server=${1:-}
		shift || true
		if [[ $server == compare ]]; then
			compare_main --vm "$@"
			return
		fi
		is_server "$server" || usage_error "--vm: name a server (${SERVERS[*]}) or compare"
		cmd_vm "$server" "$@"
		;;
	client)
		(($#)) || usage_error "client: name a command, e.g. sudo ./run.sh client ./bench/bench -t 1000"
		[[ -z $(state bypass) ]] || need_root client
		in_bypass "$@"
		;;
	bench)
		server=${1:-}
		is_server "$server" || usage_error "bench: unknown server '$server' (servers: ${SERVERS[*]})"
		shift
		cmd_bench "$server" "$@"
		;;
	*)
		is_server "$cmd" || usage_error "unknown server or command '$cmd' (servers: ${SERVERS[*]})"
		cmd_start "$cmd" "$@"
		;;
	esac
}

main "$@"
