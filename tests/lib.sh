# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the variables are for the tests
# TAP helpers for the suite's tests (kselftest style: named cases, a plan,
# '# SKIP fact: why', for platform facts only). Source it, call plan, then
# the assertions; "nothing left" is always absent with a lister.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The servers, their declarations and the lifecycle's state (STATE_DIR,
# state, LO_RPS, BENCH); the guest.
# shellcheck source=lib/lifecycle.sh
source "$ROOT/lib/lifecycle.sh"
# shellcheck source=lib/guest.sh
source "$ROOT/lib/guest.sh"
PROBE=$ROOT/tests/build/probe
RUN=$ROOT/run.sh
PORT=${TEST_PORT:-$DEFAULT_PORT}	# run.sh's default (common/defaults.h)
SPARE_PORT=${TEST_SPARE_PORT:-12399}	# for servers started by hand

_tap_n=0
_tap_failed=0
_tap_skipped=0

plan() { echo "1..$1"; }

# ok CONDITION-STATUS NAME: pass when the status is 0 (a number: an empty
# or garbled status is a failure, never a pass). Returns 0 for a pass and
# 1 for a failure, so that 'ok $? "setup" || return' ends a case whose
# setup failed (is and like return theirs too). Until 2026-11-26 every
# one returned 0, and such guards never fired.
ok() {
	local status=$1 name=$2
	[[ -z $_case || $name == "$_case: "* || $name == "$_case/"* ]] || name="$_case: $name"
	_tap_n=$((_tap_n + 1))
	if [[ $status =~ ^[0-9]+$ && $status -eq 0 ]]; then
		echo "ok $_tap_n - $name"
		return 0
	fi
	echo "not ok $_tap_n - $name"
	_tap_failed=$((_tap_failed + 1))
	return 1
}

# is GOT WANT NAME
is() {
	local got=$1 want=$2 name=$3
	[[ $got == "$want" ]] && { ok 0 "$name"; return; }
	ok 1 "$name"
	diag "$name: got '$got', want '$want'"
	return 1
}

# failed_statuses RAW: '# failed: N STATUS' per status of bench's raw file
# RAW that is not ok (nothing when every row is): what went wrong in a run
# whose count of failures a case checks.
# shellcheck disable=SC2016 # an awk program, not shell
failed_statuses() {
	awk -F'\t' '!/^#/ && $NF != "ok" { n[$NF]++ } END { for (s in n) printf "# failed: %d %s\n", n[s], s }' "$1"
}

# like GOT REGEX NAME
like() {
	local got=$1 re=$2 name=$3
	[[ $got =~ $re ]] && { ok 0 "$name"; return; }
	ok 1 "$name"
	diag "$name: '$got' does not match /$re/"
	return 1
}

# ---- skips: only for platform facts the suite detects -----------------------

# fact NAME: true when this machine has that fact, detected here and now
# (never assumed), with its description on stdout; status 2 when NAME is
# not one of the facts below. These are the only reasons a case may be
# skipped for: a skip for anything else is a failure under CI (CI=true).
declare -A _fact=()	# [NAME] = 0 (holds) or 1 (does not), once detected
fact() {
	local name=$1 desc
	case $name in
	no-*)
		# A server's need (needs=) the machine lacks: lib/registry.sh's.
		if desc=$(platform_lacks_need "${name#no-}"); then
			echo "$desc"
			return 0
		elif (($? == 1)); then
			return 1
		fi
		;;
	esac
	case $name in
	modules) desc="this kernel loads modules (/proc/modules exists)" ;;
	one-cpu) desc="one CPU online (nproc)" ;;
	no-fentry) desc="this kernel refuses fentry programs (tests/build/fentry-probe: $(_fentry_probe))" ;;
	no-function-graph) desc="this kernel has no function_graph tracer (available_tracers)" ;;
	panic-on-warn) desc="this kernel panics on a WARN (kernel.panic_on_warn=1): a test that provokes one would crash it" ;;
	*) return 2 ;;
	esac
	if [[ -z ${_fact[$name]:-} ]]; then
		_fact_detect "$name"
		_fact[$name]=$?
	fi
	((_fact[$name] == 0)) || return 1
	echo "$desc"
}

