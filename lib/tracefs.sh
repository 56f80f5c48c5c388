# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # variables shared with the scripts
# lib/tracefs.sh - what the ftrace/ scripts share: tracefs (mount, save,
# restore), a private trace instance for tracepoints, funclat, bpf_stats,
# the server and the load. Their own state lives in variables set here.
#
# Top-level tracefs files are only written through tset, which remembers
# their old value; the EXIT trap (ftrace_traps) calls tracefs_restore, which
# puts each back, and unmounts tracefs if tracefs_mount mounted it.
# buffer_size_kb is left alone: the kernel allocates the top-level buffer the
# first time a tracer runs ("7 (expanded: 1408)" becomes "1408") and no
# write can take that back, so the scripts keep its default size.

# shellcheck source=lib/lifecycle.sh
source "$(dirname "${BASH_SOURCE[0]}")/lifecycle.sh"
# shellcheck source=lib/guest.sh
source "$ECHOLAB_ROOT/lib/guest.sh"
T=/sys/kernel/tracing
FUNCLAT=$ECHOLAB_ROOT/ftrace/funclat

_mounted_tracefs=0
_instance=
declare -A _saved=()
_order=()

# Mounts tracefs at /sys/kernel/tracing when it is not there yet.
tracefs_mount() {
	[[ -e $T/trace ]] && return 0
	mount -t tracefs nodev "$T" ||
		die "cannot mount tracefs at $T (CONFIG_FTRACE off?)"
	_mounted_tracefs=1
}

# tset FILE VALUE: write a top-level tracefs file, remembering what it held
# the first time, so that tracefs_restore puts back exactly what we changed.
tset() {
	local f=$1 v=$2
	if [[ -z ${_saved[$f]+x} ]]; then
		_saved[$f]=$(cat "$T/$f") || die "cannot read $T/$f"
		_order+=("$f")
	fi
	printf '%s\n' "$v" >"$T/$f" || die "cannot write '$v' to $T/$f"
}

# A multi-line filter file: "#### all functions enabled ####" means empty.
_restore_list() {
	local f=$1 v=$2 line
	: >"$T/$f" 2>/dev/null || return 0
	[[ $v == '#'* ]] && return 0
	while read -r line; do
		[[ -n $line ]] && echo "$line" >>"$T/$f" 2>/dev/null
	done <<<"$v"
}

# Puts back what tset changed, tracing_on last.
tracefs_restore() {
	local f v i
	[[ -e $T/trace ]] || return 0
	[[ -n ${_saved[tracing_on]+x} ]] && echo 0 >"$T/tracing_on"
	for ((i = ${#_order[@]} - 1; i >= 0; i--)); do
		f=${_order[i]}
		v=${_saved[$f]}
		case $f in
		tracing_on) continue ;;
		set_ftrace_filter | set_graph_function) _restore_list "$f" "$v" ;;
		buffer_size_kb) echo "${v%% *}" >"$T/$f" 2>/dev/null ;;	# "7 (expanded: 1408)"
		*) echo "$v" >"$T/$f" 2>/dev/null ;;
		esac || warn "warning: cannot restore $T/$f to '$v'"
	done
	[[ -n ${_saved[tracing_on]+x} ]] && echo "${_saved[tracing_on]}" >"$T/tracing_on"
	_saved=()
	_order=()
}

# instance_create [KB]: a private trace instance (own buffer, events and
# clock) in $INST, so nothing global changes. Not in a subshell: the EXIT
# trap must know it.
instance_create() {
	_instance=$T/instances/echolab-$$
	INST=$_instance
	mkdir "$_instance" || die "cannot create the trace instance $_instance"
	echo 0 >"$_instance/tracing_on"
	echo "${1:-8192}" >"$_instance/buffer_size_kb"
	echo mono >"$_instance/trace_clock" 2>/dev/null || true
}

instance_remove() {
	[[ -n $_instance && -d $_instance ]] || return 0
	echo 0 >"$_instance/tracing_on" 2>/dev/null
	echo 0 >"$_instance/events/enable" 2>/dev/null
	rmdir "$_instance" 2>/dev/null || warn "warning: cannot remove $_instance"
	_instance=
}

