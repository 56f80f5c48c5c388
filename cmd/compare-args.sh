# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the settings are for cmd/compare-*.sh
# cmd/compare-args.sh - compare's command line: its usage text and its
# options, read into the settings below. Sourced by cmd/compare.sh only;
# cmd/compare-plan.sh then turns them into what will run.

# Set by the command line.
PORT=${ECHOLAB_PORT:-$DEFAULT_PORT}	# run.sh bench --port sets it
PLACEMENT=two-machine	# or loopback, or server-bound (cmd/compare-bound.sh)
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
NETEM=		# --netem: tc netem's parameters on both ends of the veth
# --curve: the offered loads, as fractions of the highest capacity probed.
CURVE_POINTS="0.1 0.3 0.5 0.65 0.8 0.9 1.0 1.15"
CURVE_ARGS="-c 1000 -d 3 --warmup 1"	# its bench arguments, by default

# compare_usage: the --help text, a function a section.
compare_usage() {
	compare_usage_synopsis
	compare_usage_placement
	compare_usage_workload
	compare_usage_sweeps
}

compare_usage_synopsis() {
	cat <<EOF
Usage: sudo ./run.sh compare [--loopback | --vm | --server-bound] [--netem SPEC] [--bypass | --proxy PATH,...]
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

EOF
}

compare_usage_placement() {
	cat <<EOF
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
  --server-bound the server in the qemu guest, on the server's CPUs (every
                 qemu thread there), bench natively on the others in a
                 namespace of its own, over a tap and virtio-net: the
                 study's two VMs, the server the bottleneck (under TCG it
                 does a tenth of what it does natively). The server's CPU
                 time is the host's CPUs'. Times emulated: ratios only
  --netem SPEC   a lossy, slow link: tc netem SPEC ('loss 1%', 'delay 10ms
                 2ms') on both ends of the veth. The host kernel has no
                 sch_netem: give --vm too
  --bypass       the user server alone, without and with the sk_msg bypass
                 (sockredir/sockredir), bench in the bypass's cgroup; the
                 bypass joins two sockets of one stack: implies --loopback
  --proxy P,..   the user server directly and behind the proxy on each
                 path named (copy, splice, uring, sockmap; all: these four;
                 skmsg: copy's loop, both legs joined by the sk_msg bypass,
                 which implies --loopback; haproxy, nginx: the relays
                 people deploy, when named), verdicts against copy.
                 The proxy takes the server's CPUs
                 and the root namespace; the backend runs beside bench, in
                 its namespace and on its CPUs (with --loopback: on
                 bench's CPUs, over 127.0.0.1), so that the proxy's CPU
                 per echo is the relay's cost

EOF
}

# What is measured: the workload, its rates and sizes, the repetitions.
compare_usage_workload() {
	cat <<EOF
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
                 BENCH-ARGS with -c; with no --workload and BENCH-ARGS
                 without -c or -t, load, BENCH-ARGS after its own:
                 --rates 20000 -d 10). Default: each server's capacity from
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
EOF
}

# What is measured, continued: sweeps, --curve, where it goes.
compare_usage_sweeps() {
	cat <<EOF
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
                 (after its own for load, load1000 and stream, and for
                 --rates without -c or -t)

The last line printed is 'results: DIR'.
EOF
}

