# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the variables are for its users
# servers/lib.sh - the registry of the suite's servers, and the state of the
# one that runs. run.sh, compare, ftrace, the tests and the plots source this
# file; none of them keeps a list of servers of its own.
#
# A server is declared once, in servers/NAME.sh:
#
#   server NAME dir=DIR binary=PATH [tools="CMD..."] [kind=process|module]
#               [trace="FUNCTION..."] [work=FUNCTION] [bad_args="ARGS;ARGS..."]
#               [needs="NEED..."]
#       how to build it ('make NAME' runs make -C DIR; none without dir=),
#       what it is (PATH from the root, or absolute),
#       what the platform must have for it to run (modules, btf, cgroup2,
#       io-uring: the tests detect each themselves, as the facts no-NEED of
#       tests/lib.sh, and fail when its unavailable hook disagrees),
#       the commands its build needs besides make; kind=module: a kernel
#       module, started with insmod (the default is a process); the kernel
#       functions of its hot path (ftrace/trace.sh) and the one that runs
#       its deferred work, a work item's (ftrace/wq-latency.sh); argument
#       lists it must refuse, each with a message naming its first word
#       (tests/contract.t)
#   variant LABEL order=N colour=#RRGGBB [args="START-OPTIONS"] [bypass=1]
#       one thing compare measures and the plots draw, in the order N and
#       the colour given; args are run.sh's start options (-- SERVER-ARGS,
#       --bypass); bypass=1: only with compare --bypass
#
# and, where it differs from a plain process server, hooks named NAME_HOOK:
#
#   NAME_unavailable     print why it cannot run here and what to do instead
#   NAME_start PORT ARGS start it (default: the binary, detached, with --port)
#   NAME_running         is it still there (default: its process is alive)
#   NAME_stop            stop it (default: SIGTERM, SIGKILL after a grace period)
#   NAME_clean PORT      once stopped, check that nothing of it is left
#   NAME_status          its lines for run.sh status (counters)
#
# The hooks run inside run.sh, with die, say, state and the variables of
# the server being started or stopped (pid, PORT, LOG) at hand.

SERVERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ECHOLAB_ROOT=$(cd "$SERVERS_DIR/.." && pwd)

# The running server's state: written by run.sh only, read through state.
STATE_DIR=${ECHOLAB_STATE_DIR:-/run/echolab}
# The loopback's receive packet steering (RPS) mask: run.sh --cpus points
# it at the server's CPUs, so that the kernel's receive processing of a
# local packet runs there, and with it whatever a kernel server does in
# that context (ebpf's verdict and echo, kecho's work queued from it);
# by default it runs on the CPU that sent the packet, the client's.
LO_RPS=/sys/class/net/lo/queues/rx-0/rps_cpus

# state KEY: what run.sh recorded (server, pid, port, exe, args, started,
# bypass, bypass.pid, ...), or nothing.
state() { cat "$STATE_DIR/$1" 2>/dev/null || true; }

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

SERVERS=()		# names, in the order of their first variant
VARIANTS=()		# labels, in plot order
declare -A _server=()	# [NAME.KEY] = value
declare -A _variant=()	# [LABEL.KEY] = value

