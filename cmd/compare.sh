#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# cmd/compare.sh - every server this place can run, measured alike: the
# command behind `sudo ./run.sh compare`. It learns which servers there are
# from lib/registry.sh, starts and stops them with lib/lifecycle.sh, and
# runs itself again in the guest through lib/guest.sh. See compare_usage.
set -euo pipefail

# shellcheck source=lib/lifecycle.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/lifecycle.sh"
# shellcheck source=lib/guest.sh
source "$ECHOLAB_ROOT/lib/guest.sh"
prog_name compare "./run.sh compare --help"
ROOT=$ECHOLAB_ROOT

# TIME_WAIT sockets we accept before a measured run. connect() scans past
# them for a free port with bottom halves off, which slows the client and
# every echo: with 10,000 of them, 1000 x 10 had p99 476 ms instead of 56 ms.
TW_MAX=${ECHOLAB_TW_MAX:-2000}	# tests raise it: they check function, not timing
TW_WAIT_S=75		# they expire after 60 s
NS_SRV=echolab-srv	# --netns: the server's namespace ...
NS_CLI=echolab-cli	# ... and the client's, joined by a veth pair
NS_SRV_IP=10.213.0.1
NS_CLI_IP=10.213.0.2
SRV_NS=$NS_SRV	# where the server runs with --netns; --netem: the root's
NETEM=		# --netem: tc netem's parameters on both ends of the veth

# Set by the command line.
PORT=${ECHOLAB_PORT:-$DEFAULT_PORT}	# run.sh bench --port sets it
PLACE=native
WHERE=native	# the raw files' where=: PLACE, or vm inside the guest
COMPARE_BYPASS=0
REPEAT=3
SWEEP_KEY=
SWEEP_VALUES=()
BENCH_ARGS=()
OUT=
COMPARE_CPUS=auto	# --cpus: auto, none or the server's CPU list
SERVER_CPUS=		# ... resolved: the server's CPUs and bench's, or
CLIENT_PLACE=()		# nothing when they share every CPU
GUEST_ARGS=()	# the command line minus --vm, for the compare in the guest

# Set while running, for the interrupt handler.
RUNNING=
NETNS_UP=

