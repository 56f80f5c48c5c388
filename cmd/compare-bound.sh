# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# cmd/compare-bound.sh - compare --server-bound: the server in the qemu
# guest, bench natively. Sourced by cmd/compare.sh only.
#
# The study's two VMs made the server the bottleneck. On one box the
# guest does that: its vCPUs (every thread of qemu) run on the server's
# half of the CPUs, and under TCG a server there does about a tenth of
# what it does natively, so bench, on the other half in a namespace of its
# own, is far from its limit. The guest's network card (virtio-net) is
# joined to a tap device in bench's namespace.
#
# The comparison itself runs in the guest, as --vm's does: the guest's
# run.sh starts and stops every server, kecho's modes included. Only bench
# runs here, asked by the guest over the 9p share: the guest writes a
# request (bench's arguments, NUL-separated) into OUT/.bench/N.req, and the
# service here runs bench in the namespace and writes N.out, N.err and
# N.rc. bench reads the server's CPU time here, from /proc/stat: the host
# CPUs the guest runs on, all of the server machine's work (its kernel,
# the server, the emulated card). Times are emulated: compare only ratios
# within one comparison.

BOUND_NS=echolab-svm
BOUND_TAP=echolab-tap0
BOUND_HOST_IP=10.213.1.1
BOUND_GUEST_IP=10.213.1.2
BOUND_SERVICE=	# the bench service's pid (host)
HOST_BENCH_N=0	# the guest's requests so far

server_bound() { [[ $PLACEMENT == server-bound ]]; }

bound_text() {
	echo "the server in the qemu guest (TCG, ${BOUND_VCPUS:-?} vCPU on host CPUs ${BOUND_SERVER_CPUS:-?}: every qemu thread there), bench natively on CPUs ${BOUND_CLIENT_CPUS:-?} in namespace $BOUND_NS ($BOUND_HOST_IP), reaching the guest ($BOUND_GUEST_IP) over tap $BOUND_TAP and virtio-net, its receive processing (RPS) on bench's CPUs; the server's CPU time is the host's on CPUs ${BOUND_SERVER_CPUS:-?}; times emulated, ratios only"
}

# ---- the host's side ----------------------------------------------------

# bound_check: what --server-bound needs of the host (compare_check_args
# has refused the options it does not go with).
bound_check() {
	[[ -n $SERVER_CPUS ]] ||
		usage_error "--server-bound puts the guest on the server's CPUs and bench on the others: it needs --cpus auto or a list, and two CPUs or more"
	[[ -e /dev/net/tun ]] || die "--server-bound needs a tap device and this host has no /dev/net/tun (modprobe tun)"
}

# bound_up: bench's namespace, where qemu makes the tap.
bound_up() {
	bound_down
	ip netns add "$BOUND_NS"
	ip -n "$BOUND_NS" link set lo up
	nsenter --net="/run/netns/$BOUND_NS" sysctl -qw net.ipv4.tcp_tw_reuse=1
}

bound_down() {
	if [[ -n $BOUND_SERVICE ]]; then
		kill -TERM "$BOUND_SERVICE" 2>/dev/null || true
		wait "$BOUND_SERVICE" 2>/dev/null || true
		BOUND_SERVICE=
	fi
	ip netns del "$BOUND_NS" 2>/dev/null || true
}

# bound_tap_ready: the tap qemu made, addressed and up, its receive work
# on bench's CPUs (once; qemu makes it as it starts).
bound_tap_ready() {
	local ns=(ip -n "$BOUND_NS")
	"${ns[@]}" -4 addr show dev "$BOUND_TAP" 2>/dev/null | grep -q "inet $BOUND_HOST_IP/" && return 0
	wait_until 10 "${ns[@]}" link show dev "$BOUND_TAP" >/dev/null 2>&1 || true
	"${ns[@]}" addr add "$BOUND_HOST_IP/30" dev "$BOUND_TAP" &&
		"${ns[@]}" link set "$BOUND_TAP" up &&
		rps_set "$BOUND_NS" "$BOUND_TAP" "$CLIENT_CPUS"
}

