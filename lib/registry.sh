# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the variables are for its users
# lib/registry.sh - the suite's servers, read from their declarations
# (servers/*.sh). Whatever needs to know which servers there are, how each
# is built, started, stopped, traced or drawn reads it here: run.sh, the
# commands, ftrace/, vm/, the tests and the plots. Sourcing it never exits
# the caller; its functions only answer.
#
# A declaration file holds any of:
#
#   server NAME dir=DIR binary=PATH [tools="CMD..."] [kind=process|module]
#               [needs="NEED..."] [trace="FUNCTION..."] [work=FUNCTION]
#               [bpf_progs="PROG..."] [bad_args="ARGS;ARGS..."]
#       how to build it ('make NAME' runs make -C DIR; none without dir=)
#       and what it is (PATH from the root, or absolute); the commands its
#       build needs besides make; kind=module: a kernel module (insmod; the
#       guest builds one for its own kernel); what the platform must have
#       for it to run (a NEED of platform_lacks below); the kernel
#       functions of its hot path (ftrace/trace.sh), the one that runs its
#       deferred work (ftrace/wq-latency.sh), the BPF programs whose run
#       time kernel.bpf_stats measures (trace.sh); argument lists it must
#       refuse, each with a message naming its first word (tests/contract.t)
#   front NAME dir=DIR binary=PATH flag=--FLAG serves="SERVER..." only_why=TEXT
#         [tools=...] [needs=...] [value=WORD values="V..."] [relay=1]
#       something that runs in front of a server, unchanged, and changes
#       how its clients reach it (the sk_msg bypass, the proxy); run.sh's
#       --FLAG starts it with the server; TEXT says why it serves no
#       other. value=: the flag takes one of the values (--proxy PATH),
#       which its hooks read as 'state NAME.arg'. relay=1: it listens on
#       the server's address and port itself and relays to the server,
#       which listens on the next port (the backend)
#   peer NAME binary=PATH [needs="NEED..."]
#       a public server built outside the repository (cmd/peers.sh) and
#       measured beside ours: run.sh starts it and compare measures it by
#       name, with its own variant (extra=1); no make target, test, trace
#       or guest sees it. Its start hook gives its command line
#       (start_detached), its unavailable hook says how to build it
#   deployed NAME dir=DIR binary=PATH [tools="CMD..."] [bad_args="ARGS;ARGS..."]
#       a server written as its community writes one (tokio, Go), beside
#       ours: this repository's code, built by make peers (not make all:
#       its toolchain and registry are its own). Its variants (deployed=1)
#       are measured when compare --servers names them and held to the
#       echo contract (tests/contract.t), where a build that is missing is
#       a skip that says so; the suite's own fault tests, the traces and
#       the guest do not see it
#   variant LABEL order=N colour=#RRGGBB [server=NAME] [args="START-OPTIONS"] [bypass=1]
#           [proxy=1] [one_stack=1] [cpu_scope=all] [extra=1] [deployed=1]
#       one thing compare measures and the plots draw, in the order N and
#       the colour given; of the server (or peer) declared last unless
#       server= says; args are run.sh's start options (-- SERVER-ARGS, a
#       front's --FLAG);
#       bypass=1: only with compare --bypass; proxy=1: only with compare
#       --proxy (and tests/proxy.t); one_stack=1: its bytes go around
#       TCP/IP between sockets of one machine (the sk_msg bypass), so
#       compare measures it with bench and the server in one network
#       stack (--loopback), never over the veth of its two machines on
#       one box, which no real pair of machines could go around;
#       cpu_scope=all: its work runs
#       on any CPU, whatever run.sh --cpus says, so its CPU per echo counts
#       every CPU; extra=1: measured only when compare --servers names it
#       (an ablation, such as a server with one of its mechanisms off), and
#       held to no test; deployed=1: what people deploy (a deployed
#       server's, or a relay of the proxy's: HAProxy, nginx), measured
#       only when compare --servers names it, held to the contract
#
# and, where one differs from the default, hooks named NAME_HOOK. A server's:
#
#   NAME_unavailable     print why it cannot run here and what to do instead
#   NAME_start PORT ADDR ARGS  start it listening on ADDR, an IPv4 address
#                        (default: the binary, detached, with --port, --addr)
#   NAME_ready PORT ADDR it serves (default: an echo round trip succeeds)
#   NAME_running         is it still there (default: its process is alive)
#   NAME_stop            stop it (default: SIGTERM, SIGKILL after a grace period)
#   NAME_clean PORT      once stopped, check that nothing of it is left
#   NAME_status          its lines for run.sh status (counters)
#   NAME_held            how many connections it tracks itself (soak)
#   NAME_modes           'MODE SERVER-ARGS...' per mode wq-latency.sh measures
#
# A front's: NAME_unavailable; NAME_start PORT (before the server starts:
# say what it did, or print why not and return 1); NAME_started PORT (the
# server answers: what its clients must know); NAME_stop (stop it, check
# that nothing of it stays); NAME_status; NAME_enter CMD... (CMD where the
# front reaches it: the server, and clients that are to take it). Hooks run inside
# the lifecycle (lib/lifecycle.sh), with lib/common.sh's helpers and
# lifecycle's state at hand.

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SERVERS=()		# names, in the order of their first variant
FRONTS=()		# names of the fronts
PEERS=()		# names of the peers: servers, but not in SERVERS
DEPLOYED=()		# names of the deployed servers: not in SERVERS either
VARIANTS=()		# labels, in plot order
declare -A _server=()	# [NAME.KEY] = value, servers and fronts alike
declare -A _variant=()	# [LABEL.KEY] = value

