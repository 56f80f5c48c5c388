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

# TIME_WAIT sockets we accept before a measured run on loopback. connect()
# scans past them for a free port with bottom halves off, which slows the
# client and every echo: with 10,000 of them, 1000 x 10 had p99 476 ms
# instead of 56 ms. The two-machine placement needs no wait: each run gets a
# fresh client namespace, and the old one's sockets go with it.
# Loopback runs wait until TIME_WAIT sockets are below this (tests raise
# it: they check function, not timing; so may a long sweep of connection
# crowds, saying so). --vm passes it on to the guest.
TW_MAX=${ECHOLAB_TW_MAX:-2000}
TW_WAIT_S=75		# they expire after 60 s
# The two-machine placement: the server in the root namespace (where run.sh
# starts every server, and the only one kecho's listener knows), bench in a
# namespace of its own, joined by a veth pair.
NS_CLI=echolab-cli
VETH_SRV=echolab-srv0
VETH_CLI=echolab-cli0
NS_SRV_IP=10.213.0.1
NS_CLI_IP=10.213.0.2
NETEM=		# --netem: tc netem's parameters on both ends of the veth

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

# Set by the command line.
PORT=${ECHOLAB_PORT:-$DEFAULT_PORT}	# run.sh bench --port sets it
PLACEMENT=two-machine	# or loopback
EQUAL=0			# open loop at equal rates (--rates, or load's default)
RATES_SET=		# --rates given
SIZES=()		# --sizes: the comparison once per message size
SIZE=			# --size: this comparison's message size (bench -s)
ORDER_SEED=		# --seed: each repetition's random order from it
WHERE=native		# the raw files' where=: native, or vm inside the guest
COMPARE_BYPASS=0
COMPARE_PROXY=		# --proxy: the proxy's paths to measure, comma-separated
REPEAT=5		# --repeat MIN[-MAX]: at least REPEAT runs per server,
REPEAT_MAX=15		# and up to REPEAT_MAX until CPU per echo is precise:
PRECISION=2.5		# every server's 95% interval within +-PRECISION %
REPEAT_SET=		# --repeat given
ROUNDS=()		# per sweep value: the repetitions run, and why it stopped
SWEEP_KEY=
SWEEP_VALUES=()
BENCH_ARGS=()
WORKLOAD=
SERVER_LIST=		# --servers: labels to measure, in this order
OUT=
COMPARE_CPUS=auto	# --cpus: auto, none or the server's CPU list
SERVER_CPUS=		# ... resolved: the server's CPUs and bench's, or
CLIENT_CPUS=		# nothing when they share every CPU
CLIENT_PLACE=()		# bench's --cpus
GUEST_ARGS=()	# the command line minus --vm, for the compare in the guest
VM=0
CURVE=0			# --curve: latency against load
BOUND=1000		# --bound: the knees' p99 bound, us
# --curve: the offered loads, as fractions of the highest capacity probed.
CURVE_POINTS="0.1 0.3 0.5 0.65 0.8 0.9 1.0 1.15"
CURVE_ARGS="-c 1000 -d 3 --warmup 1"	# its bench arguments, by default

# Set while running, for the interrupt handler.
RUNNING=
NETNS_UP=

