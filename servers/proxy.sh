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
# inserts). sockmap-verdict-only is sockmap with its verdict handing each
# skb on whole, old bytes and all (proxy --verdict-only): not exact on a
# network that reorders (common/exact.bpf.h), kept to measure what
# exactness costs.
#
# Placed so that the proxy's CPU is the relay's cost: the proxy runs on
# the server's CPUs (--cpus), the backend on the others, with bench. Its
# sockmap path attaches its verdict to its own SOCKHASH, not to a cgroup,
# so its process holds everything: a kill -9 leaves nothing for stop to
# remove but the check that it is gone.

front proxy dir=proxy binary=proxy/proxy flag=--proxy value=PATH relay=1 \
	values='copy splice uring sockmap sockmap-verdict-only' serves='user uring ebpf kecho' tools='cc clang bpftool' \
	only_why="every server can be the backend"

variant user-proxy-copy    server=user order=80 colour='#7b4173' args='--proxy copy' proxy=1
variant user-proxy-splice  server=user order=81 colour='#a55194' args='--proxy splice' proxy=1
variant user-proxy-uring   server=user order=82 colour='#de9ed6' args='--proxy uring' proxy=1
variant user-proxy-sockmap server=user order=83 colour='#ce6dbd' args='--proxy sockmap' proxy=1
# Only where compare --servers names it (extra=1): not exact (above).
variant user-proxy-sockmap-verdict-only server=user order=84 colour='#e7969c' \
	args='--proxy sockmap-verdict-only' proxy=1 extra=1

# How long the proxy may take to load its programs and listen.
PROXY_READY_S=20

# PATH: the sockmap path loads a CO-RE program, the uring path needs
# io_uring's multishot receive; copy and splice need nothing.
proxy_unavailable() {
	case ${1:-} in
	sockmap | sockmap-verdict-only)
		platform_lacks_need btf >/dev/null || return 0
		echo "$(platform_lacks_need btf), which the proxy's sockmap path needs; use --proxy copy or splice"
		;;
	uring)
		platform_lacks_need io-uring >/dev/null || return 0
		echo "$(platform_lacks_need io-uring), which the proxy's uring path needs; use --proxy copy or splice"
		;;
	esac
}

_proxy_listening() { grep -q '^proxy .* on ' "$1" || ! alive "$2" "$3"; }

# PORT: the proxy, detached, on the server's CPUs, listening on the
# server's address and PORT, relaying to the backend's.
proxy_start() {
	local port=$1 bin pid log=$STATE_DIR/proxy.log place=() path
	bin=$(server_binary proxy)
	[[ -z $(state cpus) ]] || place=(taskset -c "$(state cpus)")
	path=(--path "$(state proxy.arg)")
	[[ ${path[1]} != sockmap-verdict-only ]] || path=(--path sockmap --verdict-only)
	setsid "${place[@]}" "$bin" "${path[@]}" --port "$port" \
		--addr "$(state addr)" --backend-addr "$(state backend_addr)" \
		--backend-port "$(state backend_port)" </dev/null >"$log" 2>&1 &
	pid=$!
	state_set proxy.pid "$pid"
	wait_exec "$pid" "$bin"
	wait_until "$PROXY_READY_S" _proxy_listening "$log" "$pid" "$bin"
	if grep -q '^proxy .* on ' "$log"; then
		say "proxy: $(head -n1 "$log") (pid $pid)"
		return 0
	fi
	sed 's/^/  | /' "$log" >&2
	echo "the proxy $(alive "$pid" "$bin" && echo "did not listen within ${PROXY_READY_S}s" ||
		echo "exited before it listened") (its output is above)" >&2
	return 1
}

proxy_started() {
	say "proxy: clients reach $(state server) through the proxy ($(state proxy.arg)) on port $1; the server itself listens on $(state backend_addr) port $(state backend_port)"
}

# Stops the proxy and checks that nothing of it stays: no process, no
# program of its sockmap path (the kernel drops it with the last socket
# that used it, after an RCU grace period).
proxy_stop() {
	local pid bin last
	pid=$(state proxy.pid)
	[[ -n $pid ]] || return 0
	bin=$(server_binary proxy)
	last=$(bpf_counters "$pid" proxy_counters)
	if alive "$pid" "$bin"; then
		terminate proxy "$pid" "$bin"
	else
		wait "$pid" 2>/dev/null || true
	fi
	progs_outlive_none proxy_verdict proxy "the proxy"
	say "proxy: stopped; $(tail -n1 "$STATE_DIR/proxy.log" 2>/dev/null | sed 's/^proxy: //')${last:+; kernel: $last}"
	rm -f "$STATE_DIR/proxy.pid"
}

proxy_status() {
	local pid
	pid=$(state proxy.pid)
	[[ -n $pid ]] || return 0
	if ! alive "$pid" "$(server_binary proxy)"; then
		echo "proxy:       (pid $pid) is gone: no relay; './run.sh stop' cleans up"
		return 0
	fi
	echo "proxy:       $(state proxy.arg), pid $pid, to $(state backend_addr) port $(state backend_port)"
	[[ $(state proxy.arg) != sockmap* ]] ||
		echo "             counters $(bpf_counters "$pid" proxy_counters)"
}

# Clients reach the server through the proxy's port: nothing to enter.
proxy_enter() { "$@"; }