# compare_parse_args ARGS...: the command line into the settings above,
# each checked, then the plan made of them (cmd/compare-plan.sh); bad
# usage ends here, before anything runs.
compare_parse_args() {
	compare_guest_args "$@"
	while (($#)); do
		compare_option "$@"
		shift "$ARG_TAKES"
	done
	compare_check_args
	plan_workload
	[[ -n $ORDER_SEED ]] || ORDER_SEED=$(((RANDOM * 32768 + RANDOM) % 1000000000))
	plan >/dev/null	# --servers: unknown or misplaced variants end here
	# bench judges its own flags (--help last: every flag is parsed first).
	local err
	err=$("$BENCH" "${BENCH_ARGS[@]}" --help 2>&1 >/dev/null) ||
		usage_error "bad bench arguments '${BENCH_ARGS[*]}': ${err%%$'\n'*}"
}

# compare_guest_args ARGS...: GUEST_ARGS, the command line minus --vm and
# --out DIR, for the compare in the guest.
compare_guest_args() {
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
}

# compare_option ARGS...: the first of ARGS read; ARG_TAKES says how many
# words it took (an option's value is the second). What compare does not
# know is bench's (BENCH-ARGS).
ARG_TAKES=1
compare_option() {
	ARG_TAKES=1
	case $1 in
	-h | --help)
		compare_usage
		exit 0
		;;
	--netns) ;;	# the default placement; kept for old command lines
	--loopback) PLACEMENT=loopback ;;
	--server-bound) PLACEMENT=server-bound ;;
	--vm) VM=1 ;;
	--bypass) COMPARE_BYPASS=1 ;;
	--curve) CURVE=1 ;;
	--netem | --proxy | --points | --bound)
		compare_place_option "$1" "${2:-}"
		ARG_TAKES=2
		;;
	--workload | --servers | --repeat | --precision | --rates)
		compare_workload_option "$1" "${2:-}"
		ARG_TAKES=2
		;;
	--sizes | --size | --seed | --sweep | --out | --cpus)
		compare_sweep_option "$1" "${2:-}"
		ARG_TAKES=2
		;;
	-p | --port | -H | --host | -o | --output | -l | --label | --server-cpus)
		usage_error "$1 is set by compare itself"
		;;
	*) BENCH_ARGS+=("$1") ;;
	esac
}

# compare_place_option OPTION VALUE: where and through what it runs.
compare_place_option() {
	local a
	case $1 in
	--netem)
		[[ ${2:-} =~ ^[a-z] ]] || usage_error "--netem needs tc netem's parameters, e.g. --netem 'loss 1%'"
		NETEM=$2
		;;
	--proxy)
		[[ ${2:-} =~ ^[a-z]+(,[a-z]+)*$ ]] ||
			usage_error "--proxy takes the proxy's paths, e.g. copy,splice,sockmap, or all"
		COMPARE_PROXY=$2
		# all: the proxy's own paths that run over the veth (HAProxy and
		# nginx, and skmsg, which needs one stack, only when named).
		[[ $2 != all ]] || COMPARE_PROXY=$(proxy_variants | while read -r a _ f p; do
			[[ $f != --proxy || $(variant_get "$a" one_stack) == 1 ]] || echo "$p"
		done | paste -sd, -)
		for a in ${COMPARE_PROXY//,/ }; do front_value proxy "$a"; done
		;;
	--points)
		if ! [[ ${2:-} =~ ^[0-9]*\.?[0-9]+(,[0-9]*\.?[0-9]+)*$ ]] ||
			! awk -v l="$2" 'BEGIN { n = split(l, p, ","); for (i = 1; i <= n; i++) if (p[i] <= 0 || p[i] > 10) exit 1 }'; then
			usage_error "--points takes fractions of the capacity, e.g. 0.1,0.5,0.9,1.2"
		fi
		CURVE_POINTS=${2//,/ }
		;;
	--bound)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--bound needs the p99 bound in microseconds, e.g. 1000"
		BOUND=$2
		;;
	esac
}

