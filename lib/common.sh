# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# lib/common.sh - the helpers every script of the suite shares: messages
# and exits, root, summary fields, CPU lists, the kernel log, processes.
#
# Libraries (lib/*.sh) are sourced by commands (run.sh, cmd/*.sh, ftrace/,
# vm/, tests/) and never call a command nor read a
# variable a command sets. A command names itself once with prog_name;
# die, say and usage_error then speak with that name.

# shellcheck disable=SC2034 # for the libraries and commands that source this
ECHOLAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# echolab_default NAME: a value common/defaults.h defines ('#define NAME
# VALUE', quotes dropped): the C programs and these scripts read the
# suite's defaults, the port and the state directory, from that one file.
echolab_default() {
	sed -n "s/^#define $1 \"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$ECHOLAB_ROOT/common/defaults.h"
}

_prog=${0##*/}
_prog_help=

# prog_name NAME [HELP-COMMAND]: how messages name their sender, and the
# command that prints its usage (for usage_error's hint).
prog_name() {
	_prog=$1
	_prog_help=${2:-}
}

# die MESSAGE: what failed and what to do, on stderr; exit status 1.
die() {
	echo "$_prog: $*" >&2
	exit 1
}

# usage_error MESSAGE: a bad command line; exit status 2.
usage_error() {
	echo "$_prog: $*" >&2
	[[ -z $_prog_help ]] || echo "Try '$_prog_help'." >&2
	exit 2
}

say() { echo "$_prog: $*"; }

# warn MESSAGE: say, on stderr (for scripts whose stdout is data).
warn() { echo "$_prog: $*" >&2; }

# need_root WHAT: WHAT needs root; die saying so otherwise.
need_root() {
	[[ $(id -u) -eq 0 ]] ||
		die "'$1' needs root (it starts servers, loads BPF programs or changes sysctls): run it with sudo"
}

# field LINE KEY: the value of KEY in a 'key=value ...' line (bench's
# summary line, run.sh status's counters); nothing when it has none.
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

# join SEP WORD...: the words with SEP between them.
join() {
	local sep=$1 out=$2 w
	shift 2
	for w in "$@"; do out+=$sep$w; done
	echo "$out"
}

# ---- waiting ----------------------------------------------------------------

# wait_until [-i INTERVAL] SECONDS CMD [ARG...]: run CMD every INTERVAL
# seconds (0.1) until it succeeds, for SECONDS at most (fractions allowed:
# 0.5); status 0 once it did, 1 when time ran out first. CMD runs at least
# once, and once more at the deadline, so a slow machine that sleeps past
# it still gets its last look. The one polling loop of the suite (after
# kselftest's busywait, in seconds).
wait_until() {
	local step=0.1 deadline
	if [[ $1 == -i ]]; then
		step=$2
		shift 2
	fi
	deadline=$(($(_now_us) + $(_seconds_us "$1")))
	shift
	while :; do
		"$@" && return 0
		(($(_now_us) < deadline)) || return 1
		sleep "$step"
	done
}

# _now_us: the wall clock in microseconds (bash's EPOCHREALTIME: no fork).
_now_us() { echo "${EPOCHREALTIME//[!0-9]/}"; }

# _seconds_us SECONDS: 1.5 -> 1500000; whole or with up to 6 decimals.
_seconds_us() {
	local whole=${1%%.*} frac=
	[[ $1 == *.* ]] && frac=${1#*.}
	frac=${frac}000000
	echo $((10#${whole:-0} * 1000000 + 10#${frac:0:6}))
}

# ---- addresses ------------------------------------------------------------------

# is_ipv4 ADDR: ADDR is an IPv4 dotted quad, four decimal parts of 0-255
# without leading zeros: what the servers' --addr and kecho's addr= take.
is_ipv4() {
	local part='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
	[[ $1 =~ ^$part\.$part\.$part\.$part$ ]]
}

# ---- CPU lists (taskset -c syntax: 0, 0-1, 0,2-3) ----------------------------

# cpu_mask LIST: the hex mask sysfs takes (rps_cpus).
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

# cpu_list_ok LIST: LIST is a list of CPUs this machine has.
cpu_list_ok() {
	[[ $1 =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] && taskset -c "$1" true 2>/dev/null
}

# parse_cpus LIST: LIST, or a usage error naming --cpus.
# auto: the first half of the CPUs, rounded up (none on a 1-CPU machine);
# all or none: no placement (empty).
parse_cpus() {
	local n
	case $1 in
	auto)
		n=$(nproc)
		((n >= 2)) || return 0
		if ((n - n / 2 == 1)); then echo 0; else echo "0-$((n - n / 2 - 1))"; fi
		return 0
		;;
	all | none) return 0 ;;
	esac
	cpu_list_ok "$1" ||
		usage_error "--cpus: '$1' is not a list of this machine's CPUs (0-$(($(nproc) - 1)), e.g. 0 or 0-1)"
	echo "$1"
}

# cpu_list_count LIST: how many CPUs a list such as 1 or 0-1,3 names.
cpu_list_count() {
	tr ',' '\n' <<<"$1" | awk -F- 'NF { n += (NF == 2 ? $2 - $1 + 1 : 1) } END { print n + 0 }'
}

# other_cpus LIST: this machine's CPUs that LIST leaves; empty when none.
other_cpus() {
	local mask c rest=()
	mask=$((16#$(cpu_mask "$1")))
	for ((c = 0; c < $(nproc); c++)); do
		((mask & 1 << c)) || rest+=("$c")
	done
	(IFS=,; echo "${rest[*]}")
}

# ---- the kernel log ------------------------------------------------------------

# What counts as "the kernel complained" in its log, everywhere: run.sh
# stop, the fault tests, the guest's kecho tests.
KERNEL_COMPLAINT='WARNING|BUG|Oops|general protection|Call Trace|refcount_t|seq # bug|hung task|soft lockup|leak'

# dmesg_mark: the timestamp of the kernel log's last line (0 when empty or
# unreadable); dmesg_since MARK: the lines logged after it. A timestamp,
# not a line count: once the ring buffer is full, old lines fall out as new
# ones come and a count points into lines already seen.
dmesg_mark() {
	dmesg 2>/dev/null | awk -F'[][]' '/^\[/ { t = $2 + 0 } END { printf "%.6f\n", t }'
}
dmesg_since() {
	dmesg 2>/dev/null | awk -F'[][]' -v m="$1" '/^\[/ { new = ($2 + 0 > m + 0) } new'
}

# kernel_complaints MARK: the lines since MARK that say the kernel complained.
kernel_complaints() { dmesg_since "$1" | grep -E "$KERNEL_COMPLAINT" || true; }

# ---- processes, cgroups, modules -----------------------------------------------

# alive PID [EXE]: PID is a live process (not a zombie), running EXE.
alive() {
	local pid=$1 exe=${2:-} stat
	[[ -n $pid ]] || return 1
	# The process may vanish (and bash reap it) at any moment: read, do not
	# test and then read. A failed $(<file) would end the script under -e.
	{ read -r stat <"/proc/$pid/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]] || return 1
	[[ -z $exe || $(readlink "/proc/$pid/exe" 2>/dev/null) == "$exe" ]]
}

# descendants PID: the PIDs of PID's children, theirs, and so on, one a
# line, read from /proc (the guest has no pgrep). A process that ends
# meanwhile is skipped.
descendants() {
	local f stat kids=() k
	for f in /proc/[0-9]*/stat; do
		{ read -r stat <"$f"; } 2>/dev/null || continue
		stat=${stat##*) }		# past the command, which may hold spaces
		read -r _ k _ <<<"$stat"	# state, then the parent's PID
		[[ $k != "$1" ]] || kids+=("$(basename "$(dirname "$f")")")
	done
	for k in "${kids[@]}"; do
		echo "$k"
		descendants "$k"
	done
}

# cgroup v2 may be mounted anywhere (/sys/fs/cgroup/unified on hybrid
# systems): mountinfo says where.
cgroup2_mount() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
	     $(i + 1) == "cgroup2" { print $5; exit }' /proc/self/mountinfo
}

module_loaded() { grep -q "^$1 " /proc/modules 2>/dev/null; }

# processes_named NAME: how many processes run a command named NAME, read
# from /proc (the guest's busybox has no pgrep).
processes_named() {
	local comm c n=0
	for c in /proc/[0-9]*/comm; do
		{ read -r comm <"$c"; } 2>/dev/null || continue
		[[ $comm != "$1" ]] || n=$((n + 1))
	done
	echo "$n"
}

# raw_cat FILE: a raw file's text, gzipped or not (busybox's gzip, in the
# guest, does not pass a plain file through as gzip -dcf does).
raw_cat() {
	case $1 in
	*.gz) gzip -dc "$1" ;;
	*) cat "$1" ;;
	esac
}

# point_state FILE [TOLERANCE]: whether an open-loop run carried the load
# it was offered, within TOLERANCE (default 0.02) or, for Poisson arrivals,
# three standard deviations of a Poisson count of that many, whichever is
# wider (a short window at a low rate varies by more than 2% by chance
# alone; even arrivals do not): "carried ACHIEVED",
# "client-limited ACHIEVED" (below, bench's CPUs busy 95% of the window
# or more), "short ACHIEVED" (below: the server fell behind), or "over
# ACHIEVED" (above: a late client catching up). ACHIEVED: ok echoes per
# second of the window, as judge counts them. Closed-loop runs, offered
# nothing: "carried". Its square root is Newton's, not awk's sqrt(): the
# guest's busybox awk has no math ("Math support is not compiled in"),
# and compare --vm judges there.
# shellcheck disable=SC2016 # an awk program, not shell
point_state() {
	raw_cat "$1" | awk -v tol="${2:-0.02}" -F'\t' '
		function root(x,  r, i) { r = x > 1 ? x : 1; for (i = 0; i < 64; i++) r = (r + x / r) / 2; return r }
		/^# [a-z_]+=/ { eq = index($0, "="); meta[substr($0, 3, eq - 3)] = substr($0, eq + 1); next }
		!/^#/ && $NF == "ok" { ok++ }
		END {
			rate = meta["rate"] + 0; w = meta["window_s"] + 0; busy = meta["client_busy_s"] + 0
			n = split(meta["client_cpus"], parts, ","); ncpu = 0
			for (i = 1; i <= n; i++) { m = split(parts[i], ab, "-"); ncpu += m == 2 ? ab[2] - ab[1] + 1 : 1 }
			if (meta["full_ok"] > 0) ok = meta["full_ok"]
			a = w > 0 ? ok / w : 0
			if (rate <= 0) { printf "carried %d\n", a; exit }
			# even arrivals (bench --arrivals uniform) are a count known exactly
			if (meta["arrivals"] != "uniform" && w > 0 && 3 / root(rate * w) > tol) tol = 3 / root(rate * w)
			if (a > (1 + tol) * rate) state = "over"
			else if (a >= (1 - tol) * rate) state = "carried"
			else if (w > 0 && ncpu > 0 && busy >= 0.95 * w * ncpu) state = "client-limited"
			else state = "short"
			printf "%s %d\n", state, a
		}'
}

# raw_lag_p99 FILE: the p99 of a raw file's lag_us (how late bench sent
# its open-loop messages against their due times) over its ok rows, or
# nothing when it has none.
raw_lag_p99() {
	raw_cat "$1" | awk -F'\t' '/^# columns=/ { sub(/^# columns=/, ""); n = split($0, c, "\t")
			for (i = 1; i <= n; i++) if (c[i] == "lag_us") k = i; next }
		/^#/ { next }
		k && $NF == "ok" && $k != "-" { print $k }' | sort -g |
		awk '{ v[NR] = $1 } END { k = int(NR * 0.99); if (k < 1) k = 1; if (NR) print v[k] }'
}

# ---- BPF objects -----------------------------------------------------------------

# bpf_maps PID NAME...: the ids of the BPF maps of those names that process
# PID holds (bpftool lists holders as 'pids comm(PID)'; where it cannot,
# every map of the name).
# shellcheck disable=SC2016 # awk programs
bpf_maps() {
	local pid=$1
	shift
	bpftool map show | awk -v pid="($pid)" -v names=" $* " '
		function flush() { if (id != "" && (held || !listed)) print id }
		/^[0-9]+:/ { flush(); id = ""; held = listed = 0
			for (i = 1; i < NF; i++)
				if ($i == "name" && index(names, " " $(i + 1) " ")) id = $1 + 0 }
		/^[ \t]+pids / { listed = 1; held = index($0, pid) > 0 }
		END { flush() }'
}

# sockredir_cgroup LOG: the cgroup sockredir's output LOG says it attached
# to ('bypass on port PORT[,PORT...] for cgroup DIR'); nothing, and
# status 1, until it says so.
sockredir_cgroup() {
	local cg
	cg=$(sed -n 's/^bypass on port [0-9,]* for cgroup //p' "$1" 2>/dev/null)
	[[ -n $cg ]] && echo "$cg"
}

# bpf_counters PID MAP...: 'name=value ...' of the counters in those maps of
# process PID, read from the kernel with bpftool (their BTF names the
# fields); per-CPU values are summed. Nothing, and status 0, when the
# maps are gone (their process was killed); a sentence saying so when
# bpftool is missing, never a silent blank.
bpf_counters() {
	local pid=$1 id
	shift
	[[ -n $pid ]] || return 0
	if ! command -v bpftool >/dev/null; then
		echo "unknown (bpftool is not installed: run 'make deps')"
		return 0
	fi
	for id in $(bpf_maps "$pid" "$@"); do
		bpftool -j map dump id "$id"
	done | { grep -oE '"[a-z_]+":[0-9]+' || true; } | awk -F'[":]+' '
		$2 != "key" && $2 != "cpu" {
			if (!($2 in sum)) order[n++] = $2
			sum[$2] += $3
		}
		END { for (i = 0; i < n; i++) printf "%s%s=%.0f", i ? " " : "", order[i], sum[order[i]]
			if (n) print "" }'
}

# bpf_prog_loaded NAME...: a BPF program of one of those names is loaded
# (status 2 when bpftool cannot tell).
bpf_prog_loaded() {
	local progs re
	progs=$(bpftool prog show) || return 2
	re="name ($(join '|' "$@")) "
	grep -qE "$re" <<<"$progs"
}
