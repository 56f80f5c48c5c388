# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the settings are for cmd/compare-*.sh
# cmd/compare-plan.sh - what compare will run: the workloads and their
# bench arguments, the equal loads, the CPUs, the variants in their order
# and each repetition's shuffle, and meta.txt, the record of that plan.
# Sourced by cmd/compare.sh only.

# The workloads (--workload), each a steady state: a second of warm-up,
# not recorded, then five measured seconds; twenty for ping-pong, whose CPU
# per echo varies most from run to run (coefficient of variation over 15
# runs, median of 12 servers' sets: 8.0% at 5 s, 7.2% at 20 s).
# load and load1000 are open loop (bench's event engine, Poisson
# arrivals): every server is offered the same rates, --rates or
# EQUAL_POINTS of the lowest capacity. CPU per echo falls as the load
# rises (user: 20 us at 10,500 msg/s, 10 at 68,000), so only equal rates
# compare servers. The others are closed loop: each server runs at its own
# rate, which gives its capacity, never a CPU verdict (judge refuses one).
declare -A WORKLOADS=(
	[load]="-c 50 -d 5 --warmup 1"
	[load1000]="-c 1000 -d 5 --warmup 1"
	[busy]="-t 50 -d 5 --warmup 1"
	[pingpong]="-t 1 -d 20 --warmup 1"
	[connect]="-t 1000 -d 5 -m 1 --warmup 1"
	[stream]="-c 4 --window 1048576 -d 5 --warmup 1"
)
# stream's messages unless --size or --sizes say otherwise: a 1 MiB window
# of them on each connection (netperf's TCP_STREAM, echoed).
STREAM_SIZE=65536
DEFAULT_WORKLOAD=load
# The equal loads, as fractions of the lowest capacity among the servers:
# every server carries each, and the client sends each with room to spare.
EQUAL_POINTS="0.25 0.5 0.75"
# A point counts when the run achieved its offered rate within this share
# (judge's own rate rule for CPU per echo is the same 2%).
RATE_TOLERANCE=0.02