# _fact_detect NAME: the detection itself; status 0 when the fact holds.
_fact_detect() {
	local v
	case $1 in
	modules) [[ -e /proc/modules ]] ;;
	one-cpu) (($(nproc) < 2)) ;;
	no-fentry)
		_fentry_probe >/dev/null
		(($? == 1))
		;;
	panic-on-warn) [[ $(cat /proc/sys/kernel/panic_on_warn 2>/dev/null) == 1 ]] ;;
	no-function-graph)
		# Unreadable is not "absent": the fact must be seen.
		v=$(_tracers) && [[ -n $v ]] && ! grep -qw function_graph <<<"$v"
		;;
	esac
}

# _fentry_probe: tests/build/fentry-probe on do_nanosleep; what it says,
# and its status: 0 the kernel loaded and attached the program, 1 it
# refused (no BTF counts: fentry attaches by BTF id), 2 cannot tell (the
# probe is not built, bpftool failed): then no-fentry does not hold.
_fentry_probe() {
	local id
	[[ -r /sys/kernel/btf/vmlinux ]] || { echo "no BTF to attach by"; return 1; }
	[[ -x $ROOT/tests/build/fentry-probe ]] || { echo "not built: make tests"; return 2; }
	id=$(bpftool btf dump file /sys/kernel/btf/vmlinux |
		sed -n "s/^\[\([0-9]*\)\] FUNC 'do_nanosleep' .*/\1/p" | head -n1)
	[[ -n $id ]] || { echo "no do_nanosleep in vmlinux's BTF (or bpftool failed)"; return 2; }
	"$ROOT/tests/build/fentry-probe" "$id"
}

# _tracers: the kernel's available_tracers; tracefs mounted on a directory
# of our own when /sys/kernel/tracing is not (the ftrace tests compare its
# mount state before and after, so it is left as found).
_tracers() {
	local mnt
	if [[ -r /sys/kernel/tracing/available_tracers ]]; then
		cat /sys/kernel/tracing/available_tracers
		return
	fi
	mnt=$(mktemp -d) || return 1
	mount -t tracefs nodev "$mnt" 2>/dev/null || { rmdir "$mnt"; return 1; }
	cat "$mnt/available_tracers"
	umount "$mnt"
	rmdir "$mnt"
}

# skip NAME FACT: a case this machine cannot run, for FACT (see fact). A
# known fact that does not hold here is a failure (the skip would hide a
# case that can run); any other reason is shown as a skip that is not a
# platform fact, and fails the case under CI.
skip() {
	local name=$1 reason=$2 desc rc
	desc=$(fact "$reason")
	rc=$?
	if ((rc == 0)); then
		_skip_line "$name" "$reason: $desc"
	elif ((rc == 1)); then
		ok 1 "$name"
		diag "$name: skipped for '$reason', which this machine does not have"
	else
		_skip_other "$name" "$reason"
	fi
}

# skip_relayed NAME REASON: a skip reported by another machine (the guest),
# which detected its fact there: a known fact's name passes as it is.
skip_relayed() {
	local name=$1 reason=$2
	if fact "${reason%%:*}" >/dev/null; (($? != 2)); then
		_skip_line "$name" "$reason"
	else
		_skip_other "$name" "$reason"
	fi
}

_skip_line() {
	_tap_n=$((_tap_n + 1))
	_tap_skipped=$((_tap_skipped + 1))
	local name=$1
	[[ -z $_case || $name == "$_case: "* || $name == "$_case/"* ]] || name="$_case: $name"
	echo "ok $_tap_n - $name # SKIP $2"
}

# A skip for a reason that is not a platform fact: a failure under CI.
_skip_other() {
	if [[ ${CI:-} == true ]]; then
		ok 1 "$1"
		diag "$1: skipped for '$2', which is not a platform fact (CI=true: a failure)"
	else
		_skip_line "$1" "$2 (not a platform fact: a failure under CI)"
	fi
}

# skip_all FACT: this whole file cannot run on this machine, for FACT.
skip_all() {
	local desc
	if desc=$(fact "$1"); then
		echo "1..0 # SKIP $1: $desc"
		exit 0
	fi
	echo "Bail out! skip_all for '$1', which is not a platform fact of this machine"
	exit 1
}

# shellcheck disable=SC2001 # prefix every line of a multi-line message
diag() { sed 's/^/# /' <<<"$*"; }

done_testing() {
	exit $((_tap_failed > 0))
}

# For a file whose number of cases is known only at its end.
plan_at_end() {
	echo "1..$_tap_n"
	done_testing
}

