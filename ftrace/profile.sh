#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile.sh - where the server's CPU goes, per echo, from a sampling profile.
#
#   sudo ./ftrace/profile.sh [--out DIR] [--seconds N] [--bench ARGS] [SERVER|VARIANT...]
#   sudo ./ftrace/profile.sh --running [--out DIR] [--seconds N] [--bench ARGS]
#   sudo ./ftrace/profile.sh --vm [--out DIR] [--seconds N] [--bench ARGS] [SERVER|VARIANT...]
#
# For each SERVER (default: user and ebpf), or VARIANT of run.sh list
# (user-proxy-sockmap: the proxy in front of user, the proxy's CPUs
# sampled), it runs one measured compare run
# in the default placement (two machines on one box: the server on CPU 0,
# bench in its own namespace on CPU 1; --bench ARGS, default '-t 50': its
# load, e.g. '-c 300' for the event engine) and, in the middle of it,
# samples the server's CPUs with perf (cpu-clock, 997 Hz, call graphs) for
# N seconds (default 6). With --running it profiles the server run.sh has
# running instead (on the CPUs run.sh gave it), under a bench run of its
# own on the others; with none running it says so and exits 1. With --vm
# the same runs happen in the qemu guest (6.1, or $ECHOLAB_KERNEL), perf
# and its libraries copied in, the results back in DIR: there kecho's
# modes are profiled too (default there: user, user-splice, uring, ebpf
# and kecho's three modes, from one boot). A variant whose work runs on
# every CPU (run.sh list: cpu_scope=all, as compare counts kecho-unbound's
# and kecho-kthread's CPU) is sampled on every CPU, bench's included: its
# kinds are the whole machine's, and the process rows say how much of it
# was bench ("client").
#
# Each sample is 1/997 s of one CPU, busy or idle, so a share of the
# samples is a share of those CPUs' time; the run's echo rate turns it into
# microseconds per echo. Printed and written to DIR/profile.tsv (default:
# the newest results dir):
#   - kinds, exclusive: each busy sample is one kind of work (TCP receive,
#     TCP send, system-call entry and exit with the socket layer, epoll,
#     io_uring, sockmap/psock and kworkers, the scheduler and wake-ups,
#     copies, the server's own code: its user-space code or kecho's
#     module, interrupts taken and IPIs sent, other), the first its call
#     chain names from the leaf up
#     (ftrace/kinds.awk); the kinds sum to 100% of the busy samples;
#   - parts, the kinds in three and the rest (sum 100% of the busy
#     samples): handoff (interrupts and IPIs: how the packets reach
#     and leave the CPU), tcp (TCP receive and send, and the copies in
#     them), own-path (what the server's design chooses: system calls,
#     epoll, io_uring, sockmap/psock and kworkers, the scheduler's
#     wake-ups and sleeps, its own code), other;
#   - by process, exclusive (the shares sum to 100%): the server's own
#     threads (kecho's: its kthreads, kecho/N and kecho-listen), kworkers,
#     ksoftirqd, idle (swapper: the idle loop and the interrupts taken in
#     it), client (bench: only where every CPU is sampled), other;
#   - by kernel path, inclusive (a sample counts for every function on its
#     stack, so these overlap): system calls, the psock backlog, receive
#     softirq, the RPS IPI sends, TCP send and receive, the idle loop.
# DIR/SERVER-profile.txt keeps perf's report (children, by symbol), and
# DIR/SERVER-flame.svg the flame graph (inferno, which `make deps`
# installs). A profile perf says lost samples of, or that covers under 90%
# of the expected samples, is refused: no figure, the reason, exit 1.
# Samples taken with interrupts off land on the instruction that turns them
# back on (cpu-clock is a timer): handle_softirqs' own share is such time.
# PERF names the perf command (default: perf).
set -euo pipefail
# shellcheck source=lib/tracefs.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tracefs.sh"

usage() {
	sed -n '/^#   sudo/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"
}

PERF=${PERF:-perf}
FREQ=997
# "label function": the inclusive paths reported, in this order.
PATHS='syscalls do_syscall_64
psock-backlog sk_psock_backlog
net-rx-softirq net_rx_action
rps-ipi-send net_rps_send_ipi
tcp-send tcp_sendmsg_locked
tcp-receive tcp_v4_rcv
epoll-wait do_epoll_wait
io-uring-enter __do_sys_io_uring_enter
idle-loop do_idle'

# share REPORT SYMBOL: the children share (%) of SYMBOL in a perf report
# (--children --sort sym -g none), 0 when it is not there.
share() {
	awk -v sym="$2" '$3 ~ /^\[/ && $4 == sym { sub(/%/, "", $1); print $1; found = 1; exit }
		END { if (!found) print 0 }' "$1"
}