# The EXIT trap of every script: trace instance, tracefs, server, mount.
# shellcheck disable=SC2317 # called by the trap
ftrace_cleanup() {
	local rc=$? p i
	trap - EXIT INT TERM
	[[ -n ${BENCH_PID:-} ]] && kill "$BENCH_PID" 2>/dev/null
	[[ -n ${FUNCLAT_PID:-} ]] && kill "$FUNCLAT_PID" 2>/dev/null && wait "$FUNCLAT_PID" 2>/dev/null
	for p in ${PERF_PIDS[@]+"${PERF_PIDS[@]}"}; do	# percall.sh's perf stat
		kill -INT "$p" 2>/dev/null || continue
		for ((i = 0; i < 50; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true	# set -e holds in the trap too
		wait "$p" 2>/dev/null || true
	done
	instance_remove
	tracefs_restore
	[[ -n ${tmp:-} && -d $tmp ]] && rm -rf "$tmp"
	[[ -n ${BPF_STATS_SAVED:-} ]] && sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_SAVED"
	[[ ${SERVER_STARTED:-0} == 1 ]] && (server_stop quiet) >/dev/null 2>&1
	if ((_mounted_tracefs)); then
		umount "$T" 2>/dev/null || warn "warning: cannot unmount $T"
	fi
	exit "$rc"
}

ftrace_traps() {
	trap ftrace_cleanup EXIT
	trap 'exit 130' INT TERM
}

# trace_start SERVER [SERVER-ARGS...]: the server, remembered for cleanup;
# the lifecycle's messages go to stderr (stdout is the scripts' data).
trace_start() {
	local server=$1
	shift
	(server_start "$server" ${1:+--} "$@") >&2 || die "cannot start the $server server (see above)"
	SERVER_STARTED=1
}

# trace_stop: the server trace_start started.
trace_stop() {
	(server_stop quiet) >&2 || die "stopping the server failed (see above)"
	SERVER_STARTED=0
}

# funclat_start FUNCTION...: ftrace/funclat timing them, into $tmp/funclat
# (its messages: $tmp/funclat.err), once its probes are in place (-b
# FUNCTION...: the bytes they return, by process).
#
# The messages of the funclat before it are emptied here, before the new
# one starts: its own redirection truncates them only once its process
# runs, and a wait that read the old 'function(s)' line meanwhile took a
# funclat still loading its programs for one in place. Under TCG that
# load takes seconds, and the SIGTERM that ends the count can kill
# funclat before its handler is set: exit 143 and no message, which is
# what copies.sh's 'funclat failed: ' in vm-ftrace.t on 6.1 looked like
# (CI rehearsal, 2026-11-26). funclat_stop now names the status.
funclat_start() {
	local i
	: >"$tmp/funclat.err"
	"$FUNCLAT" "$@" >"$tmp/funclat" 2>"$tmp/funclat.err" &
	FUNCLAT_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q 'function(s)' "$tmp/funclat.err" 2>/dev/null && return 0
		sleep 0.1
	done
	die "funclat did not start: $(cat "$tmp/funclat.err")"
}

# funclat_stop: ends funclat; its table is complete in $tmp/funclat.
funclat_stop() {
	local rc=0
	kill -TERM "$FUNCLAT_PID"
	wait "$FUNCLAT_PID" || rc=$?
	FUNCLAT_PID=
	((rc == 0)) || die "funclat failed (exit $rc$( ((rc > 128)) && echo ", signal $((rc - 128))")): $(cat "$tmp/funclat.err")"
}

# bpf_stats_enable: kernel.bpf_stats_enabled on, until the EXIT trap puts
# back what it was.
bpf_stats_enable() {
	BPF_STATS_SAVED=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
}

# make_tmp: a scratch directory in $tmp, removed by the EXIT trap.
make_tmp() { tmp=$(mktemp -d); }

# run_bench BENCH-ARGS...: bench in the background, so that a signal
# reaches our trap at once; its summary line lands in $summary.
run_bench() {
	local rc=0
	"$BENCH" -q -o /dev/null "$@" >"$tmp/bench.out" &
	BENCH_PID=$!
	wait "$BENCH_PID" || rc=$?
	BENCH_PID=
	summary=$(cat "$tmp/bench.out")
	((rc == 0)) || warn "warning: bench exited $rc: $summary"
}

# guest_tools CMD...: these host commands also go into the guest, with
# their libraries (vm/run-vm.sh's VM_TOOLS); one not installed is left out.
guest_tools() {
	VM_TOOLS="${VM_TOOLS:-} $(command -v "$@" | tr '\n' ' ')"
	export VM_TOOLS
}

# rerun_in_guest OUT ARGS...: this script again, in the qemu guest, with
# the same arguments minus --vm and --out; what it writes to /out lands in
# OUT. --out /out goes first: what follows a -- belongs to bench. The
# guest has VM_TIMEOUT seconds (default 600), its boot included.
rerun_in_guest() {
	local out=$1 a=() x skip=0
	shift
	for x in "$@"; do
		((skip)) && { skip=0; continue; }
		case $x in --vm) continue ;; --out) skip=1; continue ;; esac
		a+=("$x")
	done
	in_guest "$out" "${VM_TIMEOUT:-600}" bash "ftrace/${0##*/}" --out /out "${a[@]}"
}

# need_perf: perf ($PERF) is there, or the script dies saying how to
# get it (percall.sh and profile.sh, here and in the guest).
need_perf() {
	command -v "$PERF" >/dev/null ||
		die "perf ($PERF) is not installed${ECHOLAB_WHERE:+ in the guest}: run 'make deps' as root, or with sudo (Debian: linux-perf)"
}

# Newest results directory, or a new one (results/DATE-ftrace).
results_dir() {
	local d
	# shellcheck disable=SC2010,SC2012 # names are ours: DATE-PLACE
	d=$(ls -dt "$ECHOLAB_ROOT"/results/*/ 2>/dev/null | grep -v '/runs/$' | sed -n 1p)
	d=${d%/}
	if [[ -z $d ]]; then
		d=$ECHOLAB_ROOT/results/$(date +%Y%m%d)-ftrace
		mkdir -p "$d"
	fi
	echo "$d"
}