# grew BEFORE AFTER KEY: how much a counter of two 'key=value ...' lines
# (run.sh status) grew; nothing and status 1 when either lacks it, so that
# a case reading a counter that could not be read fails.
grew() {
	local a b
	a=$(field "$1" "$3")
	b=$(field "$2" "$3")
	[[ $a =~ ^[0-9]+$ && $b =~ ^[0-9]+$ ]] || return 1
	echo $((b - a))
}

# ms SUMMARY-LINE KEY: a time of bench's summary line (us), in whole ms
# rounded up; nothing (status 1) when the line has no number for KEY.
ms() {
	awk -v us="$(field "$1" "$2")" 'BEGIN { if (us !~ /^[0-9.]+$/) exit 1; printf "%d\n", (us + 999) / 1000 }'
}

# memory_of PID: 'rss_kb tcp_kb slab_kb': the resident memory of process
# PID (0 for none: a module), the kernel's TCP buffers (sockstat) and its
# slab (meminfo).
memory_of() {
	local rss=0 page_kb
	page_kb=$(($(getconf PAGESIZE 2>/dev/null || echo 4096) / 1024))
	[[ -z $1 ]] || rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null)
	echo "${rss:-0}" \
		"$(awk -v p="$page_kb" '$1 == "TCP:" { for (i = 2; i < NF; i++) if ($i == "mem") print $(i + 1) * p }' /proc/net/sockstat)" \
		"$(awk '$1 == "Slab:" { print $2 }' /proc/meminfo)"
}

# memory_growth BEFORE AFTER: 'rss_kb tcp_kb slab_kb' AFTER less BEFORE.
memory_growth() {
	paste -d' ' <(tr ' ' '\n' <<<"$2") <(tr ' ' '\n' <<<"$1") | awk '{ printf "%d ", $1 - $2 }'
}

# summary_rows SUMMARY.MD [Client|Server]: 'label samples failed' of each
# row of compare's response-time tables (one per swept value); Server:
# only the rows with a server-side time (arrival_us).
summary_rows() {
	awk -v side="${2:-Client}" '
		/^### Response times/ { on = 1; next }
		/^#/ { on = 0 }
		on && /^\| / && !/^\| server / && !/^\|---/ {
			if (side == "Server" && $12 == "-") next
			print $2, $8, $10
		}' "$1"
}

# root_or_bail_out: the file starts servers and changes sysctls. Without root
# it stops with a failure: a green run of the cases that need no root
# would say nothing about the rest.
root_or_bail_out() {
	if [[ $(id -u) -ne 0 ]]; then
		echo "Bail out! needs root: run 'sudo make check'"
		exit 1
	fi
}

# ---- absence: "nothing found" only from a tool that worked ------------------
#
# Each lister prints one item per line, normalised, and fails (status 1,
# its reason on stderr) when its tool is missing, exits non-zero, or prints
# something that is not in the tool's format: then nothing can be said
# about absence. absent is the one assertion the suite makes with them.

# absent NAME REGEX LISTER [ARGS...]: LISTER worked and none of its items
# matches REGEX (grep -E).
absent() {
	local name=$1 re=$2 items err rc
	shift 2
	err=$(mktemp)
	items=$("$@" 2>"$err")
	rc=$?
	if ((rc != 0)); then
		ok 1 "$name"
		diag "$name: cannot tell, $1 failed: $(cat "$err")"
	else
		is "$(grep -E -- "$re" <<<"$items")" "" "$name"
	fi
	rm -f "$err"
}

# count_of REGEX LISTER [ARGS...]: how many of LISTER's items match; fails
# when the lister does.
count_of() {
	local re=$1 items
	shift
	items=$("$@") || return 1
	grep -cE -- "$re" <<<"$items"
	return 0
}

# _tool TOOL ARGS...: TOOL's output; when it fails, status 1 and why on
# stderr (a lister then gives up: nothing can be said about absence).
_tool() {
	local out rc
	out=$("$@")
	rc=$?
	if ((rc != 0)); then
		echo "$1 exited $rc$( ((rc == 127)) && echo ' (not installed)')" >&2
		return 1
	fi
	printf '%s\n' "$out"
}