# plan_workload: the bench arguments every run gets (BENCH_ARGS), from
# the workload named, or the default one, and BENCH-ARGS; the message
# size.
plan_workload() {
	# --rates alone asks for equal load, the default workload's: bench
	# arguments that pick no engine (-c, -t) go after its own, as after
	# a workload named (--rates 20000 -d 3).
	if [[ -z $WORKLOAD && -n $RATES_SET ]] &&
		! bench_args_name -c --connections -t --threads; then
		WORKLOAD=$DEFAULT_WORKLOAD
	fi
	if [[ $WORKLOAD == load* || $WORKLOAD == stream ]]; then
		# An equal-load workload, or the stream, takes bench arguments
		# after its own (bench's last value of a flag wins): --workload
		# load -d 2.
		read -ra BENCH_ARGS <<<"${WORKLOADS[$WORKLOAD]} ${BENCH_ARGS[*]}"
	elif ((${#BENCH_ARGS[@]})); then
		[[ -z $WORKLOAD || $WORKLOAD == curve ]] ||
			usage_error "--workload $WORKLOAD and bench arguments '${BENCH_ARGS[*]}': give one or the other"
	else
		# --sweep (of anything) with no workload named: the closed loop's.
		[[ -n $WORKLOAD || -z $SWEEP_KEY || -n $RATES_SET ]] || WORKLOAD=busy
		WORKLOAD=${WORKLOAD:-$DEFAULT_WORKLOAD}
		read -ra BENCH_ARGS <<<"${WORKLOADS[$WORKLOAD]}"
	fi
	# shellcheck disable=SC2153 # SIZES: --sizes (cmd/compare-args.sh)
	[[ $WORKLOAD != stream || -n $SIZE || ${#SIZES[@]} -gt 0 ]] || SIZE=$STREAM_SIZE
	[[ -z $SIZE ]] || BENCH_ARGS+=(-s "$SIZE")
	if ((${#SIZES[@]})); then
		[[ -z $SIZE && $SWEEP_KEY != size ]] || usage_error "--sizes sweeps the size itself: drop --size and --sweep size="
		((CURVE == 0)) || usage_error "--sizes and --curve: measure one at a time"
		[[ " ${BENCH_ARGS[*]} " != *" -s "* && " ${BENCH_ARGS[*]} " != *" --size "* ]] ||
			usage_error "--sizes chooses the size: drop -s"
	fi
	plan_equal_load
}

# bench_args_name FLAG...: whether the bench arguments hold one of FLAGs.
bench_args_name() {
	local a f
	for a in "${BENCH_ARGS[@]}"; do
		for f in "$@"; do
			[[ $a != "$f" ]] || return 0
		done
	done
	return 1
}

# plan_equal_load: open loop at rates every server is offered alike
# (load, load1000 or --rates): the sweep of the rate.
plan_equal_load() {
	if [[ $WORKLOAD == load* || -n $RATES_SET ]]; then
		((CURVE == 0)) || usage_error "--curve chooses its rates: drop --rates"
		[[ " ${BENCH_ARGS[*]} " == *" -c "* || " ${BENCH_ARGS[*]} " == *" --connections "* ]] ||
			usage_error "--rates needs bench's event engine: give -c N in the bench arguments, or --workload load"
		[[ " ${BENCH_ARGS[*]} " != *" -R "* && " ${BENCH_ARGS[*]} " != *" --rate "* ]] ||
			usage_error "equal load chooses the rates (--rates): drop -R"
		[[ -z $SWEEP_KEY || $SWEEP_KEY == rate ]] ||
			usage_error "--workload $WORKLOAD sweeps the rate: drop --sweep $SWEEP_KEY"
		EQUAL=1
		SWEEP_KEY=rate
	fi
}

# Resolves --cpus into SERVER_CPUS, CLIENT_CPUS and CLIENT_PLACE.
resolve_cpus() {
	SERVER_CPUS=$(parse_cpus "$COMPARE_CPUS")
	[[ -n $SERVER_CPUS ]] || return 0
	CLIENT_CPUS=$(other_cpus "$SERVER_CPUS")
	[[ -n $CLIENT_CPUS ]] ||
		usage_error "--cpus $SERVER_CPUS leaves no CPU for bench (or use --cpus none)"
	CLIENT_PLACE=(--cpus "$CLIENT_CPUS")
}

# ---- places -------------------------------------------------------------

two_machine() { [[ $PLACEMENT == two-machine ]]; }

# proxy_text [PATH]: where the proxy and its backend ran (compare --proxy),
# and on the skmsg path what joined them.
proxy_text() {
	local how="the relay (proxy/proxy; HAProxy or nginx, proxy/relays/) in the root namespace"
	[[ -z $SERVER_CPUS ]] || how+=" on CPUs $SERVER_CPUS"
	if two_machine; then
		how+=", listening on $NS_SRV_IP; the backend (the server) in bench's namespace at $NS_CLI_IP port $((PORT + 1))"
	else
		how+=", listening on 127.0.0.1; the backend (the server) on 127.0.0.1 port $((PORT + 1))"
	fi
	[[ -z $CLIENT_CPUS ]] || how+=" on bench's CPUs $CLIENT_CPUS"
	[[ ${1:-} != skmsg ]] ||
		how+="; the sk_msg bypass (sockredir/) on port $PORT and $((PORT + 1)), the proxy, the backend and bench in its cgroup: each send moved onto the peer socket's queue, its counters at the end of each raw file (# bypass_*)"
	echo "$how; the direct runs (label user): the server alone, placed as every server"
}

placement_text() {
	local how
	if server_bound; then
		how=$(bound_text)
	elif two_machine; then
		how="two machines on one box: the server in the root namespace ($NS_SRV_IP), bench in namespace $NS_CLI ($NS_CLI_IP), a veth pair between them, a fresh client namespace for every run"
		[[ -z $NETEM ]] || how+=", tc netem '$NETEM' on both ends"
		if [[ -n $SERVER_CPUS ]]; then
			how+="; the server and its veth end's receive processing (RPS) on CPUs $SERVER_CPUS, bench and its end's on CPUs $CLIENT_CPUS"
		else
			how+="; server and bench share every CPU"
		fi
	else
		how="loopback: bench and the server in one network stack over 127.0.0.1"
		if [[ -n $SERVER_CPUS ]]; then
			how+="; the server and the loopback's receive processing (both directions') on CPUs $SERVER_CPUS, bench on CPUs $CLIENT_CPUS"
		else
			how+="; server and bench share every CPU"
		fi
	fi
	echo "$how"
}

# plan: "label server [start options]" per variant to measure, in order.
plan() {
	local want label server args
	declare -A seen=() known=()
	if [[ -z $SERVER_LIST ]]; then
		if ((COMPARE_BYPASS)); then
			bypass_variants
		elif [[ -n $COMPARE_PROXY ]]; then
			proxy_variants --deployed | awk -v paths=" ${COMPARE_PROXY//,/ } " '
				$3 != "--proxy" || index(paths, " " $4 " ")'
		else
			variants
		fi
		return
	fi
	while read -r label server args; do
		known[$label]="$server $args"
	done < <(every_variant)
	for want in ${SERVER_LIST//,/ }; do
		[[ -n ${known[$want]:-} ]] ||
			usage_error "--servers: no variant '$want' (run.sh list shows them)"
		if [[ $(variant_get "$want" one_stack) == 1 ]] && two_machine; then
			usage_error "--servers: $want needs one network stack: add --loopback or --bypass"
		fi
		label=$want
		[[ -z ${seen[$want]:-} ]] || label=$want-again
		[[ -z ${seen[$label]:-} ]] || usage_error "--servers: $want given more than twice"
		seen[$label]=1
		echo "$label ${known[$want]}"
	done
}

# shuffle N: ORDER becomes 0 .. N-1 in a random order: Fisher-Yates over
# a generator of our own (the C library's rand() constants), seeded with
# ORDER_SEED, in this shell: bash reseeds RANDOM in every subshell, and
# the same seed must give the same orders.
ORDER=()
ORDER_STATE=
shuffle() {
	local n=$1 i j t
	[[ -n $ORDER_STATE ]] || ORDER_STATE=$ORDER_SEED
	ORDER=()
	for ((i = 0; i < n; i++)); do ORDER+=("$i"); done
	for ((i = n - 1; i > 0; i--)); do
		ORDER_STATE=$(((ORDER_STATE * 1103515245 + 12345) % 2147483648))
		j=$(((ORDER_STATE >> 16) % (i + 1)))
		t=${ORDER[i]} ORDER[i]=${ORDER[j]} ORDER[j]=$t
	done
}

# ---- the record -----------------------------------------------------------

write_meta() {
	local f=$OUT/meta.txt
	{
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "place=$WHERE"
		echo "placement=$PLACEMENT: $(placement_text)"
		echo "kernel=$(uname -r)"
		echo "cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1)"
		echo "cores=$(nproc)"
		echo "memory=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
		echo "workload=${WORKLOAD:-custom}"
		echo "bench_args=${BENCH_ARGS[*]}"
		if ((REPEAT_MAX > REPEAT)); then
			echo "repeat=$REPEAT-$REPEAT_MAX (interleaved: each repetition runs every server once, in a random order; after $REPEAT, one more until every server's CPU per echo is within +-$PRECISION % at 95%)"
		else
			echo "repeat=$REPEAT (interleaved: each repetition runs every server once, in a random order)"
		fi
		echo "order_seed=$ORDER_SEED (--seed: each repetition's order, on an order= line below)"
		[[ -z $SIZE ]] || echo "size=$SIZE"
		((${#SWEEP_VALUES[@]} == 0)) || echo "sweep=$SWEEP_KEY=$(IFS=,; echo "${SWEEP_VALUES[*]}")"
		echo "client=$(client_mode)"
		((TW_MAX == 2000)) || echo "tw_max=$TW_MAX (ECHOLAB_TW_MAX: a loopback run started with up to this many TIME_WAIT sockets, not 2000)"
		[[ -z $NETEM ]] || echo "netem=$NETEM (tc netem, on both ends of the veth)"
		((COMPARE_BYPASS)) && echo "bypass=user-bypass: sockredir/sockredir (sk_msg), server and bench in its cgroup"
		[[ -z $COMPARE_PROXY ]] || echo "proxy=$COMPARE_PROXY: $(proxy_text "$([[ ,$COMPARE_PROXY, != *,skmsg,* ]] || echo skmsg)")"
		echo "nofile=$(ulimit -Sn)/$(ulimit -Hn)"
		echo "somaxconn=$(sysctl -n net.core.somaxconn) (run.sh raises it to >= 4096 while a server runs)"
		echo "tcp_max_syn_backlog=$(sysctl -n net.ipv4.tcp_max_syn_backlog) (likewise)"
		echo "ip_local_port_range=$(sysctl -n net.ipv4.ip_local_port_range | tr '\t' -)"
		if two_machine || server_bound; then
			echo "tcp_tw_reuse=1 (the client's namespace)"
		else
			echo "tcp_tw_reuse=$(sysctl -n net.ipv4.tcp_tw_reuse)"
		fi
		echo "git=${ECHOLAB_GIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}"
	} >"$f"
}

# How bench's load threads ran, from its flags (bench's defaults: closed
# loop, SCHED_IDLE).
client_mode() {
	local loop=closed-loop sched="SCHED_IDLE" engine='' i
	[[ $SWEEP_KEY != connections ]] || engine=", event engine (bench --connections)"
	# --curve and --sweep rate=: each run open loop at its swept rate.
	if ((CURVE)) || [[ $SWEEP_KEY == rate ]]; then
		loop="open-loop at the swept rates (bench -R), Poisson arrivals"
	fi
	for ((i = 0; i < ${#BENCH_ARGS[@]}; i++)); do
		case ${BENCH_ARGS[i]} in
		-R | --rate) loop="open-loop at ${BENCH_ARGS[i + 1]:-?} req/s" ;;
		-c | --connections) engine=", event engine (bench --connections)" ;;
		--sched) [[ ${BENCH_ARGS[i + 1]:-} != normal ]] || sched="normal priority" ;;
		esac
	done
	echo "$loop$engine, load threads at $sched"
}