# ---- the declarations' words -------------------------------------------------

_declare() {
	local name=$1 kv
	shift
	_server[$name.kind]=process
	_server[$name.tools]=
	for kv in "$@"; do
		_server[$name.${kv%%=*}]=${kv#*=}
	done
}

# server NAME KEY=VALUE...: see above.
server() {
	_declare "$@"
	SERVERS+=("$1")
	_last_server=$1
}

# front NAME KEY=VALUE...: see above.
front() {
	_declare "$@"
	_server[$1.kind]=front
	FRONTS+=("$1")
}

# peer NAME KEY=VALUE...: see above.
peer() {
	_declare "$@"
	_server[$1.peer]=1
	PEERS+=("$1")
	_last_server=$1
}

# deployed NAME KEY=VALUE...: see above.
deployed() {
	_declare "$@"
	_server[$1.deployed]=1
	DEPLOYED+=("$1")
	_last_server=$1
}

# variant LABEL KEY=VALUE...: see above. A deployed server's are deployed=1.
variant() {
	local label=$1 kv
	shift
	_variant[$label.server]=${_last_server:-}
	_variant[$label.args]=
	_variant[$label.bypass]=0
	_variant[$label.proxy]=0
	_variant[$label.deployed]=${_server[${_last_server:-}.deployed]:-}
	for kv in "$@"; do
		_variant[$label.${kv%%=*}]=${kv#*=}
	done
	VARIANTS+=("$label")
}

# ---- what the platform must have (needs=) --------------------------------------

# platform_lacks_need NEED: status 0 when this machine lacks NEED, with
# what it lacks on stdout; 1 when it has it; 2 when NEED is no need.
# The one place a need is declared: the tests' facts no-NEED come from
# here (tests/lib.sh), and hold each server's unavailable hook to them.
platform_lacks_need() {
	local v desc
	case $1 in
	modules)
		desc="this kernel cannot load modules (CONFIG_MODULES=n: no /proc/modules)"
		[[ ! -e /proc/modules ]]
		;;
	btf)
		desc="this kernel has no BTF (no /sys/kernel/btf/vmlinux)"
		[[ ! -r /sys/kernel/btf/vmlinux ]]
		;;
	cgroup2)
		desc="no cgroup v2 is mounted (none in /proc/self/mountinfo)"
		[[ -z $(cgroup2_mount) ]]
		;;
	module-build)
		# The qemu guest's, from vm/run-vm.sh: its kernel's compiler is
		# not on the host (7.2: gcc-16), so no module was built for it.
		desc="the suite's modules could not be built for this kernel: $(cat /etc/vm/no-module-build 2>/dev/null)"
		[[ -s /etc/vm/no-module-build ]]
		;;
	io-uring)
		desc="this kernel's io_uring lacks multishot receive (before 6.0) or is disabled (kernel.io_uring_disabled)"
		v=$(uname -r)
		((${v%%.*} < 6)) || [[ $(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0) != 0 ]]
		;;
	*) return 2 ;;
	esac || return 1
	echo "$desc"
}