# server NAME KEY=VALUE...: see above.
server() {
	local name=$1 kv
	shift
	_server[$name.kind]=process
	_server[$name.tools]=
	for kv in "$@"; do
		_server[$name.${kv%%=*}]=${kv#*=}
	done
	SERVERS+=("$name")
}

# variant LABEL KEY=VALUE...: a variant of the server declared last.
variant() {
	local label=$1 kv
	shift
	_variant[$label.server]=${SERVERS[-1]}
	_variant[$label.args]=
	_variant[$label.bypass]=0
	for kv in "$@"; do
		_variant[$label.${kv%%=*}]=${kv#*=}
	done
	VARIANTS+=("$label")
}

# server_get NAME KEY: a declared value.
server_get() { echo "${_server[$1.$2]:-}"; }

# variant_get LABEL KEY: a declared value; a server's name stands for its
# first variant (bench's label for 'run.sh bench kecho' is kecho).
variant_get() {
	local label=$1 v
	if [[ -z ${_variant[$label.server]+x} ]]; then
		for v in "${VARIANTS[@]}"; do
			[[ ${_variant[$v.server]} == "$label" ]] && { label=$v; break; }
		done
	fi
	echo "${_variant[$label.$2]:-}"
}

is_server() { [[ -n ${_server[${1:-}.binary]+x} ]]; }

# server_binary NAME: its path (declared from the root, or absolute).
server_binary() {
	local b=${_server[$1.binary]}
	[[ $b == /* ]] || b=$ECHOLAB_ROOT/$b
	echo "$b"
}

# server_hook NAME HOOK ARGS...: NAME_HOOK, or the default; nothing (status
# 0) when there is neither: a hook with no default that was not declared.
server_hook() {
	local name=$1 hook=$2
	shift 2
	if declare -F "${name}_$hook" >/dev/null; then
		"${name}_$hook" "$@"
	elif declare -F "default_$hook" >/dev/null; then
		"default_$hook" "$@"
	fi
}

# variants: 'LABEL SERVER [START-OPTIONS...]' per variant but the bypass
# ones, in plot order: what compare measures.
variants() {
	local label
	for label in "${VARIANTS[@]}"; do
		[[ ${_variant[$label.bypass]} == 0 ]] || continue
		echo "$label ${_variant[$label.server]} ${_variant[$label.args]}"
	done
}

# all_variants: the same for every variant, the bypass ones included: what
# the fault tests hold every server to.
all_variants() {
	local label
	for label in "${VARIANTS[@]}"; do
		echo "$label ${_variant[$label.server]} ${_variant[$label.args]}"
	done
}

# bypass_variants: the same for compare --bypass: each bypass variant and,
# before it, the plain variant (label = server) of its server.
bypass_variants() {
	local label server
	declare -A bypassed=()
	for label in "${VARIANTS[@]}"; do
		[[ ${_variant[$label.bypass]} == 0 ]] || bypassed[${_variant[$label.server]}]=1
	done
	for label in "${VARIANTS[@]}"; do
		server=${_variant[$label.server]}
		[[ ${_variant[$label.bypass]} == 1 ||
			($label == "$server" && -n ${bypassed[$server]:-}) ]] || continue
		echo "$label $server ${_variant[$label.args]}"
	done
}

# server_unavailable NAME [START-OPTIONS...]: why it cannot run here (and
# what to do instead), or nothing when it can.
server_unavailable() {
	local name=$1 why
	shift
	why=$(server_hook "$name" unavailable)
	if [[ -z $why && " $* " == *" --bypass "* ]]; then
		why=$(bypass_unavailable)
	fi
	echo "$why"
}

# ---- what the hooks share ------------------------------------------------

# cgroup v2 may be mounted anywhere (/sys/fs/cgroup/unified on hybrid
# systems): mountinfo says where.
cgroup2_mount() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
	     $(i + 1) == "cgroup2" { print $5; exit }' /proc/self/mountinfo
}

# Why CO-RE BPF programs attached to a cgroup of their own cannot run here.
bpf_cgroup_unavailable() {
	if [[ ! -r /sys/kernel/btf/vmlinux ]]; then
		echo "this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF=n), which $1's CO-RE programs need; use the user server, or a kernel with BTF"
	elif [[ -z $(cgroup2_mount) ]]; then
		echo "no cgroup v2 is mounted ($1 attaches to a cgroup of its own); mount one: mount -t cgroup2 none /sys/fs/cgroup/unified"
	fi
}

# Why the sk_msg bypass (ebpf-echo/sockredir, run.sh --bypass) cannot run.
bypass_unavailable() { bpf_cgroup_unavailable sockredir; }

# True when pid is a live process (not a zombie) running binary exe.
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

module_loaded() { grep -q "^$1 " /proc/modules 2>/dev/null; }

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

# ---- the declarations ----------------------------------------------------

for _decl in "$SERVERS_DIR"/*.sh; do
	[[ $_decl == */lib.sh ]] && continue
	# shellcheck source=/dev/null # one file per server
	source "$_decl"
done
unset _decl
# Plot order for the variants, and the servers in the order of theirs.
mapfile -t VARIANTS < <(for _v in "${VARIANTS[@]}"; do
	echo "${_variant[$_v.order]} $_v"
done | sort -n | cut -d' ' -f2)
mapfile -t SERVERS < <(for _v in "${VARIANTS[@]}"; do
	echo "${_variant[$_v.server]}"
done | awk '!seen[$0]++')
unset _v