# record_compare SERVER: one compare run of SERVER, sampled in its steady
# middle; sets DATA (perf's file), RAW (the run's raw file) and CPUS.
record_compare() {
	local s=$1 run f
	run=$tmp/$s
	# the CPUs compare gives the server: run.sh --cpus auto
	CPUS=$(parse_cpus auto)
	[[ -n $CPUS ]] || die "profile.sh needs 2 CPUs or more: one for the server, one for bench"
	# or every CPU, where compare counts every CPU as the server's
	[[ $(variant_get "$s" cpu_scope) != all ]] || CPUS=0-$(($(nproc) - 1))
	# shellcheck disable=SC2086 # LOAD: bench's arguments, split
	"$ECHOLAB_ROOT/run.sh" compare --servers "$s" --repeat 1 $LOAD -d $((SECONDS_SAMPLED + 10)) \
		--warmup 1 --out "$run" >"$tmp/$s.log" 2>&1 &
	CPID=$!
	# The measured run's raw file appears when its bench starts (the
	# comparison's unrecorded warm-up writes none); 3 s on: steady state.
	for ((f = 0; f < 600; f++)); do
		[[ -e $run/$s-1.tsv ]] && break
		kill -0 "$CPID" 2>/dev/null || break
		sleep 0.2
	done
	[[ -e $run/$s-1.tsv ]] || { wait "$CPID" || true; die "$s: compare made no run to profile: $(tail -n 3 "$tmp/$s.log")"; }
	sleep 3
	DATA=$out/$s.perf.data
	sample "$s"
	wait "$CPID" || die "$s: the compare run failed: $(tail -n 3 "$tmp/$s.log")"
	CPID=
	RAW=$run/$s-1.tsv
}

# record_running: the server run.sh has running, sampled on its CPUs under
# a bench run of ours on the others (bench's default placement); sets
# SERVER, DATA, RAW and CPUS.
record_running() {
	SERVER=$(state server)
	[[ -n $SERVER ]] ||
		die "no server is running: start one first ('sudo ./run.sh user'), or name the servers to profile (profile.sh starts each itself)"
	_lc_netns=$(state netns)
	server_hook "$SERVER" running ||
		die "$SERVER is not running any more (crashed or killed): 'sudo ./run.sh stop' cleans up; then start it again"
	CPUS=$(state cpus)
	[[ -n $CPUS ]] ||
		die "$SERVER runs on every CPU (run.sh --cpus all): its samples cannot be told from bench's; start it with its own CPUs ('sudo ./run.sh $SERVER --cpus 0')"
	[[ -z $(state netns) ]] ||
		die "$SERVER runs in a network namespace of its own: profile it by name instead (profile.sh $SERVER)"
	RAW=$tmp/running.tsv
	# shellcheck disable=SC2086 # LOAD: bench's arguments, split
	"$BENCH" -q -p "$(state port)" -H "$(reach_addr "$(state addr)")" $LOAD -d $((SECONDS_SAMPLED + 6)) \
		--warmup 1 -o "$RAW" >"$tmp/bench.log" 2>&1 &
	CPID=$!
	sleep 4
	kill -0 "$CPID" 2>/dev/null || { wait "$CPID" || true; die "bench against $SERVER ended early: $(tail -n 3 "$tmp/bench.log")"; }
	DATA=$out/$SERVER.perf.data
	sample "$SERVER"
	wait "$CPID" || die "bench against $SERVER failed: $(tail -n 3 "$tmp/bench.log")"
	CPID=
	server_hook "$SERVER" running ||
		die "refused: $SERVER stopped during its profile: the samples are not of it serving"
}

# sample SERVER: perf record on CPUS into DATA for SECONDS_SAMPLED seconds.
sample() {
	"$PERF" record -q -C "$CPUS" -g -F "$FREQ" -o "$DATA" -- sleep "$SECONDS_SAMPLED" 2>"$tmp/$1.perf.err" ||
		{ wait "$CPID" || true; die "$1: perf record failed: $(tail -n 2 "$tmp/$1.perf.err")"; }
}