compare_usage() {
	cat <<EOF
Usage: sudo ./run.sh compare [--netns | --vm] [--netem SPEC] [--bypass] [--repeat N]
                             [--sweep threads=1,10,100,1000 | --sweep size=64,1024]
                             [--cpus auto | none | LIST]
                             [--out DIR] [BENCH-ARGS...]

Starts each server this place can run, warms it up, runs bench with the
same flags N times, stops it; then writes summary.md and the plots.

  --netns        server and bench in two network namespaces over a veth
                 pair: the "client on another machine" path
  --vm           everything in the qemu guest, kecho included; with
                 --kernel VERSION (run.sh's), the guest's kernel
  --netem SPEC   a lossy, slow network between them: tc netem SPEC ('loss
                 1%', 'delay 10ms 2ms', 'loss 5% duplicate 1%
                 reorder 25% delay 5ms') on both ends of a veth pair, the
                 client in a namespace of its own, the server in the root
                 one (kecho's listener lives there); implies --netns. The
                 host kernel has no sch_netem: give --vm too
  --bypass       the user server alone, without and with the sk_msg bypass
                 (ebpf-echo/sockredir), bench in the bypass's cgroup
  --repeat N     bench runs per server (default 3)
  --sweep K=V,.. repeat the whole comparison for each value of threads or
                 size, and plot latency and req/s against it
  --cpus LIST    the server's CPUs (run.sh --cpus: its process and the
                 loopback's receive processing); bench gets the others.
                 auto (default): the first half of the CPUs, rounded up,
                 on a machine with two or more, natively and in the guest;
                 none: server and bench share every CPU (with --netns too)
  --out DIR      results directory (default results/DATE-PLACE)
  BENCH-ARGS     passed to every bench run (default: -t 1000 -r 10)

The last line printed is 'results: DIR'.
EOF
}

compare_parse_args() {
	local a skip_next=''
	for a in "$@"; do
		if [[ -n $skip_next ]]; then
			skip_next=''
		elif [[ $a == --out ]]; then
			skip_next=1	# the guest writes to /out
		elif [[ $a != --vm ]]; then
			GUEST_ARGS+=("$a")
		fi
	done
	while (($#)); do
		case $1 in
		-h | --help)
			compare_usage
			exit 0
			;;
		--netns) [[ $PLACE == vm ]] || PLACE=netns ;;
		--vm) PLACE=vm ;;
		--netem)
			[[ ${2:-} =~ ^[a-z] ]] || usage_error "--netem needs tc netem's parameters, e.g. --netem 'loss 1%'"
			NETEM=$2
			SRV_NS=
			[[ $PLACE == vm ]] || PLACE=netns
			shift
			;;
		--bypass) COMPARE_BYPASS=1 ;;
		--repeat)
			[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--repeat needs a positive number"
			REPEAT=$2
			shift
			;;
		--sweep)
			[[ ${2:-} =~ ^(threads|size)=[0-9]+(,[0-9]+)*$ ]] ||
				usage_error "--sweep takes threads=N,N,... or size=N,N,..."
			SWEEP_KEY=${2%%=*}
			IFS=, read -ra SWEEP_VALUES <<<"${2#*=}"
			shift
			;;
		--out)
			[[ -n ${2:-} ]] || usage_error "--out needs a directory"
			OUT=$2
			shift
			;;
		--cpus)
			[[ -n ${2:-} ]] || usage_error "--cpus needs auto, none or a CPU list"
			COMPARE_CPUS=$2
			shift
			;;
		-p | --port | -H | --host | -o | --output | -l | --label)
			usage_error "$1 is set by compare itself"
			;;
		*) BENCH_ARGS+=("$1") ;;
		esac
		shift
	done
	if ((COMPARE_BYPASS)) && [[ $PLACE == netns || -n $NETEM ]]; then
		usage_error "--bypass joins two sockets of one network stack; it has nothing to bypass between namespaces (use it without --netns)"
	fi
	((${#BENCH_ARGS[@]})) || BENCH_ARGS=(-t 1000 -r 10)
	# bench judges its own flags (--help last: every flag is parsed first).
	local err
	err=$("$BENCH" "${BENCH_ARGS[@]}" --help 2>&1 >/dev/null) ||
		usage_error "bad bench arguments '${BENCH_ARGS[*]}': ${err%%$'\n'*}"
}

# Resolves --cpus into SERVER_CPUS and CLIENT_PLACE (bench's --cpus).
# Where the suite cannot steer the packets (--netns, a veth) auto splits
# nothing: the kernel servers' work would stay on the client's CPUs.
resolve_cpus() {
	local n
	n=$(nproc)
	case $COMPARE_CPUS in
	none) return 0 ;;
	auto)
		((n >= 2)) && [[ $PLACE != netns ]] || return 0
		SERVER_CPUS=0
		((n - n / 2 == 1)) || SERVER_CPUS=0-$((n - n / 2 - 1))
		;;
	*) SERVER_CPUS=$(parse_cpus "$COMPARE_CPUS") ;;
	esac
	CLIENT_PLACE=(--cpus "$(other_cpus "$SERVER_CPUS")")
	[[ -n ${CLIENT_PLACE[1]} ]] ||
		usage_error "--cpus $SERVER_CPUS leaves no CPU for bench (or use --cpus none)"
}

# ---- places -------------------------------------------------------------

# in_ns NS CMD...: CMD in that namespace of ours with --netns, else (or
# for NS empty: the root namespace) here.
in_ns() {
	local ns=$1
	shift
	if [[ $PLACE == netns && -n $ns ]]; then
		nsenter --net="/run/netns/$ns" "$@"
	else
		"$@"
	fi
}

# The client also joins the server's fronts (the bypass's cgroup).
in_client() {
	if [[ $PLACE == netns ]]; then
		in_ns "$NS_CLI" "$@"
	else
		front_enter "$@"
	fi
}

server_host() {
	if [[ $PLACE == netns ]]; then echo "$NS_SRV_IP"; else echo 127.0.0.1; fi
}

