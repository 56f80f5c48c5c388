#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# wq-latency.sh - what a work item and a kthread cost: CMWQ vs kthreads.
#
#   sudo ./ftrace/wq-latency.sh SERVER [--vm] [--out DIR] [--mode M]...
#                               [--work-function F] [-- BENCH-ARGS...]
#        ./ftrace/wq-latency.sh SERVER --plot-only [--out DIR]
#
# Runs one bench (default -t 10 -r 10 -m 10) against SERVER per mode
# (its declaration's modes, e.g. kecho: --mode unbound, bound, kthread,
# default all three; a server without modes: one run)
# and reads, from tracepoints in a private trace instance:
#   queue   workqueue_queue_work -> workqueue_execute_start (waiting for a worker)
#   exec    workqueue_execute_start -> workqueue_execute_end (the work function)
#   kthread task_newtask of a child of kthreadd -> its first sched_switch in
#           (creating a kthread, as kecho's mode=kthread does per connection)
# of the work function F (kecho: kecho_work, ebpf: sk_psock_backlog).
# Writes wq-SERVER-MODE-{queue,exec,kthread}.dat (one value in us per line),
# wq-SERVER-summary.tsv (count, p50, p90, p99, max per set) and, where
# gnuplot is installed, wq-SERVER-cdf.png, into DIR (default: newest results
# dir). With --vm the guest writes the data and the host draws the plot.
set -euo pipefail
# shellcheck source=lib/tracefs.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tracefs.sh"
# shellcheck source=lib/plots.sh
source "$ECHOLAB_ROOT/lib/plots.sh"

usage() {
	sed -n '/^#   sudo/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"
}

# The function that runs the server's deferred work (its declaration's work=).
default_work_function() { server_get "$1" work; }

# server_modes SERVER: 'MODE SERVER-ARGS...' per mode to measure: its
# declaration's modes hook, or one run, 'default', without arguments.
server_modes() {
	if declare -F "$1_modes" >/dev/null; then "$1_modes"; else echo default; fi
}

# intervals TRACE FUNCTION PREFIX: writes PREFIX-queue.dat, -exec.dat, -kthread.dat
intervals() {
	awk -v fn="$2" -v pre="$3" '
	function ts() { match($0, /[0-9]+\.[0-9]+: /); return substr($0, RSTART, RLENGTH - 2) + 0 }
	function wk() { match($0, /work struct[= ][0-9a-fx]+/); return substr($0, RSTART + 12, RLENGTH - 12) }
	function tid() { match($0, /-[0-9]+ +(\([ 0-9-]+\) +)?\[[0-9]+\]/); t = substr($0, RSTART + 1); sub(/[^0-9].*/, "", t); return t }
	BEGIN { qf = pre "-queue.dat"; ef = pre "-exec.dat"; kf = pre "-kthread.dat"
		printf "" > qf; printf "" > ef; printf "" > kf }
	/ workqueue_queue_work: / {
		if ($0 !~ ("function=" fn " ")) next
		q[wk()] = ts(); next
	}
	/ workqueue_execute_start: / {
		if ($0 !~ ("function " fn "( |$)")) next
		w = wk(); t = ts()
		if (w in q) { printf "%.3f\n", (t - q[w]) * 1e6 > qf; delete q[w] }
		s[w] = t; next
	}
	/ workqueue_execute_end: / {
		w = wk()
		if (w in s) { printf "%.3f\n", (ts() - s[w]) * 1e6 > ef; delete s[w] }
		next
	}
	/ task_newtask: / {
		# fired in the parent: kthreadd creating a kthread
		if ($0 !~ /^ *kthreadd-/) next
		match($0, /pid=[0-9]+/); born[substr($0, RSTART + 4, RLENGTH - 4)] = ts(); next
	}
	/ sched_switch: / {
		match($0, /next_pid=[0-9]+/); p = substr($0, RSTART + 9, RLENGTH - 9)
		if (p in born) { printf "%.3f\n", (ts() - born[p]) * 1e6 > kf; delete born[p] }
	}' "$1"
}

# stats FILE: count p50 p90 p99 max (nearest rank)
stats() {
	sort -g "$1" | awk '{ v[NR] = $1 }
	function r(p) { i = int(p * NR + 0.999999); if (i < 1) i = 1; return v[i] }
	END { if (!NR) { print "0\t-\t-\t-\t-"; exit }
		printf "%d\t%.1f\t%.1f\t%.1f\t%.1f\n", NR, r(0.5), r(0.9), r(0.99), v[NR] }'
}

