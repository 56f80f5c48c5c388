# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# bypass: the sk_msg bypass (sockredir/) in front of the unchanged
# user server, or of any local server run.sh starts as a command
# (servers/command.sh: sockperf's, for seed 004). Its sock_ops program puts the local sockets of the port into
# a SOCKHASH, its sk_msg program moves each send straight to the peer
# socket, around TCP/IP. It attaches to a cgroup of its own: only the
# server and the clients started in that cgroup (run.sh client, compare
# --bypass) take it. Its process holds everything: a kill -9 leaves only
# that (empty) cgroup, which stop removes.

front bypass dir=sockredir binary=sockredir/sockredir flag=--bypass serves='user command' \
	tools='cc clang bpftool' needs='btf cgroup2' \
	only_why="ebpf's sockets are in its own sockmap, kecho's are the kernel's"

variant user-bypass server=user order=30 colour='#17becf' args='--bypass' bypass=1 one_stack=1

bypass_unavailable() { bpf_cgroup_unavailable sockredir; }

# How long sockredir may take to load and attach its programs. Usually
# well under a second; once, in a CI run right after 1000-client crowds
# against another server, it had said nothing after 5 s (not reproduced).
BYPASS_ATTACH_S=20

# _bypass_attached LOG PID BIN: sockredir said it is attached, or is gone
# (for wait_until: either ends the wait).
_bypass_attached() { sockredir_cgroup "$1" >/dev/null || ! alive "$2" "$3"; }

# PORT [PORT...]: sockredir, detached, for the ports (the proxy's skmsg
# path: its own and its backend's); returns once its programs are
# attached, its cgroup in the state as 'bypass'.
bypass_start() {
	local bin pid log=$STATE_DIR/bypass.log why port ports=() cg
	for port; do ports+=(--port "$port"); done
	bin=$(server_binary bypass)
	setsid "$bin" "${ports[@]}" </dev/null >"$log" 2>&1 &
	pid=$!
	state_set bypass.pid "$pid"
	# Until the shell has become sockredir: alive() names the binary.
	wait_exec "$pid" "$bin"
	wait_until "$BYPASS_ATTACH_S" _bypass_attached "$log" "$pid" "$bin"
	if cg=$(sockredir_cgroup "$log"); then
		state_set bypass "$cg"
		say "bypass: sockredir (pid $pid) attached to cgroup $(state bypass)"
		return 0
	fi
	why="did not attach within ${BYPASS_ATTACH_S}s"
	alive "$pid" "$bin" || why="exited before it attached"
	sed 's/^/  | /' "$log" >&2
	echo "sockredir $why (its output is above)" >&2
	return 1
}

bypass_started() {
	say "bypass: clients take it only inside its cgroup: sudo ./run.sh client ./bench/bench -p $1"
	say "bypass: never a client that receives with splice() there: its bytes would never arrive (docs/servers.md)"
}

# Stops sockredir, if it was started, and checks that nothing of it stays:
# no process, no cgroup (a killed one leaves it, empty), no programs.
bypass_stop() {
	local pid bin cg progs last
	pid=$(state bypass.pid)
	[[ -n $pid ]] || return 0
	bin=$(server_binary bypass)
	last=$(bpf_counters "$pid" redir_counters)
	if alive "$pid" "$bin"; then
		terminate sockredir "$pid" "$bin"
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
	progs_outlive_none redir_msg sockredir sockredir
	rm -f "$STATE_DIR/bypass.pid" "$STATE_DIR/bypass"
	say "bypass: sockredir stopped${cg:+, cgroup $cg removed}${last:+; its counters $last}"
}

bypass_status() {
	local pid
	pid=$(state bypass.pid)
	[[ -n $pid ]] || return 0
	if ! alive "$pid" "$(server_binary bypass)"; then
		echo "bypass:      sockredir (pid $pid) is gone: no bypass; './run.sh stop' cleans up"
		return 0
	fi
	echo "bypass:      sockredir pid $pid, cgroup $(state bypass)"
	echo "             counters $(bpf_counters "$pid" redir_counters)"
}

# CMD...: CMD in the bypass's cgroup, when it has one; in a subshell of
# its own unless this already is one, or is to become CMD (in_place: so
# that a CMD started with & is the process that joined).
bypass_enter() {
	local cg
	if ! in_place; then
		(bypass_enter "$@")
		return
	fi
	cg=$(state bypass)
	if [[ -n $cg ]]; then
		echo "$BASHPID" >"$cg/cgroup.procs" ||
			die "cannot move into $cg (is the bypass still running?)"
	fi
	"$@"
}
