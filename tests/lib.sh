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
# What a test's clients run inside (bench_ok's bench): nothing, or run.sh
# client for a front whose clients must join it (the proxy's skmsg path:
# the bypass's cgroup).
CLIENT=()

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

# fails_with NAME STATUS REGEX CMD...: CMD exits STATUS, and the first
# line of its stderr matches REGEX (a program's "PROG: why").
fails_with() {
	local name=$1 status=$2 re=$3 err rc
	shift 3
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	is "$rc" "$status" "$name: exit $status"
	like "${err%%$'\n'*}" "$re" "$name: says why"
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
	no-cpuidle) desc="this kernel keeps no idle-state residency (no /sys/devices/system/cpu/cpu0/cpuidle/state*/time)" ;;
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
	no-cpuidle) ! compgen -G '/sys/devices/system/cpu/cpu0/cpuidle/state*/time' >/dev/null ;;
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

# hogs_spinning PID...: each of these timeout processes has its busy loop
# running, and it has had CPU time (for wait_until).
hogs_spinning() {
	local p c utime
	for p; do
		c=$(pgrep -P "$p") || return 1
		# /proc/PID/stat: utime is field 14 (the command, sh, has no space)
		utime=$(awk '{ print $14 }' "/proc/$c/stat" 2>/dev/null)
		[[ $utime =~ ^[0-9]+$ ]] && ((utime > 0)) || return 1
	done
}

# interrupt_beside_hogs PID LIMIT STEP: SIGINT to the process group of
# PID (a job started under set -m) with a CPU hog spinning on every CPU,
# as a busy machine stretches teardown (PLATFORM.md); waits up to LIMIT
# seconds, looking every STEP, for PID to go, then kills the group.
# Sets INT_RC (PID's status), INT_MS (how long it took to go) and
# INT_HOGS (how many hogs spun). The hogs are bounded (60 s) and killed;
# HOGS holds them meanwhile, for an EXIT trap to kill (kill_hogs).
HOGS=()
interrupt_beside_hogs() {
	local pid=$1 limit=$2 step=$3 start i
	for ((i = 0; i < $(nproc); i++)); do
		timeout 60 sh -c 'while :; do :; done' &
		HOGS+=($!)
	done
	wait_until 5 hogs_spinning "${HOGS[@]}" ||
		diag "not every CPU hog had run 5 s after its start"
	kill -INT -- "-$pid"
	start=$(_now_us)
	wait_until -i "$step" "$limit" pid_gone "$pid"
	INT_MS=$((($(_now_us) - start) / 1000))
	kill -KILL -- "-$pid" 2>/dev/null
	wait "$pid"
	INT_RC=$?
	INT_HOGS=${#HOGS[@]}
	kill_hogs
}

# kill_hogs: the CPU hogs interrupt_beside_hogs started, if any are left.
kill_hogs() {
	((${#HOGS[@]} == 0)) && return 0
	kill "${HOGS[@]}" 2>/dev/null
	wait "${HOGS[@]}" 2>/dev/null
	HOGS=()
}

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

# The rest of the helpers, in two files by subject; every test sources
# this file only.
# shellcheck source=tests/lib-servers.sh
source "$ROOT/tests/lib-servers.sh"
# shellcheck source=tests/lib-cases.sh
source "$ROOT/tests/lib-cases.sh"