# plot SERVER: CDF of every non-empty .dat of SERVER, one panel per set
# (plots/wq-latency.gp draws it)
plot() {
	local server=$1 png=$out/wq-$1-cdf.png set f mode run kernel cdfs
	local -A of=([queue]="" [exec]="" [kthread]="")
	run=$(sed -n 's/^# server=.* where=//p' "$out/wq-$server-summary.tsv" 2>/dev/null | head -n 1)
	kernel=$(sed -n 's/^# server=.* kernel=\([^ ]*\).*/\1/p' "$out/wq-$server-summary.tsv" | head -n 1)
	command -v gnuplot >/dev/null || { warn "gnuplot not found: no plot (apt-get install gnuplot-nox)"; return 0; }
	cdfs=$(mktemp -d)
	# of[SET]: the modes with intervals of SET; each one's CDF: its values
	# sorted, with the fraction of them at or below each.
	for set in queue exec kthread; do
		for f in "$out"/wq-"$server"-*-"$set".dat; do
			[[ -s $f ]] || continue
			mode=${f##*/wq-"$server"-}
			mode=${mode%-"$set".dat}
			of[$set]+="${of[$set]:+ }$mode"
			sort -g "$f" | awk '{print $1, NR}' | awk -v n="$(wc -l <"$f")" '{print $1, $2/n}' \
				>"$cdfs/$mode-$set.cdf"
		done
	done
	if [[ -z ${of[queue]}${of[exec]}${of[kthread]} ]]; then
		rm -rf "$cdfs"
		warn "no intervals to plot"
		return 0
	fi
	gp_plot wq-latency out="$png" server="$server" run="${run:-$where}" kernel="$kernel" \
		data="$cdfs" queue="${of[queue]}" exec="${of[exec]}" kthread="${of[kthread]}" \
		2>"$out/.gnuplot.err" || { warn "gnuplot failed: $(cat "$out/.gnuplot.err")"; }
	rm -f "$out/.gnuplot.err"
	rm -rf "$cdfs"
	[[ -s $png ]] && echo "plot: $png"
}

# measure SERVER FUNCTION MODE [SERVER-ARGS...]
measure() {
	local server=$1 fn=$2 mode=$3 summary ev
	shift 3
	local prefix=$out/wq-$server-$mode
	trace_start "$server" "$@"
	instance_create 16384
	for ev in workqueue/workqueue_queue_work workqueue/workqueue_execute_start \
		workqueue/workqueue_execute_end task/task_newtask sched/sched_switch; do
		echo 1 >"$INST/events/$ev/enable"
	done
	echo 1 >"$INST/tracing_on"
	run_bench "${bench_args[@]}"
	echo 0 >"$INST/tracing_on"
	cat "$INST/trace" >"$tmp/trace"
	grep -q 'overrun: [1-9]' "$INST"/per_cpu/cpu*/stats &&
		warn "warning: the trace buffer overflowed; some intervals are lost (smaller load)"
	instance_remove
	trace_stop
	intervals "$tmp/trace" "$fn" "$prefix"
	local set
	for set in queue exec kthread; do
		printf '%s\t%s\t%s\t%s\n' "$mode" "$set" "$(stats "$prefix-$set.dat")" \
			"$(field "$summary" ok)" >>"$tmp/summary"
	done
}

main() {
	local server='' modes=() fn='' vm=0 args=("$@")
	out=
	bench_args=()
	while (($#)); do
		case $1 in
		--vm) vm=1 ;;
		--out) out=${2:?--out needs a directory}; shift ;;
		--mode) modes+=("${2:?--mode needs unbound, bound or kthread}"); shift ;;
		--work-function) fn=${2:?--work-function needs a name}; shift ;;
		--plot-only) plot_only=1 ;;
		-h | --help) usage; exit 0 ;;
		--) shift; bench_args=("$@"); break ;;
		*)
			is_server "$1" || { echo "wq-latency.sh: unknown argument '$1' (servers: ${SERVERS[*]})" >&2; usage >&2; exit 2; }
			server=$1
			;;
		esac
		shift
	done
	[[ -n $server ]] || { echo "wq-latency.sh: which server? ${SERVERS[*]}" >&2; exit 2; }
	((${#bench_args[@]})) || bench_args=(-t 10 -r 10 -m 10)
	[[ -n $fn ]] || fn=$(default_work_function "$server")
	[[ -n $out ]] || out=$(results_dir)
	mkdir -p "$out"
	where=native
	[[ -n ${VM:-} ]] && where=vm
	if [[ ${plot_only:-0} == 1 ]]; then
		plot "$server"
		exit 0
	fi
	need_root "${0##*/}"
	if ((vm)); then
		rerun_in_guest "$out" "${args[@]}" || exit
		where="vm" plot "$server"
		exit 0
	fi
	# The server's modes (its declaration's modes hook): 'MODE ARGS...'
	# each; --mode picks some of them.
	local line mode margs runs=()
	while read -r mode margs; do
		[[ -n $mode ]] || continue
		((${#modes[@]} == 0)) || [[ " ${modes[*]} " == *" $mode "* ]] || continue
		runs+=("$mode $margs")
	done < <(server_modes "$server")
	((${#runs[@]})) || usage_error "--mode ${modes[*]}: $server has no such mode (its modes: $(server_modes "$server" | cut -d' ' -f1 | tr '\n' ' '))"
	ftrace_traps
	tracefs_mount
	make_tmp
	: >"$tmp/summary"
	for line in "${runs[@]}"; do
		# shellcheck disable=SC2086 # a mode and its server arguments
		measure "$server" "$fn" $line
	done
	{
		echo "# server=$server work_function=${fn:-none} kernel=$(uname -r) where=$where bench=${bench_args[*]}"
		echo "# intervals in us; queue/exec: work items of ${fn:-none}; kthread: kthreadd's children, created -> first run"
		printf 'mode\tset\tcount\tp50_us\tp90_us\tp99_us\tmax_us\trequests\n'
		cat "$tmp/summary"
	} >"$out/wq-$server-summary.tsv"
	rm -rf "$tmp"
	grep '^#' "$out/wq-$server-summary.tsv"
	grep -v '^#' "$out/wq-$server-summary.tsv" | column -t -s $'\t' 2>/dev/null ||
		grep -v '^#' "$out/wq-$server-summary.tsv"
	[[ -n ${VM:-} ]] || plot "$server"
	echo "results: $out/wq-$server-summary.tsv"
}

main "$@"
