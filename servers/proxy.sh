# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# proxy: a relay between the clients and the server (proxy/): run.sh
# SERVER --proxy PATH starts SERVER as the backend, on the port after the
# usual one, and the proxy on the usual address and port, so that bench and
# every test reach the server through it unchanged. PATH is how the proxy
# moves the bytes: copy (read and write in an epoll loop), splice (socket
# -> pipe -> socket), uring (io_uring: multishot receive into provided
# buffers, a send of each) or sockmap (an sk_skb verdict redirects each
# socket's bytes to its peer; the process only accepts, connects and
# inserts), or skmsg (copy's loop, both its legs joined by the sk_msg
# bypass: sockredir/ on the proxy's port and its backend's, the proxy, the
# backend and the clients in the bypass's cgroup, so that each send moves
# straight onto the peer socket's receive queue, around TCP/IP: the
# seed 003 experiment's, on the suite's own relay). sockmap-verdict-only is
# sockmap with its verdict handing each
# skb on whole, old bytes and all (proxy --verdict-only): not exact on a
# network that reorders (common/exact.bpf.h), kept to measure what
# exactness costs. haproxy and nginx are the relays people deploy,
# Debian's HAProxy (TCP mode, option splice-auto) and nginx (its stream
# module), configured from proxy/relays/ and started in the proxy's place
# by proxy/relays/relay.sh; the proxy contract holds them too.
#
# Placed so that the proxy's CPU is the relay's cost: the proxy runs on
# the server's CPUs (--cpus), the backend on the others, with bench. Its
# sockmap path attaches its verdict to its own SOCKHASH, not to a cgroup,
# so its process holds everything: a kill -9 leaves nothing for stop to
# remove but the check that it is gone.

front proxy dir=proxy binary=proxy/proxy flag=--proxy value=PATH relay=1 \
	values='copy splice uring sockmap skmsg sockmap-verdict-only haproxy nginx' serves='user uring ebpf kecho' tools='cc clang bpftool' \
	only_why="every server can be the backend"

variant user-proxy-copy    server=user order=80 colour='#7b4173' args='--proxy copy' proxy=1
variant user-proxy-splice  server=user order=81 colour='#a55194' args='--proxy splice' proxy=1
variant user-proxy-uring   server=user order=82 colour='#de9ed6' args='--proxy uring' proxy=1
variant user-proxy-sockmap server=user order=83 colour='#ce6dbd' args='--proxy sockmap' proxy=1
# One stack (one_stack=1): the bypass joins sockets of one machine.
variant user-proxy-skmsg   server=user order=84 colour='#5254a3' args='--proxy skmsg' proxy=1 one_stack=1
# Only where compare --servers names it (extra=1): not exact (above).
variant user-proxy-sockmap-verdict-only server=user order=85 colour='#e7969c' \
	args='--proxy sockmap-verdict-only' proxy=1 extra=1

# What people deploy, measured only where compare --servers names them.
variant user-proxy-haproxy server=user order=86 colour='#843c39' args='--proxy haproxy' proxy=1 deployed=1
variant user-proxy-nginx   server=user order=87 colour='#d6616b' args='--proxy nginx' proxy=1 deployed=1

# How long the proxy may take to load its programs and listen.
PROXY_READY_S=20

# PATH: the sockmap path loads a CO-RE program, the uring path needs
# io_uring's multishot receive, skmsg the bypass's programs and cgroup;
# copy and splice need nothing.
proxy_unavailable() {
	case ${1:-} in
	skmsg)
		[[ -z $(bypass_unavailable) ]] ||
			echo "$(bypass_unavailable | sed 's/; use the user server.*//'), which the proxy's skmsg path needs (the sk_msg bypass); use --proxy copy or splice"
		;;
	sockmap | sockmap-verdict-only)
		platform_lacks_need btf >/dev/null || return 0
		echo "$(platform_lacks_need btf), which the proxy's sockmap path needs; use --proxy copy or splice"
		;;
	uring)
		platform_lacks_need io-uring >/dev/null || return 0
		echo "$(platform_lacks_need io-uring), which the proxy's uring path needs; use --proxy copy or splice"
		;;
	haproxy | nginx)
		command -v "$1" >/dev/null ||
			echo "$1 is not installed (Debian's $1): run 'make deps'"
		;;
	esac
}

# _proxy_exe: the relay's program, for the path the state names: HAProxy's
# or nginx's (relay.sh becomes it), else the proxy's own.
_proxy_exe() {
	case $(state proxy.arg) in
	haproxy | nginx) readlink -f "$(command -v "$(state proxy.arg)")" ;;
	*) server_binary proxy ;;
	esac
}

# _relay_listens PORT: something listens on PORT in the proxy's namespace,
# the root one (the backend's may be bench's: port_listening's).
_relay_listens() { [[ -n $(ss -Htln "sport = :$1" 2>/dev/null) ]]; }

# The proxy says it listens; HAProxy and nginx are asked (ss).
_proxy_listening() {
	grep -q '^proxy .* on ' "$1" || _relay_listens "$4" || ! alive "$2" "$3"
}