# platform_lacks NAME: the first need (needs=) of server or front NAME this
# machine lacks, as the fact no-NEED; nothing when it has them all.
platform_lacks() {
	local need
	for need in $(server_get "$1" needs); do
		if platform_lacks_need "$need" >/dev/null; then
			echo "no-$need"
			return
		fi
	done
}

# ---- questions ---------------------------------------------------------------

# server_get NAME KEY: a declared value (of a server or a front).
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

is_server() { [[ -n ${_server[${1:-}.binary]+x} && ${_server[${1:-}.kind]} != front ]]; }
is_front() { [[ ${_server[${1:-}.kind]:-} == front ]]; }

# front_of_flag FLAG: the front that run.sh's FLAG (--bypass) starts.
front_of_flag() {
	local f
	for f in "${FRONTS[@]}"; do
		[[ ${_server[$f.flag]} == "$1" ]] && { echo "$f"; return 0; }
	done
	return 1
}

# front_serves FRONT SERVER: FRONT goes in front of SERVER.
front_serves() { [[ " ${_server[$1.serves]:-} " == *" $2 "* ]]; }

# server_binary NAME: its path (declared from the root, or absolute).
server_binary() {
	local b=${_server[$1.binary]}
	[[ $b == /* ]] || b=$ECHOLAB_ROOT/$b
	echo "$b"
}

# server_hook NAME HOOK ARGS...: NAME_HOOK, or default_HOOK (lifecycle's);
# nothing (status 0) when there is neither.
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
		[[ ${_variant[$label.bypass]} == 0 && ${_variant[$label.proxy]} == 0 &&
			-z ${_variant[$label.extra]:-}${_variant[$label.deployed]:-} ]] || continue
		echo "$label ${_variant[$label.server]} ${_variant[$label.args]}"
	done
}

# contract_variants: the same, and the deployed servers' (tests/contract.t).
contract_variants() {
	local label
	for label in "${VARIANTS[@]}"; do
		[[ ${_variant[$label.bypass]} == 0 && ${_variant[$label.proxy]} == 0 &&
			-z ${_variant[$label.extra]:-} ]] || continue
		echo "$label ${_variant[$label.server]} ${_variant[$label.args]}"
	done
}

# all_variants: the same for every variant, the bypass ones included: what
# the fault tests hold every server to. Not the proxy's: tests/proxy.t
# holds the relay to its own contract.
all_variants() {
	local label
	for label in "${VARIANTS[@]}"; do
		[[ -z ${_variant[$label.extra]:-}${_variant[$label.deployed]:-} &&
			${_variant[$label.proxy]} == 0 ]] || continue
		echo "$label ${_variant[$label.server]} ${_variant[$label.args]}"
	done
}

# every_variant: the same, the extra ones included: what compare --servers
# may name.
every_variant() {
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

# proxy_variants [--deployed]: the same for compare --proxy: each proxy
# variant and, before them, the plain variant (label = server) of its
# server; with --deployed, HAProxy's and nginx's too.
proxy_variants() {
	local label server deployed=${1:-}
	declare -A proxied=()
	for label in "${VARIANTS[@]}"; do
		[[ ${_variant[$label.proxy]} == 0 ]] || proxied[${_variant[$label.server]}]=1
	done
	for label in "${VARIANTS[@]}"; do
		server=${_variant[$label.server]}
		[[ -z ${_variant[$label.extra]:-} ]] || continue
		[[ -z ${_variant[$label.deployed]:-} || -n $deployed ]] || continue
		[[ ${_variant[$label.proxy]} == 1 ||
			($label == "$server" && -n ${proxied[$server]:-}) ]] || continue
		echo "$label $server ${_variant[$label.args]}"
	done
}

# relayed_variants: the proxy variants alone (tests/proxy.t's cases), the
# deployed relays' (HAProxy, nginx) included, but the extra ones:
# user-proxy-sockmap-verdict-only is the sockmap path with one flag of its
# verdict off, measured when named, never a relay to run.
relayed_variants() {
	local label
	for label in "${VARIANTS[@]}"; do
		[[ ${_variant[$label.proxy]} == 1 && -z ${_variant[$label.extra]:-} ]] || continue
		echo "$label ${_variant[$label.server]} ${_variant[$label.args]}"
	done
}

# front_value FRONT VALUE: VALUE is one FRONT's flag takes; else a usage
# error naming them.
front_value() {
	[[ -n ${2:-} && " ${_server[$1.values]} " == *" $2 "* ]] ||
		usage_error "${_server[$1.flag]}: '${2:-}' is no ${_server[$1.value],,} (${_server[$1.values]// /, })"
}

# server_unavailable NAME [START-OPTIONS...]: why it (with the fronts the
# options name) cannot run here, and what to do instead; nothing when it can.
server_unavailable() {
	local name=$1 why f
	shift
	why=$(server_hook "$name" unavailable)
	while (($#)) && [[ -z $why && $1 != -- ]]; do
		if f=$(front_of_flag "$1"); then
			# A front whose flag takes a value hears it (--proxy PATH).
			if [[ -n ${_server[$f.value]:-} ]]; then
				why=$(server_hook "$f" unavailable "${2:-}")
				shift
			else
				why=$(server_hook "$f" unavailable)
			fi
		fi
		shift || break
	done
	echo "$why"
}

# ---- what the hooks share ------------------------------------------------------

# Why CO-RE BPF programs attached to a cgroup of their own cannot run here.
bpf_cgroup_unavailable() {
	if [[ ! -r /sys/kernel/btf/vmlinux ]]; then
		echo "this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF=n), which $1's CO-RE programs need; use the user server, or a kernel with BTF"
	elif [[ -z $(cgroup2_mount) ]]; then
		echo "no cgroup v2 is mounted ($1 attaches to a cgroup of its own); mount one: mount -t cgroup2 none /sys/fs/cgroup/unified"
	fi
}

# deployed_unbuilt NAME TOOL: why deployed server NAME cannot run here when
# it is not built (by make peers, with TOOL).
deployed_unbuilt() {
	[[ -x $(server_binary "$1") ]] && return 0
	if command -v "$2" >/dev/null; then
		echo "$1 is built by 'make peers', not 'make all': run 'make peers' (it needs $2 and its registry)"
	else
		echo "$1 is built by 'make peers' with $2, which is not installed: run 'make deps', then 'make peers'"
	fi
}

# ---- the declarations ----------------------------------------------------------

for _decl in "$ECHOLAB_ROOT"/servers/*.sh; do
	# shellcheck source=/dev/null # one file per server
	source "$_decl"
done
unset _decl _last_server
# Plot order for the variants, and the servers in the order of theirs.
mapfile -t VARIANTS < <(for _v in "${VARIANTS[@]}"; do
	echo "${_variant[$_v.order]} $_v"
done | sort -n | cut -d' ' -f2)
mapfile -t SERVERS < <(for _v in "${VARIANTS[@]}"; do
	[[ -n ${_server[${_variant[$_v.server]}.peer]:-}${_server[${_variant[$_v.server]}.deployed]:-} ]] ||
		echo "${_variant[$_v.server]}"
done | awk '!seen[$0]++')
unset _v