# compare_workload_option OPTION VALUE: what each run is, and how many.
compare_workload_option() {
	case $1 in
	--workload)
		[[ -n ${WORKLOADS[${2:-none}]:-} ]] ||
			usage_error "--workload: '${2:-}' is none of ${!WORKLOADS[*]}"
		WORKLOAD=$2
		;;
	--servers)
		[[ ${2:-} =~ ^[a-z0-9-]+(,[a-z0-9-]+)*$ ]] ||
			usage_error "--servers takes variant labels, e.g. user,uring (run.sh list)"
		SERVER_LIST=$2
		;;
	--repeat)
		[[ ${2:-} =~ ^([1-9][0-9]*)(-([1-9][0-9]*))?$ ]] ||
			usage_error "--repeat needs a positive number N, or a range MIN-MAX (5-15)"
		REPEAT=${BASH_REMATCH[1]}
		REPEAT_MAX=${BASH_REMATCH[3]:-$REPEAT}
		REPEAT_SET=1
		((REPEAT_MAX >= REPEAT)) || usage_error "--repeat $2: MAX is below MIN"
		;;
	--precision)
		if ! [[ ${2:-} =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
			! awk -v p="$2" 'BEGIN { exit !(p > 0 && p < 100) }'; then
			usage_error "--precision needs a percentage in (0, 100), e.g. 2.5"
		fi
		PRECISION=$2
		;;
	--rates)
		[[ ${2:-} =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
			usage_error "--rates takes offered loads in msg/s, e.g. 10000,20000,40000"
		SWEEP_KEY=rate
		IFS=, read -ra SWEEP_VALUES <<<"$2"
		RATES_SET=1
		;;
	esac
}

# compare_sweep_option OPTION VALUE: sizes, sweeps, the order's seed, the
# results directory and the CPUs.
compare_sweep_option() {
	case $1 in
	--sizes)
		[[ ${2:-} =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
			usage_error "--sizes takes message sizes in bytes, e.g. 64,1024,16384,65536"
		IFS=, read -ra SIZES <<<"$2"
		;;
	--size)	# one of --sizes' comparisons
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--size takes a message size in bytes"
		SIZE=$2
		;;
	--seed)
		[[ ${2:-} =~ ^[0-9]{1,9}$ ]] || usage_error "--seed takes a number, 0 to 999999999"
		ORDER_SEED=$2
		;;
	--sweep)
		[[ ${2:-} =~ ^(threads|connections|size|rate)=[0-9]+(,[0-9]+)*$ ]] ||
			usage_error "--sweep takes threads=N,N,..., connections=N,N,..., rate=N,N,... or size=N,N,..."
		[[ -z $RATES_SET ]] || usage_error "--sweep and --rates: give one"
		SWEEP_KEY=${2%%=*}
		IFS=, read -ra SWEEP_VALUES <<<"${2#*=}"
		;;
	--out)
		[[ -n ${2:-} ]] || usage_error "--out needs a directory"
		OUT=$2
		;;
	--cpus)
		[[ -n ${2:-} ]] || usage_error "--cpus needs auto, none or a CPU list"
		COMPARE_CPUS=$2
		;;
	esac
}

# compare_check_args: the options that do not go together, and what one
# implies of another (--bypass: one stack; --curve: its own workload).
compare_check_args() {
	if [[ $PLACEMENT == server-bound ]]; then
		((VM == 0)) || usage_error "--server-bound already runs the server in the guest, bench here: drop --vm"
		[[ -z $NETEM ]] || usage_error "--server-bound and --netem: measure one at a time"
		((COMPARE_BYPASS == 0)) ||
			usage_error "--server-bound and --bypass: the bypass joins two sockets of one stack; the guest's and bench's are two"
		[[ -z $COMPARE_PROXY ]] || usage_error "--server-bound and --proxy: measure one at a time"
	fi
	if [[ -n $COMPARE_PROXY ]]; then
		((COMPARE_BYPASS == 0)) || usage_error "--proxy and --bypass: measure one at a time"
		((CURVE == 0)) || usage_error "--curve and --proxy: measure one at a time"
		[[ -z $SERVER_LIST ]] || usage_error "--proxy picks the variants itself: drop --servers"
		if [[ ,$COMPARE_PROXY, == *,skmsg,* ]]; then
			[[ -z $NETEM ]] ||
				usage_error "--proxy skmsg joins sockets of one network stack; it has nothing to bypass over a veth (drop --netem)"
			PLACEMENT=loopback
		fi
	fi
	if ((COMPARE_BYPASS)); then
		[[ -z $NETEM ]] ||
			usage_error "--bypass joins two sockets of one network stack; it has nothing to bypass over a veth (drop --netem)"
		PLACEMENT=loopback
	fi
	[[ -z $NETEM || $PLACEMENT == two-machine ]] ||
		usage_error "--netem shapes the veth between two namespaces; it does not go with --loopback"
	if ((CURVE)); then
		compare_check_curve
	fi
}

# compare_check_curve: --curve's own workload, bench arguments and
# repetitions.
compare_check_curve() {
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
}