netns_up() {
	netns_down
	[[ -z $SRV_NS ]] || ip netns add "$SRV_NS"
	ip netns add "$NS_CLI"
	NETNS_UP=1
	ip link add echolab-srv0 type veth peer name echolab-cli0
	[[ -z $SRV_NS ]] || ip link set echolab-srv0 netns "$SRV_NS"
	ip link set echolab-cli0 netns "$NS_CLI"
	in_ns "$SRV_NS" ip addr add "$NS_SRV_IP/30" dev echolab-srv0
	ip -n "$NS_CLI" addr add "$NS_CLI_IP/30" dev echolab-cli0
	in_ns "$SRV_NS" ip link set lo up
	ip -n "$NS_CLI" link set lo up
	in_ns "$SRV_NS" ip link set echolab-srv0 up
	ip -n "$NS_CLI" link set echolab-cli0 up
	# Off loopback, TIME_WAIT reuse is off by default; 1000 x 10 rounds
	# x 3 repetitions would run out of ports. This namespace is ours.
	nsenter --net="/run/netns/$NS_CLI" sysctl -qw net.ipv4.tcp_tw_reuse=1
	local how=
	[[ -z $NETEM ]] || { netem_up; how=", netem ($NETEM) each way"; }
	say "netns: ${SRV_NS:-the root namespace} ($NS_SRV_IP) <-veth-> $NS_CLI ($NS_CLI_IP)$how"
}

# netem_up: NETEM on both ends' egress, so that each direction gets it.
netem_up() {
	local err
	# shellcheck disable=SC2086 # NETEM: tc's words
	if ! err=$(in_ns "$SRV_NS" tc qdisc add dev echolab-srv0 root netem $NETEM 2>&1) ||
		! err=$(in_ns "$NS_CLI" tc qdisc add dev echolab-cli0 root netem $NETEM 2>&1); then
		if [[ $err == *"qdisc kind is unknown"* ]]; then
			die "netem: this kernel ($(uname -r)) has no sch_netem; run it in the qemu guest: sudo ./run.sh compare --vm --netem '$NETEM'"
		fi
		die "netem '$NETEM': tc refused it: $err"
	fi
}

netns_down() {
	ip netns del "$NS_SRV" 2>/dev/null || true
	ip netns del "$NS_CLI" 2>/dev/null || true
	# With --netem the server's end is in the root namespace.
	ip link del echolab-srv0 2>/dev/null || true
	NETNS_UP=
}

# ---- one server -----------------------------------------------------------

# Waits until the client side has room for another full run of connections.
# shellcheck disable=SC2016 # an awk program, not shell
time_wait() {
	in_ns "$NS_CLI" awk '/^TCP:/ { for (i = 2; i < NF; i++) if ($i == "tw") print $(i + 1) }' \
		/proc/net/sockstat
}

drain_time_wait() {
	local n i
	for ((i = 0; i < TW_WAIT_S; i++)); do
		n=$(time_wait)
		((n <= TW_MAX)) && return 0
		((i % 15)) || say "waiting for $n TIME_WAIT sockets to expire (below $TW_MAX: a clean run)"
		sleep 1
	done
	say "warning: still $n TIME_WAIT sockets after ${TW_WAIT_S}s; going on"
}

# bench_run SERVER FILE EXTRA-ARGS...: one measured run, summary to stdout.
bench_run() {
	local server=$1 file=$2
	shift 2
	in_client "$BENCH" -H "$(server_host)" -p "$PORT" -l "$server" -o "$file" \
		--meta "where=$WHERE" ${SERVER_CPUS:+--meta "server_cpus=$SERVER_CPUS"} \
		${NETEM:+--meta "netem=$NETEM"} \
		"${CLIENT_PLACE[@]}" "${BENCH_ARGS[@]}" "$@" || true
}