# named_threads: perf report --sort pid's rows ("PCT TID:COMM") as "PCT
# COMM", a thread perf could not name named from /proc. A kthread born
# while perf records has no COMM event (the kernel names it in the clone
# itself: on 6.18, a jbd2 thread mounted during a recording read
# kthreadd), so perf calls it after its parent, kthreadd, or ":TID" where
# the fork was on a CPU not sampled. A kworker that a busy pool adds
# mid-run, which then runs most work items (a pool wakes its newest idle
# worker first), was so counted as other. A kworker lives on for minutes
# after its last work item: /proc still has it here.
named_threads() {
	awk '{
		pct = $1
		t = $0
		sub(/^[ \t]*[^ \t]+[ \t]+/, "", t)
		sub(/[ \t]+$/, "", t)
		tid = t
		sub(/:.*/, "", tid)
		comm = substr(t, length(tid) + 2)
		if (comm == "kthreadd" || comm == ":" tid) {
			f = "/proc/" tid "/comm"
			if ((getline c <f) > 0) comm = c
			close(f)
		}
		print pct "\t" comm
	}'
}

# own_binary SERVER|VARIANT: the program whose code is the "server's own"
# on the CPUs sampled: the server's, or its relay's when a front relays
# (user-proxy-sockmap: the proxy, on the server's CPUs, its backend not).
own_binary() {
	local f
	if is_server "$1"; then
		server_binary "$1"
		return
	fi
	for f in $(variant_get "$1" args); do
		f=$(front_of_flag "$f") || continue
		[[ -z $(server_get "$f" relay) ]] || { server_binary "$f"; return; }
	done
	server_binary "$(variant_get "$1" server)"
}