# PORT: the proxy, detached, on the server's CPUs, listening on the
# server's address and PORT, relaying to the backend's. On the skmsg path
# the bypass first, on both ports, and the proxy in its cgroup.
proxy_start() {
	local port=$1 bin pid log=$STATE_DIR/proxy.log place=() cmd threads=1 enter=()
	bin=$(_proxy_exe)
	[[ -z $(state cpus) ]] || place=(taskset -c "$(state cpus)")
	cmd=("$(server_binary proxy)" --path "$(state proxy.arg)")
	case ${cmd[2]} in
	sockmap-verdict-only) cmd=("${cmd[0]}" --path sockmap --verdict-only) ;;
	skmsg)
		ensure_built bypass
		bypass_start "$port" "$(state backend_port)" || return 1
		cmd=("${cmd[0]}" --path copy)
		enter=(bypass_enter exec_or_run)	# $! is the proxy itself
		;;
	# A thread (HAProxy) or worker (nginx) per CPU of the proxy's.
	haproxy | nginx)
		[[ -z $(state cpus) ]] || threads=$(cpu_list_count "$(state cpus)")
		cmd=("$ECHOLAB_ROOT/proxy/relays/relay.sh" "${cmd[2]}" --dir "$STATE_DIR/relay" --threads "$threads")
		;;
	esac
	"${enter[@]}" setsid "${place[@]}" "${cmd[@]}" --port "$port" \
		--addr "$(state addr)" --backend-addr "$(state backend_addr)" \
		--backend-port "$(state backend_port)" </dev/null >"$log" 2>&1 &
	pid=$!
	state_set proxy.pid "$pid"
	wait_exec "$pid" "$bin"
	wait_until "$PROXY_READY_S" _proxy_listening "$log" "$pid" "$bin" "$port"
	if grep -q '^proxy .* on ' "$log"; then
		say "proxy: $(head -n1 "$log") (pid $pid)"
		return 0
	elif [[ $bin != "$(server_binary proxy)" ]] && _relay_listens "$port" && alive "$pid" "$bin"; then
		say "proxy: ${cmd[1]} on $(state addr) port $port to $(state backend_addr) port $(state backend_port), $threads thread(s) (pid $pid; proxy/relays/)"
		return 0
	fi
	sed 's/^/  | /' "$log" >&2
	echo "the proxy $(alive "$pid" "$bin" && echo "did not listen within ${PROXY_READY_S}s" ||
		echo "exited before it listened") (its output is above)" >&2
	return 1
}

proxy_started() {
	say "proxy: clients reach $(state server) through the proxy ($(state proxy.arg)) on port $1; the server itself listens on $(state backend_addr) port $(state backend_port)"
	[[ $(state proxy.arg) != skmsg ]] || bypass_started "$1"
}

# Stops the proxy and checks that nothing of it stays: no process, no
# program of its sockmap path (the kernel drops it with the last socket
# that used it, after an RCU grace period), nothing of its skmsg path's
# bypass (bypass_stop's checks).
proxy_stop() {
	local pid bin last counts
	pid=$(state proxy.pid)
	[[ -n $pid ]] || { bypass_stop; return; }
	bin=$(_proxy_exe)
	last=$(bpf_counters "$pid" proxy_counters)
	if alive "$pid" "$bin"; then
		terminate proxy "$pid" "$bin"
	else
		wait "$pid" 2>/dev/null || true
	fi
	# nginx's workers outlive a master killed with -9; they are in its
	# process group (setsid made it the group's leader).
	[[ $bin == "$(server_binary proxy)" ]] || _relay_group_gone "$pid" "$bin"
	progs_outlive_none proxy_verdict proxy "the proxy"
	counts=$(tail -n1 "$STATE_DIR/proxy.log" 2>/dev/null | sed -n 's/^proxy: //p')
	say "proxy: stopped${counts:+; $counts}${last:+; kernel: $last}"
	rm -f "$STATE_DIR/proxy.pid"
	bypass_stop	# the skmsg path's (nothing when none started)
}

# _relay_group_gone PGID EXE: no process of EXE is left in the group;
# what is left gets SIGKILL.
_relay_group_gone() {
	local pgid=$1 exe=$2 left=() p i
	for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
		left=()
		for p in $(ps -o pid= -g "$pgid" 2>/dev/null); do
			! alive "$p" "$exe" || left+=("$p")
		done
		((${#left[@]})) || return 0
		if ((i == 10)); then
			say "proxy: killing what is left of the relay: pids ${left[*]}"
			kill -KILL "${left[@]}" 2>/dev/null || true
		fi
		sleep 0.1
	done
	die "the relay's processes ${left[*]} are still running ('ps -g $pgid')"
}

proxy_status() {
	local pid
	pid=$(state proxy.pid)
	[[ -n $pid ]] || return 0
	if ! alive "$pid" "$(_proxy_exe)"; then
		echo "proxy:       (pid $pid) is gone: no relay; './run.sh stop' cleans up"
		return 0
	fi
	echo "proxy:       $(state proxy.arg), pid $pid, to $(state backend_addr) port $(state backend_port)"
	[[ $(state proxy.arg) != sockmap* ]] ||
		echo "             counters $(bpf_counters "$pid" proxy_counters)"
	bypass_status
}

# Clients reach the server through the proxy's port: nothing to enter but,
# on the skmsg path, the bypass's cgroup (the backend and the clients).
proxy_enter() {
	if [[ $(state proxy.arg) == skmsg ]]; then
		bypass_enter "$@"
	else
		"$@"
	fi
}