# bound_bench REQUEST: one of the guest's runs of bench, here in bench's
# namespace and on its CPUs; /out in its arguments is OUT here. The
# guest's --server-cpus (its own CPUs) become the host's that run it.
bound_bench() {
	local req=$1 n=${1%.req} args=() a run=() rc=0 b
	mapfile -d '' -t args <"$req"
	rm -f "$req"
	for a in "${args[@]:1}"; do	# the first is the guest's bench
		if [[ ${run[*]: -1} == --server-cpus ]]; then
			a=$SERVER_CPUS
		fi
		[[ $a != /out/* ]] || a=$OUT/${a#/out/}
		run+=("$a")
	done
	if bound_tap_ready >"$n.err" 2>&1; then
		# In the background, so that a TERM here reaches bench (nsenter
		# becomes it), which then writes the samples it has.
		nsenter --net="/run/netns/$BOUND_NS" "$BENCH" --cpus "$CLIENT_CPUS" "${run[@]}" \
			>"$n.out" 2>>"$n.err" &
		b=$!
		trap 'kill -TERM "$b" 2>/dev/null' TERM
		wait "$b" || rc=$?
		# A TERM ends the first wait early; bench is still writing.
		kill -0 "$b" 2>/dev/null && { wait "$b" || rc=$?; }
	else
		echo "compare: the tap $BOUND_TAP in $BOUND_NS did not come up" >>"$n.err"
		rc=1
	fi
	echo "$rc" >"$n.rc.tmp"
	mv "$n.rc.tmp" "$n.rc"
}

# bound_service: runs the guest's requests until it is stopped. bench,
# on SIGTERM, writes the samples it has.
bound_service() {
	local dir=$OUT/.bench req child=
	trap '[[ -z $child ]] || kill -TERM "$child" 2>/dev/null; wait; exit 0' TERM
	mkdir -p "$dir"
	while :; do
		for req in "$dir"/*.req; do
			[[ -e $req ]] || continue
			bound_bench "$req" &
			child=$!
			wait "$child" || true
			child=
		done
		sleep 0.05
	done
}

# bound_interrupted: a signal during compare_bound; what the runs wrote
# stays.
bound_interrupted() {
	bound_down
	rm -rf "$OUT/.bench"
	echo "results: $OUT"
	exit 130
}

# compare_bound: --server-bound's comparison, in the guest with bench here.
compare_bound() {
	local rc=0 vcpus
	bound_check
	vcpus=$(cpu_list_count "$SERVER_CPUS")
	mkdir -p "$OUT"
	rm -rf "$OUT/.bench"
	trap 'bound_interrupted' INT TERM
	bound_up
	bound_service &
	BOUND_SERVICE=$!
	# Off the server's CPUs: the guest's are the server machine's alone.
	taskset -acp "$CLIENT_CPUS" "$BOUND_SERVICE" >/dev/null
	say "server-bound: booting the qemu guest ($vcpus vCPU on CPUs $SERVER_CPUS); bench runs here, on CPUs $CLIENT_CPUS in namespace $BOUND_NS"
	VM_TAP="$BOUND_NS:$BOUND_TAP:$BOUND_GUEST_IP/30" VM_CPUS=$SERVER_CPUS VM_SMP=$vcpus \
		guest_compare BOUND_VCPUS="$vcpus" BOUND_SERVER_CPUS="$SERVER_CPUS" \
		BOUND_CLIENT_CPUS="$CLIENT_CPUS" || rc=$?
	bound_down
	trap - INT TERM
	rm -rf "$OUT/.bench"
	guest_results "$rc"
}

# ---- the guest's side ---------------------------------------------------

# host_bench BENCH ARGS...: bench, run by the host's service (above); its
# output here, its status returned. Bounded: a service that never answers
# ends the wait after the run's own time and ten minutes more. The wait
# costs the server machine next to nothing: no process is started (read
# -t on a FIFO of our own sleeps), the share is looked at five times a
# second, and not before the run's own time has passed.
host_bench() {
	local n rc i limit=600 a prev='' d=0 tick
	shift	# the guest's bench: the host runs its own
	for a in "$@"; do
		[[ $prev != -d && $prev != --duration ]] || d=${a%%.*}
		prev=$a
	done
	HOST_BENCH_N=$((HOST_BENCH_N + 1))
	n=/out/.bench/$$-$HOST_BENCH_N
	tick=$(mktemp -u)
	mkfifo "$tick"
	exec {i}<>"$tick"
	rm -f "$tick"
	printf '%s\0' bench "$@" >"$n.tmp"
	mv "$n.tmp" "$n.req"
	read -r -t "$d" -u "$i" || true
	for ((limit = (limit + d) * 5; limit > 0; limit--)); do
		[[ -e $n.rc ]] && break
		read -r -t 0.2 -u "$i" || true
	done
	exec {i}<&-
	if [[ ! -e $n.rc ]]; then
		warn "the host's bench service did not answer within $((600 + d))s"
		rm -f "$n".*
		return 1
	fi
	cat "$n.out" 2>/dev/null
	cat "$n.err" >&2 2>/dev/null
	rc=$(<"$n.rc")
	rm -f "$n".*
	return "$rc"
}