# bpf_progs: 'ID TYPE NAME' per loaded BPF program (bpftool prog show).
bpf_progs() {
	local out
	out=$(_tool bpftool prog show) || return 1
	# Every record starts 'ID: TYPE  name NAME' (or no name); its details
	# are indented. Anything else is not what we can read.
	awk '/^[0-9]+: [a-z_0-9]+ / { n = "-"; for (i = 3; i < NF; i++) if ($i == "name") n = $(i + 1)
			print $1 + 0, $2, n; next }
		/^[ \t]/ || !NF { next }
		{ print "bpftool prog show: cannot read the line: " $0 > "/dev/stderr"; bad = 1 }
		END { exit bad }' <<<"$out"
}

# bpf_attachments: 'CGROUP TYPE NAME' per cgroup attachment, every cgroup
# under the cgroup v2 mount (bpftool cgroup tree).
bpf_attachments() {
	local out
	out=$(_tool bpftool cgroup tree) || return 1
	# A header of two lines, then a cgroup's path and its programs.
	awk 'NR == 1 { if ($1 != "CgroupPath") bad = 1; next }
		NR == 2 { if ($1 != "ID") bad = 1; next }
		/^\// { cg = $1; next }
		/^[ \t]+[0-9]+[ \t]/ { print cg, $2, $NF; next }
		NF { bad = 1 }
		END { if (bad) print "bpftool cgroup tree: not its format" > "/dev/stderr"
			exit bad }' <<<"$out"
}

# listeners PORT: 'LISTEN ADDRESS:PORT' per listening TCP socket on PORT (ss).
listeners() {
	local out
	out=$(_tool ss -Htln "sport = :$1") || return 1
	awk '$1 == "LISTEN" && NF >= 5 { print $1, $4; next }
		NF { print "ss: cannot read the line: " $0 > "/dev/stderr"; bad = 1 }
		END { exit bad }' <<<"$out"
}