# analyse SERVER: DATA and RAW's figures, a row each on stdout, the
# reports and the flame graph into out.
analyse() {
	local s=$1 rate ncpus expected samples lost label sym pct bin
	ncpus=$(cpu_list_count "$CPUS")
	bin=$(basename "$(own_binary "$s")")
	rate=$(awk -F= '$1 == "# window_s" { w = $2 } $1 == "# cpu_echoes" { e = $2 }
		END { if (w > 0 && e > 0) printf "%.3f", e / w }' "$RAW")
	[[ -n $rate ]] || die "$s: its raw file has no window_s or cpu_echoes: no rate to divide by"
	# one pass over the data (each perf run reads every kernel symbol: in
	# the guest, under TCG, seconds)
	"$PERF" report -i "$DATA" --stats >"$tmp/$s.stats" 2>/dev/null || true
	lost=$(awk '/LOST/ { n += $NF } END { print n + 0 }' "$tmp/$s.stats")
	((lost == 0)) || die "refused: perf lost $lost events of $s's profile"
	samples=$(awk '/SAMPLE events:/ { print $3; exit }' "$tmp/$s.stats")
	expected=$((SECONDS_SAMPLED * FREQ * ncpus))
	((${samples:-0} * 10 >= expected * 9)) ||
		die "refused: $s's profile holds ${samples:-0} samples of the $expected expected (${SECONDS_SAMPLED} s x $FREQ Hz x $ncpus CPUs): its shares would not be of the CPUs' time"
	"$PERF" report -i "$DATA" --children --sort sym --stdio -g none 2>/dev/null | grep '%' >"$out/$s-profile.txt"
	"$PERF" report -i "$DATA" --no-children --sort pid --stdio -g none 2>/dev/null | grep '%' | named_threads >"$tmp/$s.comm"
	"$PERF" script -i "$DATA" -F comm,ip,sym,dso 2>/dev/null |
		awk -v server="$bin" -f "$ECHOLAB_ROOT/ftrace/kinds.awk" >"$tmp/$s.kinds"
	flame "$s"
	# kinds: shares of the busy samples (sum 100%); us per echo from the
	# share of all samples: share x CPUs x 1e6 / echoes a second
	awk -v s="$s" -v k="$ncpus" -v rate="$rate" '
		{ n[$1] = $2; if ($1 != "idle" && $1 != "total") order[++m] = $1 }
		END {
			busy = n["total"] - n["idle"]
			if (busy <= 0) exit 1
			for (i = 1; i <= m; i++)
				printf "%s\tkind\t%s\t%.1f\t%.3f\n", s, order[i], 100 * n[order[i]] / busy,
					n[order[i]] / n["total"] * k * 1e6 / rate
			printf "%s\tbusy\tbusy (of all samples; the kinds split it)\t%.1f\t%.3f\n", s,
				100 * busy / n["total"], busy / n["total"] * k * 1e6 / rate
			# parts: the kinds in three, and other
			np = split("handoff tcp own-path other", part, " ")
			in_part["interrupts"] = "handoff"
			in_part["tcp-receive"] = in_part["tcp-send"] = in_part["copies"] = "tcp"
			in_part["syscall"] = in_part["epoll"] = in_part["io_uring"] = "own-path"
			in_part["sockmap-kworkers"] = in_part["server-code"] = in_part["scheduler"] = "own-path"
			for (i = 1; i <= m; i++)
				p[order[i] in in_part ? in_part[order[i]] : "other"] += n[order[i]]
			for (i = 1; i <= np; i++)
				printf "%s\tpart\t%s\t%.1f\t%.3f\n", s, part[i], 100 * p[part[i]] / busy,
					p[part[i]] / n["total"] * k * 1e6 / rate
		}' "$tmp/$s.kinds" || die "refused: $s's CPUs were idle in every sample: no kinds to split"
	# us per echo = share x CPUs x 1e6 / echoes a second. A module's own
	# threads are its kthreads (kecho.ko: kecho/N, kecho-listen).
	awk -v s="$s" -v bin="$bin" -v k="$ncpus" -v rate="$rate" '
		function row(kind, label, pct) {
			printf "%s\t%s\t%s\t%.1f\t%.3f\n", s, kind, label, pct, pct / 100 * k * 1e6 / rate
		}
		BEGIN { module = sub(/\.ko$/, "", bin) }
		{
			pct = $1; sub(/%/, "", pct); comm = $2
			if (module ? comm ~ ("^" bin "([-/]|$)") : substr(bin, 1, 15) == substr(comm, 1, 15)) g = "server"
			else if (comm ~ /^kworker/) g = "kworkers"
			else if (comm ~ /^ksoftirqd/) g = "ksoftirqd"
			else if (comm == "swapper") g = "idle"
			else if (comm == "bench") g = "client"
			else g = "other"
			by[g] += pct
		}
		END {
			n = split("server kworkers ksoftirqd idle client other", order, " ")
			for (i = 1; i <= n; i++)
				row("process", order[i], by[order[i]] + 0)
		}' "$tmp/$s.comm"
	while read -r label sym; do
		pct=$(share "$out/$s-profile.txt" "$sym")
		awk -v s="$s" -v l="$label" -v sym="$sym" -v p="$pct" -v k="$ncpus" -v rate="$rate" \
			'BEGIN { printf "%s\tpath\t%s (%s)\t%.1f\t%.3f\n", s, l, sym, p, p / 100 * k * 1e6 / rate }'
	done <<<"$PATHS"
	echo "# $s: $samples samples, $rate echoes/s, CPUs $CPUS; the run's server CPU per echo $(sed -n 's/^# server_cpu_us_per_echo=//p' "$RAW") us, NET_RX softirqs per echo by CPU $(awk -F= '$1 == "# cpu_echoes" { e = $2 } $1 == "# softirq_net_rx" { v = $2 }
		END { n = split(v, p, ","); for (i = 1; i <= n; i++) { split(p[i], c, ":"); printf "%s%s:%.2f", (i > 1 ? "," : ""), c[1], c[2] / e } }' "$RAW")"
}

# flame SERVER: DATA's flame graph, DIR/SERVER-flame.svg (inferno's).
flame() {
	local svg=$out/$1-flame.svg
	if ! command -v inferno-collapse-perf >/dev/null || ! command -v inferno-flamegraph >/dev/null; then
		warn "no flame graph for $1: inferno is not installed ('sudo make deps' installs it, or 'cargo install inferno')"
		return 0
	fi
	"$PERF" script -i "$DATA" 2>/dev/null | inferno-collapse-perf --all 2>/dev/null |
		inferno-flamegraph --title "$1: its CPUs ($CPUS), $SECONDS_SAMPLED s at $FREQ Hz, $(uname -r)" \
			--countname samples >"$svg" 2>"$tmp/$1.flame.err" ||
		{ rm -f "$svg"; warn "no flame graph for $1: inferno failed: $(tail -n 2 "$tmp/$1.flame.err")"; }
}

# On any exit: a comparison still running is stopped (it cleans up after
# itself on SIGTERM), the scratch files and perf's data files go.
CPID=
tmp=
cleanup() {
	if [[ -n $CPID ]] && kill -0 "$CPID" 2>/dev/null; then
		kill -TERM "$CPID" 2>/dev/null || true
		wait "$CPID" 2>/dev/null || true
	fi
	[[ -z $tmp ]] || rm -rf "$tmp"
	[[ -z ${out:-} ]] || rm -f "$out"/*.perf.data	# large, and bound to this kernel's symbols
}

main() {
	local s servers=() vm=0 args=("$@")
	out=
	RUNNING=0
	SECONDS_SAMPLED=6
	LOAD="-t 50"
	profile_options "$@"
	profile_servers
	need_root "${0##*/}"
	need_perf
	[[ -n $out ]] || out=$(results_dir)
	mkdir -p "$out"
	if ((vm)); then
		# perf, and inferno for the flame graphs, go into the guest with
		# their libraries. A boot, then per server its run and perf's
		# reports, which under TCG take about 20 s a second sampled (2.5
		# minutes a server at 6 s, 2026-11-27)
		guest_tools "$PERF" inferno-collapse-perf inferno-flamegraph
		VM_TIMEOUT=${VM_TIMEOUT:-$((120 + ${#servers[@]} * (90 + 30 * SECONDS_SAMPLED)))} \
			rerun_in_guest "$out" "${args[@]}"
		exit
	fi
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	make_tmp
	local scope_all=''
	for s in "${servers[@]}"; do
		[[ $(variant_get "$s" cpu_scope) != all ]] || scope_all+="${scope_all:+ }$s"
	done
	{
		echo "# kernel=$(uname -r) where=${ECHOLAB_WHERE:-native} placement=$( ((RUNNING)) && echo "run.sh's,loopback" || echo two-machine) bench=$LOAD sampled_s=$SECONDS_SAMPLED freq_hz=$FREQ method=perf-record-cpu-clock"
		echo "# kind: exclusive shares of the busy samples (sum 100%; busy: of all samples); part: the kinds grouped (handoff: interrupts; tcp: tcp-receive, tcp-send, copies; own-path: syscall, epoll, io_uring, sockmap-kworkers, scheduler, server-code; other); process: exclusive shares of the sampled CPUs' samples (sum 100%; every CPU, bench's too, for the variants whose cpu_scope is all: ${scope_all:-none here}); path: inclusive (a sample counts for every function on its stack: they overlap)"
		printf 'server\tkind\twhat\tshare_pct\tus_per_echo\n'
		if ((RUNNING)); then
			record_running
			analyse "$SERVER"
		fi
		for s in "${servers[@]}"; do
			record_compare "$s"
			analyse "$s"
		done
	} >"$tmp/profile.tsv"
	cp "$tmp/profile.tsv" "$out/profile.tsv"
	grep '^#' "$out/profile.tsv"
	grep -v '^#' "$out/profile.tsv" | column -t -s $'\t' 2>/dev/null || grep -v '^#' "$out/profile.tsv"
	echo "results: $out/profile.tsv"
}

# The parts of main: they set its locals (servers, vm, out).

# profile_options ARGS...: the command line.
profile_options() {
	while (($#)); do
		case $1 in
		--out) out=${2:?--out needs a directory}; shift ;;
		--seconds)
			[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "profile.sh: --seconds needs a whole number of seconds" >&2; exit 2; }
			SECONDS_SAMPLED=$2
			shift
			;;
		--running) RUNNING=1 ;;
		--vm) vm=1 ;;
		--bench)
			[[ -n ${2:-} && $2 != *-d* && $2 != *--warmup* ]] ||
				{ echo "profile.sh: --bench needs bench's load arguments (e.g. '-c 300'); the duration is profile.sh's" >&2; exit 2; }
			LOAD=$2
			shift
			;;
		-h | --help) usage; exit 0 ;;
		*)
			# A server, or a variant of compare's (user-proxy-sockmap:
			# the proxy in front of user, the proxy's CPUs sampled).
			is_server "$1" || [[ -n $(variant_get "$1" order) ]] ||
				{ echo "profile.sh: unknown argument '$1' (servers: ${SERVERS[*]}; or a variant, run.sh list)" >&2; usage >&2; exit 2; }
			servers+=("$1")
			;;
		esac
		shift
	done
}

# profile_servers: the servers named go together, and where they can
# run; none named: the default set of here (or of the guest).
profile_servers() {
	local s
	((RUNNING == 0 || ${#servers[@]} == 0)) ||
		usage_error "--running profiles the server run.sh has running: name no servers with it"
	((RUNNING == 0 || vm == 0)) ||
		usage_error "--running profiles the server run.sh has running here: not with --vm"
	if ((!vm)) && [[ ${ECHOLAB_WHERE:-} != vm ]]; then
		for s in "${servers[@]}"; do
			[[ $(server_get "$(variant_get "$s" server)" kind) != module ]] ||
				usage_error "$s is a module: it loads in the qemu guest only; profile it there with --vm"
		done
	fi
	if ((!RUNNING && ${#servers[@]} == 0)); then
		if ((vm)) || [[ ${ECHOLAB_WHERE:-} == vm ]]; then
			servers=(user user-splice uring ebpf kecho-unbound kecho-bound kecho-kthread)
		else
			servers=(user ebpf)
		fi
	fi
}

main "$@"