# measure_server LABEL SERVER [START-OPTIONS...]: fails (after saying why)
# when the server does not start.
measure_server() {
	local label=$1 server=$2 rep file tag v
	local args=() place=()
	shift 2
	[[ $PLACE != netns || -z $SRV_NS ]] || place+=(--netns "$SRV_NS")
	[[ -z $SERVER_CPUS ]] || place+=(--cpus "$SERVER_CPUS")
	# A subshell: a server that cannot start ends it, not the comparison.
	(server_start "$server" --port "$PORT" "${place[@]}" "$@") 2>&1 | sed 's/^/  /'
	((PIPESTATUS[0] == 0)) || return 1
	RUNNING=$server
	# Warm-up: caches, page cache, BPF JIT, accept queue; not recorded.
	in_client "$BENCH" -H "$(server_host)" -p "$PORT" "${CLIENT_PLACE[@]}" -t 10 -r 10 -q \
		-o /dev/null >/dev/null || say "warning: the warm-up against $label had failures"
	for v in "${SWEEP_VALUES[@]:-}"; do
		args=()
		tag=
		if [[ -n $SWEEP_KEY ]]; then
			args=("--$SWEEP_KEY" "$v" --meta "sweep=$SWEEP_KEY" --meta "sweep_value=$v")
			tag=-$SWEEP_KEY$v
		fi
		for ((rep = 1; rep <= REPEAT; rep++)); do
			drain_time_wait
			file=$OUT/$label$tag-$rep.tsv
			say "$label${tag:+ ($SWEEP_KEY=$v)}: run $rep of $REPEAT"
			bench_run "$label" "$file" --meta "repeat=$rep" "${args[@]}" -q |
				tee -a "$OUT/summaries.txt"
		done
	done
	(server_stop) 2>&1 | sed 's/^/  /'
	RUNNING=
}

# ---- the record -----------------------------------------------------------

write_meta() {
	local f=$OUT/meta.txt
	{
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "place=$WHERE"
		echo "kernel=$(uname -r)"
		echo "cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1)"
		echo "cores=$(nproc)"
		echo "memory=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
		echo "bench_args=${BENCH_ARGS[*]}"
		echo "repeat=$REPEAT"
		[[ -z $SWEEP_KEY ]] || echo "sweep=$SWEEP_KEY=$(IFS=,; echo "${SWEEP_VALUES[*]}")"
		echo "client=$(client_mode)"
		[[ -z $NETEM ]] || echo "netem=$NETEM (tc netem, on both ends of the veth)"
		((COMPARE_BYPASS)) && echo "bypass=user-bypass: ebpf-echo/sockredir (sk_msg), server and bench in its cgroup"
		echo "nofile=$(ulimit -Sn)/$(ulimit -Hn)"
		echo "somaxconn=$(in_ns "$SRV_NS" sysctl -n net.core.somaxconn) (run.sh raises it to >= 4096 while a server runs)"
		echo "tcp_max_syn_backlog=$(in_ns "$SRV_NS" sysctl -n net.ipv4.tcp_max_syn_backlog) (likewise)"
		echo "ip_local_port_range=$(in_ns "$NS_CLI" sysctl -n net.ipv4.ip_local_port_range | tr '\t' -)"
		echo "tcp_tw_reuse=$(in_ns "$NS_CLI" sysctl -n net.ipv4.tcp_tw_reuse)"
		echo "git=${ECHOLAB_GIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}"
	} >"$f"
}