# processes PATTERN: 'PID COMMAND LINE' per process whose command line
# matches PATTERN (an extended regex), read from /proc: the guest has no
# pgrep. A /proc that does not show this shell itself cannot be read, and
# fails. PROC_ROOT is for lib.t, to try one that cannot.
processes() {
	local root=${PROC_ROOT:-/proc} d pid
	local -a argv
	if [[ ! -r $root/$BASHPID/cmdline ]]; then
		echo "processes: cannot read them in $root (is /proc mounted?)" >&2
		return 1
	fi
	for d in "$root"/[0-9]*; do
		pid=${d##*/}
		# Not this shell nor its parent, whose command lines may hold
		# the pattern too; a process that ended meanwhile is skipped.
		[[ $pid != "$BASHPID" && $pid != "$$" ]] || continue
		mapfile -d '' argv <"$d/cmdline" 2>/dev/null || continue
		((${#argv[@]})) || continue
		[[ ${argv[*]} =~ $1 ]] && echo "$pid ${argv[*]}"
	done
	return 0
}

# connections PORT [PEER_PORT]: 'STATE LOCAL PEER' per TCP socket of the
# local PORT (connected to PEER_PORT), in any state, LISTEN included (ss).
connections() {
	local out
	out=$(_tool ss -Htan "sport = :$1${2:+ and dport = :$2}") || return 1
	awk 'NF >= 5 && $1 ~ /^[A-Z][A-Z0-9-]+$/ { print $1, $4, $5; next }
		NF { print "ss: cannot read the line: " $0 > "/dev/stderr"; bad = 1 }
		END { exit bad }' <<<"$out"
}

# loaded_modules: the name of each loaded module (/proc/modules, which
# must be readable: a kernel without modules has none to list).
loaded_modules() {
	local out
	out=$(cut -d' ' -f1 /proc/modules) || return 1
	[[ -z $out ]] || echo "$out"
}

# pid_gone PID: no such process any more (for wait_until).
pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# port_taken PORT: something listens on it (for wait_until).
port_taken() { [[ -n $(listeners "$1" 2>/dev/null) ]]; }

# port_free PORT: nothing listens on it; false too when ss cannot tell.
port_free() {
	local items
	items=$(listeners "$1") || return 1
	[[ -z $items ]]
}

# echoes PORT: one echo round trip on PORT succeeds (for wait_until).
echoes() { "$BENCH" -p "$1" -t 1 -r 1 -T 500 -q -o /dev/null >/dev/null 2>&1; }

# spare_start LOG BINARY ARGS...: a server run by hand on the spare port,
# its stderr in LOG, its pid in SPARE_PID; ready once it echoes (5 s).
spare_start() {
	local log=$1 bin=$2
	shift 2
	"$bin" -p "$SPARE_PORT" "$@" 2>"$log" &
	SPARE_PID=$!
	wait_until 5 echoes "$SPARE_PORT" && return 0
	diag "$bin $* did not answer within 5 s: $(cat "$log")"
	return 1
}

# bounded SECONDS CMD...: CMD with a time bound; status 124 when it had to
# be killed.
bounded() { timeout -k 5 "$@"; }	# -k: busybox (the guest) knows it too

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

# bench_ok NAME ARGS...: bench against $PORT, no sample may fail.
bench_ok() {
	local name=$1 out
	shift
	out=$(bounded 180 "$BENCH" -p "$PORT" -q -o /dev/null "$@")
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
	local s cg items
	listeners "$PORT" || return 1
	listeners "$((PORT + 1))" || return 1	# a relay's backend (run.sh --proxy)
	for s in "${SERVERS[@]}" "${FRONTS[@]}"; do
		items=$(processes "$(server_binary "$s")") || return 1
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

# ---- every declared variant, here or in the guest ---------------------------

# each_variant FUNC [LISTER]: FUNC LABEL SERVER [START-OPTIONS...] for each
# variant LISTER prints (default variants; all_variants adds the bypass)
# that runs here: where the platform has what its declaration needs
# (needs=, detected above, not by the server's own hook). The variants
# that cannot run here run in the qemu guest: this same file, there, for
# those variants only (ONLY_SERVERS), its results relayed. The
# server's hook must agree with the platform: one that refused a server
# this machine can run would drop its cases without a failure.
each_variant() {
	local func=$1 lister=${2:-variants} label server args why lacks labels
	local guest=()
	labels=" $("$lister" | cut -d' ' -f1 | tr '\n' ' ') "
	while read -r label server args; do
		if [[ -n ${ONLY_SERVERS:-} && " $ONLY_SERVERS " != *" $server "* &&
			" $ONLY_SERVERS " != *" $label "* ]]; then
			continue
		fi
		# TESTS=FILE:CASE: a label is that variant; a server that is no
		# label (kecho) is all of its variants.
		case_selected "$label" ||
			{ [[ $labels != *" $server "* ]] && case_selected "$server"; } || continue
		why=$(server_unavailable "$server")
		lacks=$(platform_lacks "$server")
		if [[ -n $why && -z $lacks ]] || [[ -z $why && -n $lacks ]]; then
			ok 1 "$label: run.sh's availability agrees with the platform"
			diag "$label: run.sh says '${why:-it runs here}'; the platform: ${lacks:-has all it needs ($(server_get "$server" needs))}"
		elif [[ -z $why ]]; then
			_case=$label
			# shellcheck disable=SC2086 # args: zero or more start options
			"$func" "$label" "$server" $args
			_case=
		elif [[ ${ECHOLAB_WHERE:-} == vm ]]; then
			skip "$label: $(basename "$0" .t)" "$lacks"
		else
			guest+=("$label")
		fi
	done < <("$lister")
	((${#guest[@]} == 0)) || _relay_from_guest "${guest[@]}"
}

# _relay_from_guest VARIANT...: this file in the guest for those variants.
_relay_from_guest() {
	relay_from_guest "${0##*/}" ONLY_SERVERS="$*"
}

# relay_from_guest FILE [NAME=VALUE...]: tests/FILE in the guest (within
# GUEST_TIMEOUT seconds, default 1800), with that environment; each of its
# results one of ours, and one more: that it ran to its planned end.
#
# A guest whose kernel dies (run-vm.sh: "the guest ended without reporting
# an exit status") is told with the kernel's last words and run again,
# once: under load the emulated guest has died at random places (a double
# fault in the slab allocator, a NULL dereference in net_rx_action), with
# an EFLAGS no real CPU holds, which points at TCG; docs/guest.md says
# more. The first run's results stand; the second must run to its end.
relay_from_guest() {
	local file=$1 try
	shift
	need_guest
	for try in 1 2; do
		_relay_once "$file" "$@"
		case $? in
		0) return 0 ;;
		2)
			((try == 1)) || break
			diag "guest: the guest's kernel died during tests/$file (its last words above): running it again, once"
			;;
		*) break ;;
		esac
	done
	ok 1 "guest: tests/$file ran to its end${*:+ with $*}"
}

# _relay_once FILE [NAME=VALUE...]: one run of it in the guest; 0 when it
# ran to its planned end (that result told), 2 when the guest died, 1
# otherwise (both with what the guest printed that is not TAP).
_relay_once() {
	local _case=	# the guest's names carry their own cases
	local line name n=0 out planned=none file=tests/$1 rest=() died=0 from
	shift
	out=$(mktemp -d)
	while IFS= read -r line; do
		# What is not TAP (run-vm.sh's word, the kernel's last lines when
		# the guest died) is told when the file did not run to its end.
		case $line in
		"ok "* | "not ok "* | "# "* | 1..*) ;;
		*"the guest ended without reporting an exit status"*) died=1; rest+=("$line") ;;
		*) rest+=("$line") ;;
		esac
		case $line in
		"ok "*" # SKIP "*)
			# The guest detected its facts itself.
			name=${line#ok * - }
			skip_relayed "${name%% # SKIP *}" "${name#* # SKIP }"
			;;
		"ok "*) ok 0 "${line#ok * - }" ;;
		"not ok "*) ok 1 "${line#not ok * - }" ;;
		"# "*) echo "$line"; continue ;;
		1..*) planned=${line#1..}; continue ;;
		*) continue ;;
		esac
		n=$((n + 1))
	done < <(in_guest "$out" "${GUEST_TIMEOUT:-1800}" env "$@" bash "$file" 2>&1)
	rm -rf "$out"
	diag "guest: $file: $n results of $planned planned"
	if [[ $n == "$planned" && $n -gt 0 ]]; then
		ok 0 "guest: $file ran to its end${*:+ with $*}"
		return 0
	fi
	from=$((${#rest[@]} - ${GUEST_TAIL_LINES:-80}))
	((${#rest[@]} == 0)) || printf '# | %s\n' "${rest[@]:$((from > 0 ? from : 0))}"
	((died)) && return 2
	return 1
}

# guest_run CMD...: CMD, a command that boots the qemu guest (run.sh --vm,
# compare --vm), with its output (stderr included) on stdout and its
# status. When the guest's kernel died under it (run-vm.sh says so), that
# is told on stderr with the kernel's last words and CMD runs again, once,
# as relay_from_guest does; CMD must be fine to run twice.
guest_run() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if [[ $out == *"the guest ended without reporting an exit status"* ]]; then
		{
			echo "# guest: the guest's kernel died under: $*; its last words:"
			grep 'kernel|' <<<"$out" | tail -n "${GUEST_TAIL_LINES:-80}" | sed 's/^/# | /'
			echo "# guest: running it again, once"
		} >&2
		out=$("$@" 2>&1)
		rc=$?
	fi
	printf '%s\n' "$out"
	return "$rc"
}

# The guest tests: make check installs the guest's packages first, so a
# missing kernel or a failed build is a failure here, not a reason to skip.
need_guest() {
	local kver
	if ! kver=$("$ROOT/vm/run-vm.sh" --print-kernel 2>&1); then
		echo "Bail out! no guest kernel: $kver"
		exit 1
	fi
	if ! guest_build >&2; then
		echo "Bail out! cannot build the guest's modules for its kernel $kver"
		exit 1
	fi
}

# ---- cases by name: ALL_TESTS and TESTS --------------------------------------
#
# Every file declares its cases in the order they run, as kselftest's net
# tests do, and lets TESTS pick some of them:
#
#     source "$(dirname "$0")/lib.sh"
#     ALL_TESTS="interrupted keep-connection workers-2"
#     select_cases "$@"	# first, before anything that has an effect
#     root_or_bail_out
#     ...setup...
#     run_tests		# test_interrupted, test_keep_connection, ...
#     plan_at_end
#
# A case NAME runs as the function test_NAME, its hyphens as underscores.
# Where the cases are the declared variants of the servers (each_variant),
# ALL_TESTS=$(variant_cases) and each_variant runs them instead.
#
# TESTS names files and cases (make check TESTS=..., or the environment):
# 'contract user' runs those two files whole (tests/prove.sh picks them);
# 'user:interrupted,workers-2' two cases of user.t; 'contract:kecho' every
# variant of kecho. A name a file does not have is a usage error, exit 2
# with the file's cases listed, before anything runs; `bash tests/FILE.t
# --list` prints a file's cases, one a line.
#
# Every result's name starts with its case: 'CASE: what' or 'CASE/sub:
# what' (ok adds 'CASE: ' to a name that does not), so a failure names
# what to run again: TESTS=FILE:CASE.

SELECTED=()	# the cases to run, in ALL_TESTS's order
_case=	# the case running now (run_tests, each_variant)

# _named_cases: the cases TESTS names for this file, one a line; nothing
# when it names none, or names the file whole.
_named_cases() {
	local e f me=${0##*/} entries cases=() some
	me=${me%.t}
	read -ra entries <<<"${TESTS:-}"
	for e in "${entries[@]}"; do
		f=${e%%:*}
		f=${f##*/}
		[[ ${f%.t} == "$me" ]] || continue
		[[ $e == *:* ]] || return 0
		IFS=, read -ra some <<<"${e#*:}"
		cases+=("${some[@]}")
	done
	((${#cases[@]} == 0)) || printf '%s\n' "${cases[@]}"
}

# select_cases [--list]: SELECTED from ALL_TESTS and TESTS. --list prints
# ALL_TESTS and exits. A case TESTS names that ALL_TESTS lacks: the usage
# error, exit 2.
select_cases() {
	local me=${0##*/} c named all=() unknown=()
	me=${me%.t}
	read -d '' -ra all <<<"${ALL_TESTS:-}"
	if ((${#all[@]} == 0)); then
		echo "Bail out! $me.t declares no cases (ALL_TESTS)"
		exit 1
	fi
	named=$(_named_cases)
	for c in $named; do
		[[ " ${all[*]} " == *" $c "* ]] || unknown+=("$c")
	done
	if ((${#unknown[@]})); then
		{
			echo "$me.t: no case named '${unknown[*]}'. Its cases:"
			printf '  %s\n' "${all[@]}"
			echo "Run some with TESTS=$me:CASE[,CASE...], or all with TESTS=$me."
		} >&2
		exit 2
	fi
	if [[ ${1:-} == --list ]]; then
		printf '%s\n' "${all[@]}"
		exit 0
	fi
	SELECTED=()
	for c in "${all[@]}"; do
		[[ -z $named ]] || grep -qxF -- "$c" <<<"$named" || continue
		SELECTED+=("$c")
	done
}

# case_selected NAME: NAME is one of the cases to run.
case_selected() {
	[[ " ${SELECTED[*]} " == *" $1 "* ]]
}

# run_tests: each selected case's function, in order; a case without its
# function is a failure, not a silent pass.
run_tests() {
	local c f
	for c in "${SELECTED[@]}"; do
		_case=$c
		f=test_${c//-/_}
		if declare -F "$f" >/dev/null; then
			"$f"
		else
			ok 1 "has its function $f"
		fi
	done
	_case=
}

# variant_cases [LISTER]: the cases of a file that runs each_variant: each
# variant's label, then each server that is no label (kecho: all three of
# its variants).
variant_cases() {
	local label server labels=() servers=() s
	while read -r label server _; do
		labels+=("$label")
		[[ " ${servers[*]} " == *" $server "* ]] || servers+=("$server")
	done < <("${1:-variants}")
	for s in "${servers[@]}"; do
		[[ " ${labels[*]} " == *" $s "* ]] || labels+=("$s")
	done
	echo "${labels[*]}"
}

# tracefs_state: what the ftrace scripts must leave as they found it:
# tracefs mounted or not, the top-level files they may write, the trace
# instances and kernel.bpf_stats_enabled.
tracefs_state() {
	local tr=/sys/kernel/tracing f
	if [[ ! -e $tr/trace ]]; then
		echo unmounted
		return
	fi
	for f in current_tracer tracing_on buffer_size_kb set_event set_ftrace_filter \
		set_graph_function options/funcgraph-tail; do
		# buffer_size_kb "7 (expanded: 1408)" reads "1410" once the kernel has
		# allocated the buffer (at the first use of a tracer): same size
		echo "$f=$(sed 's/^[0-9]* (expanded: \([0-9]*\))$/\1/' "$tr/$f" 2>/dev/null |
			awk '/^[0-9]+$/ { $0 = int($0 / 8) * 8 } 1' || echo '(unreadable)')"
	done
	echo "instances=$(ls "$tr/instances")"
	sysctl kernel.bpf_stats_enabled
}