compare_usage() {
	cat <<EOF
Usage: sudo ./run.sh compare [--loopback | --vm] [--netem SPEC] [--bypass | --proxy PATH,...]
                             [--workload load|load1000|busy|pingpong|connect|stream | --curve [--bound US] [--points F,..]]
                             [--rates R,...] [--sizes S,...] [--seed N]
                             [--repeat N | --repeat MIN-MAX] [--precision PCT]
                             [--servers LABEL,...] [--cpus auto | none | LIST]
                             [--sweep threads=1,10,100 | connections=10,1000 | size=64,1024]
                             [--out DIR] [BENCH-ARGS...]

Measures every server this place can run alike: by default each is offered
the same open-loop rates, three loads below every server's capacity, for
N repetitions, the servers interleaved (each repetition in a random order,
seeded and recorded), each run a fresh start of the server, a steady-state
window and its CPU per echo. Then judges every difference against user at
each load (analysis/judge: medians, intervals with their coverage, a
verdict) and writes summary.md and the plots.

Placement (recorded in meta.txt and every raw file):
  default        two machines on one box: the server in the root namespace
                 on its half of the CPUs, bench in a namespace of its own on
                 the other half, joined by a veth pair; each end's receive
                 processing (RPS) on its own side's CPUs, so the server's
                 CPUs do what a server machine would, no more
  --netns        the default placement, said explicitly (older command
                 lines used it for two namespaces)
  --loopback     one network stack: bench and the server over 127.0.0.1,
                 the loopback's receive processing on the server's CPUs
                 (the server's CPUs then also receive the client's echoes)
  --vm           everything in the qemu guest, kecho included; with
                 --kernel VERSION (run.sh's), the guest's kernel
  --netem SPEC   a lossy, slow link: tc netem SPEC ('loss 1%', 'delay 10ms
                 2ms') on both ends of the veth. The host kernel has no
                 sch_netem: give --vm too
  --bypass       the user server alone, without and with the sk_msg bypass
                 (sockredir/sockredir), bench in the bypass's cgroup; the
                 bypass joins two sockets of one stack: implies --loopback
  --proxy P,..   the user server directly and behind the proxy on each
                 path named (copy, splice, uring, sockmap; all: every one),
                 verdicts against copy. The proxy takes the server's CPUs
                 and the root namespace; the backend runs beside bench, in
                 its namespace and on its CPUs (with --loopback: on
                 bench's CPUs, over 127.0.0.1), so that the proxy's CPU
                 per echo is the relay's cost

What is measured:
  --workload W   load (default): equal load, open loop over 50 connections
                 (bench's event engine, Poisson arrivals), every server
                 offered the same rates (--rates); load1000: the same over
                 1000 connections. At its own rate (closed loop: capacity,
                 req/s, never a CPU verdict): busy, 50 connections each
                 sending as fast as its echoes return; pingpong, one
                 connection; connect, 1000 clients, a new connection per
                 request; stream, 4 connections each keeping a 1 MiB
                 window of 64 KiB messages out (bench --window; --size or
                 --sizes for others), MiB/s and CPU per MiB in
                 summary.md. Each runs a 1 s warm-up, not recorded, then 5
                 measured seconds (bench --warmup 1 -d 5); pingpong 20, as
                 one echo in flight varies more. load, load1000 and stream
                 take BENCH-ARGS after their own (--workload load -d 10)
  --rates R,..   the offered loads, msg/s in total (load, load1000, or
                 BENCH-ARGS with -c). Default: each server's capacity from
                 a closed-loop run first, then ${EQUAL_POINTS// /, } of the
                 lowest. A point a run did not carry (achieved rate off the
                 offered by more than 2%) is marked and left out of the
                 verdicts; summary.md says which and whether the client
                 was the limit
  --sizes S,..   the whole comparison once per message size (bytes), each
                 in DIR/size-S/, and a size table in DIR/summary.md: CPU
                 per echo and per KiB, latency and verdicts at every size
  --seed N       the seed of each repetition's random server order
                 (default: drawn, and recorded in meta.txt)
  --repeat MIN-MAX  runs per server (default 5-15): MIN repetitions, then
                 one more at a time until every server's CPU per echo is
                 known within +-PCT % (its median's 95% interval), or MAX
                 (netperf's -i MAX,MIN -I 95,2xPCT); --repeat N: exactly N
                 (a verdict needs 3 or more)
  --precision PCT  the target of --repeat MIN-MAX (default 2.5)
  --servers L,.. these variants only, in this order (run.sh list shows
                 them); a label given twice is measured twice, the second
                 time as LABEL-again: a check that the verdict finds no
                 difference where there is none
  --cpus LIST    the server's CPUs; bench gets the others. auto (default):
                 the first half, rounded up; none: server and bench share
                 every CPU (then CPU per echo counts the client's too)
  --sweep K=V,.. the whole comparison for each value of threads, size,
                 rate (-R) or connections (bench's event engine: give
                 BENCH-ARGS without -t, e.g. -d 5 --warmup 1)
  --curve        latency against load: each server's capacity from a
                 closed-loop run, then open-loop points (Poisson) at 10%
                 to 115% of the highest, --repeat 3 by default, bench
                 $CURVE_ARGS unless BENCH-ARGS say otherwise (they need
                 -c). Adds curve.png, curve.tsv and each server's knee
                 to summary.md (cmd/curve.sh)
  --bound US     the p99 bound of --curve's knees (default 1000)
  --points F,..  --curve's offered loads as fractions of the capacity
                 (default ${CURVE_POINTS// /,})
  --out DIR      results directory (default results/DATE-PLACEMENT)
  --summarize DIR  write DIR's summary.md again from its raw files and
                 meta.txt (after cmd/thin.sh, say); nothing is run
  BENCH-ARGS     passed to every bench run instead of the workload's

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
		--netns) ;;	# the default placement; kept for old command lines
		--loopback) PLACEMENT=loopback ;;
		--vm) VM=1 ;;
		--netem)
			[[ ${2:-} =~ ^[a-z] ]] || usage_error "--netem needs tc netem's parameters, e.g. --netem 'loss 1%'"
			NETEM=$2
			shift
			;;
		--bypass) COMPARE_BYPASS=1 ;;
		--proxy)
			[[ ${2:-} =~ ^[a-z]+(,[a-z]+)*$ ]] ||
				usage_error "--proxy takes the proxy's paths, e.g. copy,splice,sockmap, or all"
			COMPARE_PROXY=$2
			[[ $2 != all ]] || COMPARE_PROXY=$(server_get proxy values | tr ' ' ,)
			for a in ${COMPARE_PROXY//,/ }; do front_value proxy "$a"; done
			shift
			;;
		--curve) CURVE=1 ;;
		--points)
			if ! [[ ${2:-} =~ ^[0-9]*\.?[0-9]+(,[0-9]*\.?[0-9]+)*$ ]] ||
				! awk -v l="$2" 'BEGIN { n = split(l, p, ","); for (i = 1; i <= n; i++) if (p[i] <= 0 || p[i] > 10) exit 1 }'; then
				usage_error "--points takes fractions of the capacity, e.g. 0.1,0.5,0.9,1.2"
			fi
			CURVE_POINTS=${2//,/ }
			shift
			;;
		--bound)
			[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--bound needs the p99 bound in microseconds, e.g. 1000"
			BOUND=$2
			shift
			;;
		--workload)
			[[ -n ${WORKLOADS[${2:-none}]:-} ]] ||
				usage_error "--workload: '${2:-}' is none of ${!WORKLOADS[*]}"
			WORKLOAD=$2
			shift
			;;
		--servers)
			[[ ${2:-} =~ ^[a-z0-9-]+(,[a-z0-9-]+)*$ ]] ||
				usage_error "--servers takes variant labels, e.g. user,uring (run.sh list)"
			SERVER_LIST=$2
			shift
			;;
		--repeat)
			[[ ${2:-} =~ ^([1-9][0-9]*)(-([1-9][0-9]*))?$ ]] ||
				usage_error "--repeat needs a positive number N, or a range MIN-MAX (5-15)"
			REPEAT=${BASH_REMATCH[1]}
			REPEAT_MAX=${BASH_REMATCH[3]:-$REPEAT}
			REPEAT_SET=1
			((REPEAT_MAX >= REPEAT)) || usage_error "--repeat $2: MAX is below MIN"
			shift
			;;
		--precision)
			if ! [[ ${2:-} =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
				! awk -v p="$2" 'BEGIN { exit !(p > 0 && p < 100) }'; then
				usage_error "--precision needs a percentage in (0, 100), e.g. 2.5"
			fi
			PRECISION=$2
			shift
			;;
		--rates)
			[[ ${2:-} =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
				usage_error "--rates takes offered loads in msg/s, e.g. 10000,20000,40000"
			SWEEP_KEY=rate
			IFS=, read -ra SWEEP_VALUES <<<"$2"
			RATES_SET=1
			shift
			;;
		--sizes)
			[[ ${2:-} =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
				usage_error "--sizes takes message sizes in bytes, e.g. 64,1024,16384,65536"
			IFS=, read -ra SIZES <<<"$2"
			shift
			;;
		--size)	# one of --sizes' comparisons
			[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--size takes a message size in bytes"
			SIZE=$2
			shift
			;;
		--seed)
			[[ ${2:-} =~ ^[0-9]{1,9}$ ]] || usage_error "--seed takes a number, 0 to 999999999"
			ORDER_SEED=$2
			shift
			;;
		--sweep)
			[[ ${2:-} =~ ^(threads|connections|size|rate)=[0-9]+(,[0-9]+)*$ ]] ||
				usage_error "--sweep takes threads=N,N,..., connections=N,N,..., rate=N,N,... or size=N,N,..."
			[[ -z $RATES_SET ]] || usage_error "--sweep and --rates: give one"
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
		-p | --port | -H | --host | -o | --output | -l | --label | --server-cpus)
			usage_error "$1 is set by compare itself"
			;;
		*) BENCH_ARGS+=("$1") ;;
		esac
		shift
	done
	if [[ -n $COMPARE_PROXY ]]; then
		((COMPARE_BYPASS == 0)) || usage_error "--proxy and --bypass: measure one at a time"
		((CURVE == 0)) || usage_error "--curve and --proxy: measure one at a time"
		[[ -z $SERVER_LIST ]] || usage_error "--proxy picks the variants itself: drop --servers"
	fi
	if ((COMPARE_BYPASS)); then
		[[ -z $NETEM ]] ||
			usage_error "--bypass joins two sockets of one network stack; it has nothing to bypass over a veth (drop --netem)"
		PLACEMENT=loopback
	fi
	[[ -z $NETEM || $PLACEMENT == two-machine ]] ||
		usage_error "--netem shapes the veth between two namespaces; it does not go with --loopback"
	if ((CURVE)); then
		[[ -z $SWEEP_KEY ]] || usage_error "--curve sweeps the offered rate itself: drop --sweep"
		[[ -z $WORKLOAD ]] || usage_error "--curve runs its own workload: drop --workload"
		((COMPARE_BYPASS == 0)) || usage_error "--curve and --bypass: measure one at a time"
		[[ " ${BENCH_ARGS[*]} " != *" -R "* && " ${BENCH_ARGS[*]} " != *" --rate "* ]] ||
			usage_error "--curve chooses the rates: drop -R"
		((${#BENCH_ARGS[@]})) || read -ra BENCH_ARGS <<<"$CURVE_ARGS"
		[[ " ${BENCH_ARGS[*]} " == *" -c "* || " ${BENCH_ARGS[*]} " == *" --connections "* ]] ||
			usage_error "--curve needs bench's event engine: give -c N in the bench arguments"
		WORKLOAD=curve
		[[ $REPEAT_SET ]] || { REPEAT=3; REPEAT_MAX=3; }
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
	[[ $WORKLOAD != stream || -n $SIZE || ${#SIZES[@]} -gt 0 ]] || SIZE=$STREAM_SIZE
	[[ -z $SIZE ]] || BENCH_ARGS+=(-s "$SIZE")
	if ((${#SIZES[@]})); then
		[[ -z $SIZE && $SWEEP_KEY != size ]] || usage_error "--sizes sweeps the size itself: drop --size and --sweep size="
		((CURVE == 0)) || usage_error "--sizes and --curve: measure one at a time"
		[[ " ${BENCH_ARGS[*]} " != *" -s "* && " ${BENCH_ARGS[*]} " != *" --size "* ]] ||
			usage_error "--sizes chooses the size: drop -s"
	fi
	# Equal load: open loop at rates every server is offered alike.
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
	[[ -n $ORDER_SEED ]] || ORDER_SEED=$(((RANDOM * 32768 + RANDOM) % 1000000000))
	plan >/dev/null	# --servers: unknown or misplaced variants end here
	# bench judges its own flags (--help last: every flag is parsed first).
	local err
	err=$("$BENCH" "${BENCH_ARGS[@]}" --help 2>&1 >/dev/null) ||
		usage_error "bad bench arguments '${BENCH_ARGS[*]}': ${err%%$'\n'*}"
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

# in_cli CMD...: CMD in the client's namespace (two machines), else here.
in_cli() {
	if two_machine; then
		nsenter --net="/run/netns/$NS_CLI" "$@"
	else
		"$@"
	fi
}

# The client also joins the server's fronts (the bypass's cgroup).
in_client() {
	if two_machine; then
		in_cli "$@"
	else
		front_enter "$@"
	fi
}

server_host() {
	if two_machine; then echo "$NS_SRV_IP"; else echo 127.0.0.1; fi
}

# rps_set NETNS DEV CPUS: DEV's receive processing on CPUS (RPS), seen from
# NETNS's own sysfs ('' for the root namespace: ip netns exec mounts one).
rps_set() {
	local ns=$1 dev=$2 mask
	mask=$(cpu_mask "$3")
	if [[ -z $ns ]]; then
		echo "$mask" >"/sys/class/net/$dev/queues/rx-0/rps_cpus"
	else
		ip netns exec "$ns" sh -c "echo $mask >/sys/class/net/$dev/queues/rx-0/rps_cpus"
	fi
}

# netns_up: a fresh client namespace and veth pair for one run, so that no
# run inherits another's TIME_WAIT sockets. The server's end stays in the
# root namespace, where every server (kecho's listener too) lives.
netns_up() {
	netns_down
	ip netns add "$NS_CLI"
	NETNS_UP=1
	ip link add "$VETH_SRV" type veth peer name "$VETH_CLI"
	ip link set "$VETH_CLI" netns "$NS_CLI"
	ip addr add "$NS_SRV_IP/30" dev "$VETH_SRV"
	ip -n "$NS_CLI" addr add "$NS_CLI_IP/30" dev "$VETH_CLI"
	ip -n "$NS_CLI" link set lo up
	ip link set "$VETH_SRV" up
	ip -n "$NS_CLI" link set "$VETH_CLI" up
	# Off loopback, TIME_WAIT reuse is off by default; a connection per
	# request for seconds would run out of ports. This namespace is ours.
	in_cli sysctl -qw net.ipv4.tcp_tw_reuse=1
	# Not with netem: the 6.12 guest panicked (NULL dereference in an
	# interrupt) under 'loss 5%' with RPS on both veth ends; netem's runs
	# keep the placement that passed before, receive work unsteered.
	if [[ -n $SERVER_CPUS && -z $NETEM ]]; then
		# What arrives at each end is received on that end's CPUs: the
		# echo's receive work on the client's, as on another machine.
		rps_set '' "$VETH_SRV" "$SERVER_CPUS"
		rps_set "$NS_CLI" "$VETH_CLI" "$CLIENT_CPUS"
	fi
	[[ -z $NETEM ]] || netem_up
}

# netem_up: NETEM on both ends' egress, so that each direction gets it.
netem_up() {
	local err
	# shellcheck disable=SC2086 # NETEM: tc's words
	if ! err=$(tc qdisc add dev "$VETH_SRV" root netem $NETEM 2>&1) ||
		! err=$(in_cli tc qdisc add dev "$VETH_CLI" root netem $NETEM 2>&1); then
		if [[ $err == *"qdisc kind is unknown"* ]]; then
			die "netem: this kernel ($(uname -r)) has no sch_netem; run it in the qemu guest: sudo ./run.sh compare --vm --netem '$NETEM'"
		fi
		die "netem '$NETEM': tc refused it: $err"
	fi
}

netns_down() {
	ip netns del "$NS_CLI" 2>/dev/null || true
	ip link del "$VETH_SRV" 2>/dev/null || true
	NETNS_UP=
}

# Where the proxy and its backend ran (compare --proxy).
proxy_text() {
	local how="proxy/proxy in the root namespace"
	[[ -z $SERVER_CPUS ]] || how+=" on CPUs $SERVER_CPUS"
	if two_machine; then
		how+=", listening on $NS_SRV_IP; the backend (the server) in bench's namespace at $NS_CLI_IP port $((PORT + 1))"
	else
		how+=", listening on 127.0.0.1; the backend (the server) on 127.0.0.1 port $((PORT + 1))"
	fi
	[[ -z $CLIENT_CPUS ]] || how+=" on bench's CPUs $CLIENT_CPUS"
	echo "$how; the direct runs (label user): the server alone, placed as every server"
}

placement_text() {
	local how
	if two_machine; then
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

# ---- one run ----------------------------------------------------------------

# Waits until the client side has room for another full run of connections
# (loopback only: two machines get a fresh client namespace every run).
# shellcheck disable=SC2016 # an awk program, not shell
time_wait() {
	awk '/^TCP:/ { for (i = 2; i < NF; i++) if ($i == "tw") print $(i + 1) }' /proc/net/sockstat
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

# The CPUs whose busy time is the server's (bench --server-cpus): its own,
# or every CPU for a variant whose work runs anywhere (kecho's unbound
# workqueue: there the figure includes the client's CPUs, and says so).
server_cpu_scope() {
	if [[ $(variant_get "$1" cpu_scope) == all || -z $SERVER_CPUS ]]; then
		echo "0-$(($(nproc) - 1))"
	else
		echo "$SERVER_CPUS"
	fi
}

# bench_run LABEL FILE EXTRA-ARGS...: one measured run, summary to stdout.
bench_run() {
	local label=$1 file=$2 relay=() args
	shift 2
	args=$(variant_get "${label%-again}" args)
	[[ $(variant_get "${label%-again}" proxy) != 1 ]] ||
		relay=(--meta "proxy=${args#--proxy }: $(proxy_text)")
	in_client "$BENCH" -H "$(server_host)" -p "$PORT" -l "$label" -o "$file" \
		--server-cpus "$(server_cpu_scope "${label%-again}")" \
		--meta "where=$WHERE" --meta "placement=$PLACEMENT" \
		--meta "workload=${WORKLOAD:-custom}" \
		${NETEM:+--meta "netem=$NETEM"} "${relay[@]}" \
		"${CLIENT_PLACE[@]}" "${BENCH_ARGS[@]}" "$@" ||
		# Exit 2: bench refused the arguments (the sweep's with the
		# user's: -c N -R RATE without -d only fails here). Every run
		# would fail alike; run_one ends the comparison on the mark.
		{ (($? != 2)) || : >"$OUT/.bench-refused"; }
}

# run_one LABEL SERVER REP TAG [BENCH-ARGS... --] [START-OPTIONS...]: a
# fresh start of the server, a warm-up, one measured run (REP 0: not
# recorded), a stop. Fails (after saying why) when the server does not
# start.
run_one() {
	local label=$1 server=$2 rep=$3 tag=$4 extra=() place=()
	shift 4
	while (($#)) && [[ $1 != -- ]]; do extra+=("$1"); shift; done
	shift
	[[ -z $SERVER_CPUS ]] || place+=(--cpus "$SERVER_CPUS")
	# Two machines: the server listens on its veth end, as a server
	# machine would on its interface (on loopback by default).
	! two_machine || place+=(--addr "$NS_SRV_IP")
	if two_machine; then netns_up; else drain_time_wait; fi
	# Behind the proxy, the server is its backend: on the client's side of
	# the veth, so that the proxy's end receives both hops' packets.
	if two_machine && [[ " $* " == *" --proxy "* ]]; then
		place+=(--netns "$NS_CLI" --backend-addr "$NS_CLI_IP")
	fi
	# A subshell: a server that cannot start ends it, not the comparison.
	# RUNNING before the start: Ctrl-C ends the subshell half-way, and
	# the interrupt handler must stop what it had started.
	RUNNING=$server
	(server_start "$server" --port "$PORT" "${place[@]}" "$@") 2>&1 | sed 's/^/    /'
	((PIPESTATUS[0] == 0)) || { RUNNING=; netns_down; return 1; }
	# Warm-up: caches, BPF JIT, the accept queue; not recorded. The
	# measured run has a warm-up of its own too (--warmup).
	in_client "$BENCH" -H "$(server_host)" -p "$PORT" "${CLIENT_PLACE[@]}" -t 10 -r 10 -q \
		-o /dev/null >/dev/null || say "warning: the warm-up against $label had failures"
	if ((rep == 0)); then
		bench_run "$label" /dev/null "${extra[@]}" -q >/dev/null
	elif ((rep < 0)); then	# --curve's capacity probe: closed loop
		bench_run "$label" /dev/null "${extra[@]}" -q | tee -a "$OUT/capacity.txt" | sed 's/^/    /'
	else
		bench_run "$label" "$OUT/$label$tag-$rep.tsv" --meta "repeat=$rep" "${extra[@]}" -q |
			tee -a "$OUT/summaries.txt" | sed 's/^/    /'
		# bench marks a run that a signal stopped. Ctrl-C reaches us
		# too, but now and then our trap did not run and the
		# comparison went on, to exit 0 in 2 s (2 of the 10 runs of
		# compare.t's interrupted on record here): the mark ends it
		# as the trap does.
		! grep -q '^# interrupted=1' "$OUT/$label$tag-$rep.tsv" 2>/dev/null ||
			compare_interrupted
	fi
	(server_stop) 2>&1 | sed 's/^/    /'
	RUNNING=
	[[ -z $NETNS_UP ]] || netns_down
	if [[ -e $OUT/.bench-refused ]]; then
		rm -f "$OUT/.bench-refused"
		usage_error "bench refused its arguments (its message is above): nothing more is measured. bench arguments: ${BENCH_ARGS[*]} ${extra[*]}"
	fi
}

# plan: "label server [start options]" per variant to measure, in order.
plan() {
	local want label server args
	declare -A seen=() known=()
	if [[ -z $SERVER_LIST ]]; then
		if ((COMPARE_BYPASS)); then
			bypass_variants
		elif [[ -n $COMPARE_PROXY ]]; then
			proxy_variants | awk -v paths=" ${COMPARE_PROXY//,/ } " '
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
		if [[ $(variant_get "$want" bypass) == 1 ]] && two_machine; then
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

# measure_all: REPEAT rounds over the servers, each round in an order of
# its own, drawn at random from ORDER_SEED and recorded in meta.txt: no
# server always runs first, or always after the same one (as a rotation
# ABCD, BCDA... would have it), and a drift over the comparison hits every
# server alike.
measure_all() {
	local entries=() ok=() e label server args why v tag i k n rep total done_runs=0
	local sweep_args=()
	declare -A failed=()
	mapfile -t entries < <(plan)
	for e in "${entries[@]}"; do
		read -r label server args <<<"$e"
		# shellcheck disable=SC2086 # args: zero or more start options
		why=$(server_unavailable "$server" $args)
		if [[ -n $why ]]; then
			say "$label: not measured here: $why"
			SKIPPED+=("\`$label\`: $why")
		else
			ok+=("$e")
		fi
	done
	n=${#ok[@]}
	((n)) || return 0
	if ((CURVE)); then
		probe_capacity max "$CURVE_POINTS" "${ok[@]}"
	elif ((EQUAL)) && [[ -z $RATES_SET ]]; then
		probe_capacity min "$EQUAL_POINTS" "${ok[@]}"
	fi
	total=$((n * REPEAT_MAX * ${#SWEEP_VALUES[@]}))
	((total)) || total=$((n * REPEAT_MAX))
	local upto=
	((REPEAT_MAX == REPEAT)) || upto="up to "
	for v in "${SWEEP_VALUES[@]:-}"; do
		sweep_args=()
		tag=
		if [[ -n $SWEEP_KEY ]]; then
			sweep_args=("--$SWEEP_KEY" "$v" --meta "sweep=$SWEEP_KEY" --meta "sweep_value=$v")
			tag=-$SWEEP_KEY$v
		fi
		# The first run after a quiet spell is slower than the rest (the
		# issue's runs: user's first of three was its slowest in every
		# directory): one unrecorded run of the whole workload first.
		# Timed workloads only: a run of rounds is a burst, and may be long.
		if [[ " ${BENCH_ARGS[*]} " == *" -d "* || " ${BENCH_ARGS[*]} " == *" --duration "* ]]; then
			read -r label server args <<<"${ok[0]}"
			say "warm-up: one unrecorded run of $label${tag:+ ($SWEEP_KEY=$v)}"
			# shellcheck disable=SC2086 # args: zero or more start options
			run_one "$label" "$server" 0 "$tag" "${sweep_args[@]}" -- $args || true
		fi
		local why_stop="as asked"
		for ((rep = 1; rep <= REPEAT_MAX; rep++)); do
			if ((rep > REPEAT)); then
				if why=$(precise_enough "$v" "${ok[@]}"); then
					why_stop=$why
					rep=$((rep - 1))
					break
				fi
				say "after $((rep - 1)) repetitions: $why: one more"
			fi
			shuffle "$n"
			for ((k = 0; k < n; k++)); do
				i=${ORDER[k]}
				read -r label server args <<<"${ok[i]}"
				((k)) || echo "order=${tag:+$SWEEP_KEY=$v }repetition $rep: $(for j in "${ORDER[@]}"; do
					read -r l _ <<<"${ok[j]}"; printf '%s ' "$l"; done)" >>"$OUT/meta.txt"
				done_runs=$((done_runs + 1))
				[[ -z ${failed[$label]:-} ]] || continue
				say "run $done_runs of $upto$total: $label${tag:+ ($SWEEP_KEY=$v)}, repetition $rep of $upto$REPEAT_MAX"
				# shellcheck disable=SC2086 # args: zero or more start options
				if ! run_one "$label" "$server" "$rep" "$tag" "${sweep_args[@]}" -- $args; then
					say "$label: did not start (its message is above); left out from here on"
					failed[$label]=1
					SKIPPED+=("\`$label\`: did not start here; \`sudo ./run.sh $server\` shows why")
				fi
			done
		done
		if ((rep > REPEAT_MAX)); then
			rep=$REPEAT_MAX
			if ((REPEAT_MAX > REPEAT)); then
				why=$(precise_enough "$v" "${ok[@]}") || true
				why_stop="the most, $REPEAT_MAX: $why"
			fi
		fi
		ROUNDS+=("${tag:+$SWEEP_KEY=$v: }$rep ($why_stop)")
		say "${tag:+$SWEEP_KEY=$v: }$rep repetitions: $why_stop"
	done
	for e in "${ok[@]}"; do
		read -r label _ <<<"$e"
		[[ -n ${failed[$label]:-} ]] || MEASURED+=("$label")
	done
}

# probe_capacity max|min POINTS ENTRY...: each server's capacity, a
# closed-loop run of bench's arguments (no -R), then the offered rates:
# POINTS (fractions) of the highest (--curve: one scale for every server,
# so the curves share their points) or of the lowest (equal load: every
# server carries every point), rounded to 100 msg/s. meta.txt gets the
# sweep it became.
probe_capacity() {
	local pick=$1 points=$2 e label server args best
	shift 2
	: >"$OUT/capacity.txt"
	for e in "$@"; do
		read -r label server args <<<"$e"
		say "capacity: a closed-loop run of $label"
		# shellcheck disable=SC2086 # args: zero or more start options
		run_one "$label" "$server" -1 "" -- $args || true
	done
	best=$(awk -v pick="$pick" '{ for (i = 1; i <= NF; i++) if ($i ~ /^rps=/) { v = substr($i, 5) + 0
			if (!n++ || (pick == "max" ? v > m : v < m)) m = v } }
		END { print int(m) }' "$OUT/capacity.txt")
	((best > 0)) || die "capacity: a server carried no load in its closed-loop run ($OUT/capacity.txt): see its lines there"
	SWEEP_KEY=rate
	mapfile -t SWEEP_VALUES < <(awk -v c="$best" -v pts="$points" 'BEGIN {
		n = split(pts, p, " ")
		for (i = 1; i <= n; i++) { r = int(c * p[i] / 100 + 0.5) * 100; print (r < 100 ? 100 : r) } }')
	say "capacity: the $([[ $pick == max ]] && echo most || echo least), $best msg/s; offered loads: ${SWEEP_VALUES[*]} msg/s"
	{
		echo "capacity=$best"
		echo "capacity_of=the $([[ $pick == max ]] && echo highest || echo lowest) of the servers' closed-loop runs (capacity.txt)"
		echo "sweep=rate=$(IFS=,; echo "${SWEEP_VALUES[*]}")"
		((CURVE == 0)) || echo "curve=bound=$BOUND"
	} >>"$OUT/meta.txt"
}

# precise_enough SWEEP-VALUE ENTRY...: whether every server's CPU per echo
# is known within +-PRECISION % (the half-width of its median's 95%
# interval, from analysis/judge, over the runs so far); says why, either way.
# The rule looks at the precision only, never at a difference between
# servers, so stopping on it does not favour any verdict.
precise_enough() {
	local v=$1 e label files=() base='' out
	shift
	for e in "$@"; do
		read -r label _ <<<"$e"
		mapfile -t -O "${#files[@]}" files < <(run_files "$label" "$v")
		# The baseline: the first server with runs (one that did not
		# start has none).
		[[ -n $base || ${#files[@]} == 0 ]] || base=$label
	done
	((${#files[@]})) || return 1
	out=$("$JUDGE" --baseline "$base" "${files[@]}" 2>/dev/null) || return 1
	awk -v want="$PRECISION" '
	/^judge / && / figure=cpu / {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); m[kv[1]] = kv[2] }
		if (m["median"] + 0 <= 0 || m["lo"] == "-" || m["hi"] == "-") next
		w = 100 * (m["hi"] - m["lo"]) / 2 / m["median"]
		if (who == "" || w > worst) { worst = w; who = m["label"] }
	}
	END {
		if (who == "") { print "no CPU per echo to judge"; exit 1 }
		if (worst <= want) {
			printf "every CPU per echo within +-%.1f%%, the target +-%s%%\n", worst, want
			exit 0
		}
		printf "%s CPU per echo within +-%.1f%%, over the target +-%s%%\n", who, worst, want
		exit 1
	}' <<<"$out"
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
		[[ -z $COMPARE_PROXY ]] || echo "proxy=$COMPARE_PROXY: $(proxy_text)"
		echo "nofile=$(ulimit -Sn)/$(ulimit -Hn)"
		echo "somaxconn=$(sysctl -n net.core.somaxconn) (run.sh raises it to >= 4096 while a server runs)"
		echo "tcp_max_syn_backlog=$(sysctl -n net.ipv4.tcp_max_syn_backlog) (likewise)"
		echo "ip_local_port_range=$(sysctl -n net.ipv4.ip_local_port_range | tr '\t' -)"
		if two_machine; then
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

# run_files LABEL SWEEP-VALUE: its raw files, one per run.
run_files() {
	local f prefix="$OUT/$1${SWEEP_KEY:+-$SWEEP_KEY$2}-" run
	for f in "$prefix"[0-9]*.tsv{,.gz}; do
		# the run's number and nothing else: uring's glob also matches
		# uring-256buf-1.tsv, another server's run
		run=${f#"$prefix"}
		run=${run%.gz}
		[[ -e $f && ${run%.tsv} =~ ^[0-9]+$ ]] && echo "$f"
	done
}

# verdict_files SWEEP-VALUE: the runs the verdicts judge at that value:
# every measured server's, but for an open-loop run that did not carry its
# load (point_state), which is left out and listed on stderr.
verdict_files() {
	local v=$1 s f st
	for s in "${MEASURED[@]}"; do
		while read -r f; do
			if ((EQUAL)); then
				st=$(point_state "$f" "$RATE_TOLERANCE")
				if [[ $st != carried* ]]; then
					echo "${f##*/}: ${st%% *}, ${st##* } of $v msg/s" >&2
					continue
				fi
			fi
			echo "$f"
		done < <(run_files "$s" "$v")
	done
}

# summary.md: the verdicts first (analysis/judge over the per-run figures),
# then CPU per echo by kind and the pooled response times for reference.
write_summary() {
	local f=$OUT/summary.md s v base files=() line anywhere
	: >"$OUT/judged.txt"
	base=user
	[[ " ${MEASURED[*]} " == *" user "* ]] || base=${MEASURED[0]:-user}
	# Behind the proxy, every path against the plain relay.
	[[ " ${MEASURED[*]} " != *" user-proxy-copy "* ]] || base=user-proxy-copy
	{
		echo "# $WHERE comparison, ${SUM_DATE:-$(date -u +%Y-%m-%d)}"
		echo
		echo "Kernel ${SUM_KERNEL:-$(uname -r)}, ${SUM_CORES:-$(nproc)} cores. Workload ${WORKLOAD:-custom}: bench ${BENCH_ARGS[*]}"
		echo "(${SUM_CLIENT:-$(client_mode)}). Placement: ${SUM_PLACEMENT:-$(placement_text)}."
		echo "Runs per server: $(repeat_text). Interleaved (each repetition runs every"
		echo "server once, in a random order: meta.txt's order= lines), each a fresh start of the server. Times in"
		echo "microseconds; CPU per echo is microseconds of CPU time per echoed message"
		echo "in the measured window (netperf's service demand), from /proc/stat."
		echo
		for v in "${SWEEP_VALUES[@]:-}"; do
			[[ -z $SWEEP_KEY ]] || { echo "## $SWEEP_KEY = $v"; echo; }
			mapfile -t files < <(verdict_files "$v" 2>"$OUT/.left-out")
			if [[ -s $OUT/.left-out ]]; then
				echo "Left out of the verdicts: runs that did not achieve the offered $v msg/s"
				echo "within $(awk -v t="$RATE_TOLERANCE" 'BEGIN { print 100 * t }')%, or a Poisson count's own 3 sd where wider (client-limited:"
				echo "bench's CPUs were the limit; short: the server fell behind; over: a late"
				echo "client caught up):"
				echo
				sed 's/^/- /' "$OUT/.left-out"
				echo
			elif ((${#files[@]} == 0)); then
				echo "No run was recorded here (compare's output says why)."
				echo
			elif ((EQUAL)); then
				echo "Every run achieved the offered $v msg/s within $(awk -v t="$RATE_TOLERANCE" 'BEGIN { print 100 * t }')%."
				echo
			fi
			rm -f "$OUT/.left-out"
			((${#files[@]})) || continue
			echo "### Verdicts against $base"
			echo
			"$JUDGE" --baseline "$base" --markdown "${files[@]}" ||
				echo "(analysis/judge could not judge these runs: its message is in compare's output)"
			# The same verdicts as lines, for cmd/sizes.sh's table.
			"$JUDGE" --baseline "$base" "${files[@]}" 2>/dev/null |
				sed "s/^judge /judge ${SWEEP_KEY:-value}=${v:--} /" >>"$OUT/judged.txt" || true
			echo
			echo "### CPU per echo, by kind (all runs pooled)"
			echo
			echo "Microseconds per echo. Scope: split, the server's CPUs only; all, every"
			echo "CPU (the client's too); shared, CPUs server and client both ran on."
			echo
			echo "| server | server CPU | usr | sys | softirq | irq | scope | client CPU |"
			echo "|---|---|---|---|---|---|---|---|"
			for s in "${MEASURED[@]}"; do
				mapfile -t files < <(run_files "$s" "$v")
				((${#files[@]})) || continue
				line=$("$SUMMARIZE" "${files[@]}")
				echo "| $s | $(cpu_row "$line") |"
			done
			echo
			anywhere=()
			for s in "${MEASURED[@]}"; do
				[[ $(variant_get "${s%-again}" cpu_scope) != all ]] || anywhere+=("$s")
			done
			if ((${#anywhere[@]})); then
				echo "${anywhere[*]}: run on any CPU (kecho's unbound workqueue, its kthread"
				echo "mode's threads), so their CPU per echo counts every CPU, the client's"
				echo "included: not comparable with a server-only figure. The verdicts'"
				echo "machine CPU (the server's and the client's CPUs together) compares them."
				echo
			fi
			[[ $WORKLOAD != stream ]] || stream_table "$v"
			echo "### Response times (all runs pooled, for reference; the verdicts above judge)"
			echo
			echo "Server side: send -> the echo reached the client's kernel (arrival_us);"
			echo "client side: -> recv() returned it (rtt_us). Client-bound runs, where bench"
			echo "found the client was the bottleneck, are left out of the verdicts' latency"
			echo "and req/s; here they are counted."
			echo
			echo "| server | runs | client-bound | samples | failed | server p50 | server p99 | client p50 | client p99 | req/s |"
			echo "|---|---|---|---|---|---|---|---|---|---|"
			for s in "${MEASURED[@]}"; do
				mapfile -t files < <(run_files "$s" "$v")
				((${#files[@]})) || continue
				echo "| $s | ${#files[@]} | $(client_bound "${files[@]}") | $(latency_row "$("$SUMMARIZE" "${files[@]}")") |"
			done
			echo
		done
		if ((${#SKIPPED[@]})); then
			echo "Not measured here:"
			echo
			for s in "${SKIPPED[@]}"; do echo "- $s"; done
			echo
		fi
		if ((CURVE)); then
			echo "## Latency against load: the knees"
			echo
			echo "Open loop, Poisson arrivals over the connections; each server's capacity"
			echo "probed by a closed-loop run (capacity.txt), then the offered loads above as"
			echo "fractions of the highest. The knee: the highest achieved load whose p99"
			echo "(from each message's due time to the echo's arrival) stays under the bound,"
			echo "before the first point over it; a client-limited point (bench's CPUs over"
			echo "90% busy, marked +) ends a repetition's search and is never a knee."
			echo "curve.png draws it; curve.tsv holds every point (cmd/curve.sh)."
			echo
			"$ROOT/cmd/curve.sh" --bound "$BOUND" --no-plot "$OUT" ||
				echo "(cmd/curve.sh could not read these runs: its message is in compare's output)"
			echo
		fi
		local dir=${OUT#"$ROOT"/results/}
		[[ $dir != /* ]] || dir="this directory"	# the guest's /out
		echo "Raw files: \`SERVER[-SWEEP]-RUN.tsv\`; redraw with \`make plots RESULTS=$dir\`,"
		echo "judge again with \`analysis/judge --markdown FILE...\`."
	} >"$f"
}

# repeat_text: how many runs each server had, and why no more.
repeat_text() {
	local r sep=''
	((${#ROUNDS[@]})) || { echo "$REPEAT"; return; }
	for r in "${ROUNDS[@]}"; do printf '%s%s' "$sep" "$r"; sep='; '; done
	echo
}

# client_bound FILE...: how many of these runs were client-bound, by
# judge's rule (bench's bottleneck=client, or a saturated client).
client_bound() {
	"$JUDGE" --baseline "$(raw_cat "$1" | sed -n 's/^# label=//p' | head -n1)" "$@" 2>/dev/null |
		sed -n 's/^judge .* figure=rps .* excluded=\([0-9]*\) .*/\1/p' | head -n1
}

# stream_table SWEEP-VALUE: the stream's bytes a second and CPU per MiB,
# per server, from the pooled summary lines (a message is SIZE bytes, so
# these are req/s and CPU per echo rescaled, and req/s's verdicts above
# are theirs).
stream_table() {
	local s files=() size
	echo "### The stream: MiB/s echoed, and CPU per MiB (all runs pooled)"
	echo
	echo "Each connection kept its window of messages out (bench --window): a"
	echo "closed loop, each server at its own rate, so CPU per MiB is its cost at"
	echo "that rate, not a verdict between servers (the req/s verdicts above are"
	echo "the MiB/s ones: the same ratio)."
	echo
	echo "| server | runs | MiB/s | server CPU, us per MiB | client CPU, us per MiB |"
	echo "|---|---|---|---|---|"
	for s in "${MEASURED[@]}"; do
		mapfile -t files < <(run_files "$s" "$1")
		((${#files[@]})) || continue
		size=$(raw_cat "${files[0]}" | sed -n 's/^# size=//p' | head -n 1)
		"$SUMMARIZE" "${files[@]}" | awk -v s="$s" -v n="${#files[@]}" -v size="${size:-0}" '
		{
			for (i = 2; i <= NF; i++) { split($i, kv, "="); m[kv[1]] = kv[2] }
			mib = size / 1048576
			if (mib <= 0) exit
			printf "| %s | %d | %.1f | %s | %s |\n", s, n, m["rps"] * mib,
				m["server_cpu_us_per_echo"] == "nan" ? "-" : sprintf("%.0f", m["server_cpu_us_per_echo"] / mib),
				m["client_cpu_us_per_echo"] == "nan" ? "-" : sprintf("%.0f", m["client_cpu_us_per_echo"] / mib)
		}'
	done
	echo
}

# cpu_row LINE: CPU per echo by kind from a summary line.
cpu_row() {
	awk '
	function parse(s, m,   i, kv, n, f) {
		n = split(s, f, " ")
		for (i = 2; i <= n; i++) { split(f[i], kv, "="); m[kv[1]] = kv[2] }
	}
	function v(k) { return (k in m && m[k] != "nan") ? sprintf("%.2f", m[k]) : "-" }
	{
		parse($0, m)
		printf "%s | %s | %s | %s | %s | %s | %s", v("server_cpu_us_per_echo"), v("server_usr_us_per_echo"),
			v("server_sys_us_per_echo"), v("server_softirq_us_per_echo"), v("server_irq_us_per_echo"),
			("cpu_scope" in m ? m["cpu_scope"] : "-"), v("client_cpu_us_per_echo")
	}' <<<"$1"
}

# latency_row LINE: samples, failures, percentiles and req/s.
latency_row() {
	awk '
	function parse(s, m,   i, kv, n, f) {
		n = split(s, f, " ")
		for (i = 2; i <= n; i++) { split(f[i], kv, "="); m[kv[1]] = kv[2] }
	}
	function v(k) { return (k in m && m[k] != "nan" && m[k] != "") ? m[k] : "-" }
	{
		parse($0, m)
		printf "%s | %s | %s | %s | %s | %s | %s", v("samples"), v("failed"),
			v("arrival_p50_us"), v("arrival_p99_us"), v("p50_us"), v("p99_us"), v("rps")
	}' <<<"$1"
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
	in_guest "$OUT" "${VM_TIMEOUT:-5000}" env ECHOLAB_GIT="$rev" ECHOLAB_TW_MAX="$TW_MAX" \
		./run.sh compare --out /out "${GUEST_ARGS[@]}" || rc=$?
	# The guest has no gnuplot: the host draws, from the raw files alone.
	if compgen -G "$OUT/*.tsv" >/dev/null; then
		"$ROOT/cmd/plot.sh" "$OUT" | sed 's/^/  /'
	fi
	echo "results: $OUT"
	exit "$rc"
}

# --sizes: the comparison once per size, each by a compare of its own in
# OUT/size-S (its rates probed for that size), then the size table.
compare_sizes() {
	local s args=() a skip='' rc=0
	for a in "${GUEST_ARGS[@]}"; do	# the command line minus --vm, --out
		if [[ -n $skip ]]; then skip=''; continue; fi
		if [[ $a == --sizes || $a == --seed ]]; then skip=1; continue; fi
		args+=("$a")
	done
	{
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "sizes=$(IFS=,; echo "${SIZES[*]}")"
		echo "order_seed=$ORDER_SEED"
		echo "args=${args[*]}"
	} >"$OUT/meta.txt"
	# Each size's compare runs in the background, so that a SIGINT or
	# SIGTERM sent to this process alone (kill PID, not Ctrl-C to the
	# group) reaches it too (sizes_interrupted): in the foreground it went
	# on measuring, this one's trap deferred until it ended.
	SIZE_CHILD=
	trap 'sizes_interrupted' INT TERM
	for s in "${SIZES[@]}"; do
		say "size $s bytes: a comparison of its own in $OUT/size-$s"
		"$0" "${args[@]}" --size "$s" --seed "$ORDER_SEED" --out "$OUT/size-$s" &
		SIZE_CHILD=$!
		wait "$SIZE_CHILD" || rc=$?
		SIZE_CHILD=
		((rc != 130)) || { echo "results: $OUT"; exit 130; }
		((rc == 0)) || die "size $s: the comparison failed (exit $rc); the sizes before it are in $OUT"
	done
	trap - INT TERM
	"$ROOT/cmd/sizes.sh" "$OUT" >"$OUT/summary.md"
	cat "$OUT/summary.md"
	echo "results: $OUT"
	exit 0
}

# A signal during --sizes: the size being measured stops as compare does
# when interrupted; the sizes done stay in OUT.
# The child's own trap runs once its foreground command, bench, has
# ended, so bench is stopped too (it writes what it has); a background
# child starts with SIGINT ignored, so it is sent TERM.
sizes_interrupted() {
	local p
	trap - INT TERM
	if [[ -n $SIZE_CHILD ]]; then
		kill -TERM "$SIZE_CHILD" 2>/dev/null
		for p in $(descendants "$SIZE_CHILD"); do
			[[ $(cat "/proc/$p/comm" 2>/dev/null) != bench ]] ||
				kill -TERM "$p" 2>/dev/null
		done
		wait "$SIZE_CHILD"
	fi
	echo "results: $OUT"
	exit 130
}

# --summarize DIR: summary.md again from DIR's raw files and meta.txt
# alone (after cmd/thin.sh, or a newer judge); nothing is run. A --sizes
# directory: each size's comparison again, then the size table.
compare_resummarize() {
	local dir=${1:-} key f label line d
	[[ -n $dir && -f $dir/meta.txt ]] || usage_error "--summarize needs a comparison's directory (one with meta.txt)"
	if grep -q '^sizes=' "$dir/meta.txt"; then
		for d in "${dir%/}"/size-*/; do
			(compare_resummarize "${d%/}") || return 1
		done
		"$ROOT/cmd/sizes.sh" "${dir%/}" >"${dir%/}/summary.md" || return 1
		echo "summary: ${dir%/}/summary.md (the size table)"
		return
	fi
	OUT=${dir%/}
	meta_of() { sed -n "s/^$1=//p" "$OUT/meta.txt" | head -n1; }
	WHERE=$(meta_of place)
	SUM_KERNEL=$(meta_of kernel)
	SUM_CORES=$(meta_of cores)
	SUM_DATE=$(meta_of date)
	SUM_DATE=${SUM_DATE:0:10}
	SUM_CLIENT=$(meta_of client)
	SUM_PLACEMENT=$(meta_of placement)
	SUM_PLACEMENT=${SUM_PLACEMENT#*: }
	WORKLOAD=$(meta_of workload)
	[[ $WORKLOAD != load* ]] || EQUAL=1
	read -ra BENCH_ARGS <<<"$(meta_of bench_args)"
	REPEAT=$(meta_of repeat)
	REPEAT=${REPEAT%% *}
	mapfile -t ROUNDS < <(sed -n 's/^runs=//p' "$OUT/meta.txt")
	key=$(meta_of curve)
	if [[ -n $key ]]; then
		CURVE=1
		BOUND=${key#bound=}
	fi
	key=$(meta_of sweep)
	if [[ -n $key ]]; then
		SWEEP_KEY=${key%%=*}
		IFS=, read -ra SWEEP_VALUES <<<"${key#*=}"
	fi
	# The servers in their declared order (a -again label after its own).
	MEASURED=()
	while read -r _ label; do MEASURED+=("$label"); done < <(
		for f in "$OUT"/*.tsv "$OUT"/*.tsv.gz; do
			[[ -e $f ]] || continue
			raw_cat "$f" | sed -n 's/^# label=//p' | head -n1
		done | sort -u | while read -r label; do
			echo "$(variant_get "${label%-again}" order)${label#"${label%-again}"} $label"
		done | sort)
	SKIPPED=()
	[[ ! -f $OUT/summary.md ]] ||
		mapfile -t SKIPPED < <(awk '/^Not measured here:/ { on = 1; next }
			on && /^- / { print substr($0, 3); next } on && /^[^-]/ { on = 0 }' "$OUT/summary.md")
	write_summary
	echo "summary: $OUT/summary.md"
}

main() {
	[[ -x $BENCH && -x $JUDGE && -x $SUMMARIZE ]] ||
		make -C "$ROOT" --no-print-directory bench analysis >/dev/null
	if [[ ${1:-} == --summarize ]]; then
		compare_resummarize "${2:-}"
		return
	fi
	compare_parse_args "$@"
	need_root compare
	WHERE=${ECHOLAB_WHERE:-native}
	((VM)) || resolve_cpus	# the guest resolves its own
	# The guest's kernel in the name when one was picked (run.sh --kernel).
	local where_to=$PLACEMENT
	((VM)) && where_to=vm
	OUT=${OUT:-$ROOT/results/$(date +%Y%m%d-%H%M%S)-$where_to${ECHOLAB_KERNEL:+-$ECHOLAB_KERNEL}}
	((VM == 0)) || compare_in_guest
	mkdir -p "$OUT"
	((${#SIZES[@]} == 0)) || compare_sizes
	: >"$OUT/summaries.txt"
	trap compare_interrupted INT TERM
	trap compare_cleanup EXIT	# an error must not leave a server or a namespace
	write_meta
	say "placement: $(placement_text)"

	MEASURED=()
	SKIPPED=()
	measure_all
	trap - INT TERM
	compare_cleanup
	local r
	for r in "${ROUNDS[@]}"; do echo "runs=$r" >>"$OUT/meta.txt"; done

	write_summary
	# In the guest (no gnuplot) the host draws once the guest is done.
	if ((${#MEASURED[@]})) && [[ $WHERE != vm ]]; then
		"$ROOT/cmd/plot.sh" "$OUT" | sed 's/^/  /'
	fi
	cat "$OUT/summary.md"
	[[ $WHERE == vm ]] || echo "results: $OUT"	# the host says it, after plotting
}

main "$@"