# How bench's load threads ran, from its flags (bench's defaults: closed
# loop, SCHED_IDLE).
client_mode() {
	local loop=closed-loop sched="SCHED_IDLE (the server gets the CPUs)" i
	for ((i = 0; i < ${#BENCH_ARGS[@]}; i++)); do
		case ${BENCH_ARGS[i]} in
		-R | --rate) loop="open-loop at ${BENCH_ARGS[i + 1]:-?} req/s" ;;
		--sched) [[ ${BENCH_ARGS[i + 1]:-} != normal ]] || sched="normal priority" ;;
		esac
	done
	echo -n "$loop, load threads at $sched"
	if [[ -n $SERVER_CPUS ]]; then
		echo ", on CPUs ${CLIENT_PLACE[1]}; the server on CPUs $SERVER_CPUS with the loopback's receive processing"
	else
		echo ", server and client sharing every CPU"
	fi
}

# summary.md: pooled repetitions per server, ratios to user; the server's
# time (arrival_us) when every sample has one, and the client's (rtt_us).
write_summary() {
	local f=$OUT/summary.md s line v prefix title
	declare -A lines=()
	local unstamped=()
	for v in "${SWEEP_VALUES[@]:-}"; do
		for s in "${MEASURED[@]}"; do
			line=$(pooled_summary "$s" "$v")
			[[ -n $line ]] || continue
			lines[$s.$v]=$line
			[[ $(field "$line" arrival_n) == "$(field "$line" ok)" ]] ||
				unstamped+=("$s${SWEEP_KEY:+ at $SWEEP_KEY=$v}: $(field "$line" arrival_n) of $(field "$line" ok)")
		done
	done
	{
		echo "# $(sed -n 's/^place=//p' "$OUT/meta.txt") comparison, $(date -u +%Y-%m-%d)"
		echo
		echo "Kernel $(uname -r), $(nproc) cores. bench ${BENCH_ARGS[*]}; $REPEAT run(s) per server,"
		echo "pooled; $(client_mode); times in microseconds. Ratios are to"
		echo "\`user\` measured in the same run (below 1 is faster for latency, above 1"
		echo "is more requests/s). Server side: from the send until the echo reached"
		echo "the client's kernel (its receive timestamp, arrival_us). Client side:"
		echo "until recv() returned it (rtt_us), the client's own delay included;"
		echo "\"client waited\" is the share of the load threads' time spent waiting"
		echo "for a CPU; \"client-bound\" counts the runs where bench found that the"
		echo "client, not the server, was the bottleneck: there the server side is"
		echo "short because the client kept requests from reaching the server."
		echo
		for v in "${SWEEP_VALUES[@]:-}"; do
			[[ -z $SWEEP_KEY ]] || { echo "## $SWEEP_KEY = $v"; echo; }
			for prefix in arrival_ ''; do
				if [[ -n $prefix ]]; then
					title="Server side (arrival_us)"
					if ((${#unstamped[@]})); then
						echo "Server side: not every echo was stamped by the kernel (the sk_msg"
						echo "bypass hands the client no skb; bench's stderr says why), so only the"
						printf 'client side is compared. Stamped: %s.\n' "$(join '; ' "${unstamped[@]}")"
						echo
						continue
					fi
				else
					title="Client side (rtt_us)"
				fi
				echo "$title:"
				echo
				echo "| server | samples | failed | p50 | p90 | p99 | p99.9 | max | req/s | p50/user | p99/user | req/s/user | client waited | client-bound |"
				echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
				for s in "${MEASURED[@]}"; do
					[[ -n ${lines[$s.$v]:-} ]] || continue
					echo "| $s | $(summary_row "$prefix" "${lines[$s.$v]}" "${lines[user.$v]:-}") |"
				done
				echo
			done
		done
		if ((${#SKIPPED[@]})); then
			echo "Not measured here:"
			echo
			for s in "${SKIPPED[@]}"; do echo "- $s"; done
			echo
		fi
		local dir=${OUT#"$ROOT"/results/}
		[[ $dir != /* ]] || dir="this directory"	# the guest's /out
		echo "Raw files: \`SERVER[-SWEEP]-RUN.tsv\`; redraw with \`make plots RESULTS=$dir\`."
	} >"$f"
}

# pooled_summary LABEL SWEEP-VALUE: bench's summary line over its runs,
# and how many of them bench found client-bound (client_bound_runs=K/N).
pooled_summary() {
	local files=() f bound=0
	for f in "$OUT/$1${SWEEP_KEY:+-$SWEEP_KEY$2}"-[0-9]*.tsv{,.gz}; do
		[[ -e $f ]] || continue
		files+=("$f")
		! raw_cat "$f" | grep -q '^# bottleneck=client$' || bound=$((bound + 1))
	done
	((${#files[@]} == 0)) ||
		echo "$("$BENCH" --summarize "${files[@]}") client_bound_runs=$bound/${#files[@]}"
}

# summary_row PREFIX LINE BASE: one table row from a summary line and the
# user baseline's; PREFIX arrival_ picks the server-side percentiles.
summary_row() {
	awk -v p="$1" -v base="$3" '
	function parse(s, m,   i, kv, n, f) {
		n = split(s, f, " ")
		for (i = 2; i <= n; i++) { split(f[i], kv, "="); m[kv[1]] = kv[2] }
	}
	function ratio(a, b) { return (b + 0 > 0 && a != "nan") ? sprintf("%.2f", a / b) : "-" }
	function share(x) { return (x == "" || x == "nan") ? "-" : sprintf("%.0f%%", 100 * x) }
	{
		parse($0, m)
		if (base != "") parse(base, u)
		printf "%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s",
			m["samples"], m["failed"], m[p "p50_us"], m[p "p90_us"], m[p "p99_us"],
			m[p "p999_us"], m[p "max_us"], m["rps"],
			ratio(m[p "p50_us"], u[p "p50_us"]), ratio(m[p "p99_us"], u[p "p99_us"]),
			ratio(m["rps"], u["rps"]), share(m["client_rq_share"]),
			m["client_bound_runs"]
	}' <<<"$2"
}

# Stops what we started: the server, the namespaces. Safe to call twice.
compare_cleanup() {
	[[ -z $RUNNING ]] || (server_stop) >/dev/null 2>&1 || true
	RUNNING=
	[[ -z $NETNS_UP ]] || netns_down
}

compare_interrupted() {
	trap - INT TERM
	echo
	say "interrupted: stopping ${RUNNING:-nothing}; the raw files written so far stay in $OUT"
	compare_cleanup
	echo "results: $OUT"
	exit 130
}

# --vm: the same comparison, run by the guest's own run.sh, into our OUT.
compare_in_guest() {
	local rev rc=0
	rev=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
	say "booting the qemu guest; everything below runs inside it"
	in_guest "$OUT" "${VM_TIMEOUT:-5000}" env ECHOLAB_GIT="$rev" \
		./run.sh compare --out /out "${GUEST_ARGS[@]}" || rc=$?
	# The guest has no gnuplot: the host draws, from the raw files alone.
	if compgen -G "$OUT/*.tsv" >/dev/null; then
		"$ROOT/results/plot.sh" "$OUT" | sed 's/^/  /'
	fi
	echo "results: $OUT"
	exit "$rc"
}

main() {
	local label server args why
	[[ -x $BENCH ]] || make -C "$ROOT" --no-print-directory bench >/dev/null
	compare_parse_args "$@"
	need_root compare
	WHERE=${ECHOLAB_WHERE:-$PLACE}
	[[ $PLACE == vm ]] || resolve_cpus	# the guest resolves its own
	# The guest's kernel in the name when one was picked (run.sh --kernel).
	OUT=${OUT:-$ROOT/results/$(date +%Y%m%d-%H%M%S)-$PLACE${ECHOLAB_KERNEL:+-$ECHOLAB_KERNEL}}
	[[ $PLACE != vm ]] || compare_in_guest
	mkdir -p "$OUT"
	: >"$OUT/summaries.txt"
	trap compare_interrupted INT TERM
	trap compare_cleanup EXIT	# an error must not leave a server or a namespace
	[[ $PLACE != netns ]] || netns_up
	write_meta

	MEASURED=()
	SKIPPED=()
	while read -r label server args; do
		# shellcheck disable=SC2086 # args: zero or more start options
		why=$(server_unavailable "$server" $args)
		if [[ -n $why ]]; then
			say "$label: not measured here: $why"
			SKIPPED+=("\`$label\`: $why")
			continue
		fi
		say "$label: start"
		# shellcheck disable=SC2086 # args: zero or more start options
		if ! measure_server "$label" "$server" $args; then
			say "$label: did not start (its message is above)"
			SKIPPED+=("\`$label\`: did not start here; \`sudo ./run.sh $server\` shows why")
			continue
		fi
		MEASURED+=("$label")
	done < <(if ((COMPARE_BYPASS)); then bypass_variants; else variants; fi)
	trap - INT TERM
	compare_cleanup

	write_summary
	# In the guest (no gnuplot) the host draws once the guest is done.
	if ((${#MEASURED[@]})) && [[ $WHERE != vm ]]; then
		"$ROOT/results/plot.sh" "$OUT" | sed 's/^/  /'
	fi
	cat "$OUT/summary.md"
	[[ $WHERE == vm ]] || echo "results: $OUT"	# the host says it, after plotting
}

main "$@"
