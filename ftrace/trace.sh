#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# trace.sh - which kernel functions cost the most per request, per server.
#
#   sudo ./ftrace/trace.sh SERVER [--vm] [--out DIR] [--function F]...
#                          [--server-arg ARG]... [-- BENCH-ARGS...]
#
# Starts SERVER (any of servers/) with lib/lifecycle.sh, traces a short bench run
# (default -t 10 -r 10 -m 20: 2000 requests) and writes into DIR (default:
# the newest results dir) ftrace-SERVER-trace.txt (raw) and
# ftrace-SERVER-digest.txt (time per request per function, largest first).
#
# Method, the best this kernel allows, named in the digest:
#   function_graph  the graph tracer, filtered to the functions (the guest)
#   fentry          funclat (fentry/fexit BPF), plus the function tracer's
#                   hit counts when the kernel lets us enable it
#   bpf_stats       a server with BPF programs in its hot path (its
#                   declaration's bpf_progs=, ebpf's verdict): their run
#                   time from kernel.bpf_stats_enabled (added to any of the above)
# --vm runs the same inside the qemu guest (vm/run-vm.sh), results to DIR.
set -euo pipefail
# shellcheck source=lib/tracefs.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tracefs.sh"

usage() {
	sed -n '/^#   sudo/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"
}

# Default functions per server (its declaration's trace=); those this
# kernel lacks are dropped.
default_functions() { server_get "$1" trace; }

# function_exists NAME: in available_filter_functions, else in kallsyms.
function_exists() {
	if [[ -r $T/available_filter_functions ]] && head -c 1 "$T/available_filter_functions" >/dev/null 2>&1; then
		grep -qE "^$1( |$)" "$T/available_filter_functions"
	else
		grep -qE " [tT] $1( |$)" /proc/kallsyms
	fi
}

can_graph() {
	grep -qw function_graph "$T/available_tracers" &&
		: <"$T/set_ftrace_filter" 2>/dev/null
}
can_function() { : <"$T/set_ftrace_filter" 2>/dev/null; }
can_fentry() {
	[[ -x $FUNCLAT ]] || return 1
	"$FUNCLAT" -d 1 do_nanosleep 2>/dev/null | grep -q '^do_nanosleep'
}

main() {
	local server='' vm=0 funcs=() server_args=() bench_args=() method='' args=("$@") progs=()
	local have=() missing=() why=() counts=0 raw digest summary requests
	out=
	trace_options "$@"
	need_root "${0##*/}"
	[[ -n $out ]] || out=$(results_dir)
	if ((vm)); then
		rerun_in_guest "$out" "${args[@]}"
		exit
	fi
	mkdir -p "$out"

	read -ra progs <<<"$(server_get "$server" bpf_progs)"
	ftrace_traps
	tracefs_mount
	trace_start "$server" "${server_args[@]}"

	pick_functions
	pick_method

	raw=$out/ftrace-$server-trace.txt digest=$out/ftrace-$server-digest.txt
	make_tmp
	: >"$raw"

	# Set up the tracer, run the load, collect.
	tracer_setup
	run_bench "${bench_args[@]}"
	tracer_collect

	requests=$(field "$summary" ok)
	((requests > 0)) || die "bench had no successful request: $summary"

	function_rows >"$tmp/rows"
	write_digest
	rm -rf "$tmp"
	cat "$digest"
	echo "trace: $raw"
	echo "digest: $digest"
}

# The parts of main. They read and set its locals (server, funcs,
# bench_args, method, have, missing, why, counts, progs, raw, digest,
# requests), as run_bench (lib/tracefs.sh) sets its summary.

# trace_options ARGS...: the command line.
trace_options() {
	while (($#)); do
		case $1 in
		--vm) vm=1 ;;
		--out) out=${2:?--out needs a directory}; shift ;;
		--function) funcs+=("${2:?--function needs a name}"); shift ;;
		--server-arg) server_args+=("${2:?--server-arg needs a value}"); shift ;;
		-h | --help) usage; exit 0 ;;
		--) shift; bench_args=("$@"); break ;;
		*)
			is_server "$1" || { echo "trace.sh: unknown argument '$1' (servers: ${SERVERS[*]})" >&2; usage >&2; exit 2; }
			server=$1
			;;
		esac
		shift
	done
	[[ -n $server ]] || { echo "trace.sh: which server? ${SERVERS[*]}" >&2; exit 2; }
	((${#bench_args[@]})) || bench_args=(-t 10 -r 10 -m 20)
}

# pick_functions: the functions asked for (else the server's), those
# this kernel has (have) and those it lacks (missing).
pick_functions() {
	local f
	((${#funcs[@]})) || read -ra funcs <<<"$(default_functions "$server")"
	for f in "${funcs[@]}"; do
		if function_exists "$f"; then have+=("$f"); else missing+=("$f"); fi
	done
	((${#missing[@]})) && warn "not in this kernel (skipped): ${missing[*]}"
	return 0
}

# pick_method: the best timing this kernel allows (method, and why not
# a better one), and whether the function tracer counts calls too.
pick_method() {
	if can_graph; then
		method=function_graph
	else
		why+=("no function_graph tracer")
		if can_fentry; then
			method=fentry
		else
			why+=("fentry/fexit BPF programs refused (program type tracing unavailable)")
		fi
	fi
	if [[ -z $method ]] && ((${#progs[@]} == 0)); then
		die "this kernel allows no function timing (${why[*]}); run it in the guest: $0 $server --vm"
	fi
	if [[ $method == fentry ]] && can_function; then counts=1; fi
	((${#have[@]})) || ((${#progs[@]})) || die "none of the functions exist here: ${funcs[*]}"
	[[ -n $method ]] || method=bpf_stats
	((${#progs[@]} == 0)) || [[ $method == bpf_stats ]] || method="$method+bpf_stats"
	warn "method: $method${why:+ (${why[*]})}"
}

# tracer_setup: the tracer set up and on, and the BPF programs' run
# time counted from here.
tracer_setup() {
	local p
	if [[ $method == function_graph* ]]; then
		tset tracing_on 0
		tset current_tracer nop
		tset set_graph_function ''
		tset set_ftrace_filter "$(printf '%s\n' "${have[@]}")"
		tset options/funcgraph-tail 1
		tset options/funcgraph-proc 1
		tset current_tracer function_graph
		: >"$T/trace"
		tset tracing_on 1
	elif [[ $method == fentry* ]]; then
		funclat_start "${have[@]}"
		if ((counts)); then
			tset tracing_on 0
			tset set_ftrace_filter "$(printf '%s\n' "${have[@]}")"
			tset current_tracer function
			: >"$T/trace"
			tset tracing_on 1
		fi
	fi
	if ((${#progs[@]})); then
		bpf_stats_enable
		for p in "${progs[@]}"; do bpftool prog show name "$p" >"$tmp/$p.before"; done
	fi
}

# tracer_collect: the tracer's output into the raw file, and tracefs
# as it was.
tracer_collect() {
	local p
	for p in "${progs[@]}"; do bpftool prog show name "$p" >"$tmp/$p.after"; done
	if [[ $method == function_graph* ]]; then
		echo 0 >"$T/tracing_on"
		cat "$T/trace" >"$raw"
		grep -q 'overrun: [1-9]' "$T"/per_cpu/cpu*/stats &&
			warn "warning: the trace buffer overflowed: calls are missing (a smaller load, or fewer functions)"
	elif [[ $method == fentry* ]]; then
		((counts)) && { echo 0 >"$T/tracing_on"; cat "$T/trace" >"$tmp/counts"; }
		funclat_stop
		cat "$tmp/funclat" >"$raw"
	fi
	tracefs_restore	# now, not only at exit: the digest runs untraced
}

# function_rows: one row per function: name calls total_ns.
function_rows() {
	local p
	if [[ $method == function_graph* ]]; then
		# " 1)   3.456 us    |  name();" or " 1) + 12.3 us | } /* name */"
		awk '
		match($0, /[0-9.]+ us +\|/) {
			d = substr($0, RSTART, RLENGTH); sub(/ us.*/, "", d)
			# funcgraph-proc: " 1)  bench-252   |": calls of the load client
			client = match($0, /^ *[0-9]+\) +bench-[0-9]+ /) ? " (bench ctx)" : ""
			rest = substr($0, RSTART + RLENGTH)
			# module functions read "name [module]"
			if (match(rest, /} \/\* [A-Za-z0-9_.]+/))
				name = substr(rest, RSTART + 5, RLENGTH - 5)
			else if (match(rest, /[A-Za-z0-9_.]+( \[[A-Za-z0-9_]+\])?\(\);/)) {
				name = substr(rest, RSTART, RLENGTH); sub(/[ (].*/, "", name)
			} else next
			name = name client
			n[name]++; t[name] += d * 1000
		}
		END { for (k in n) printf "%s\t%d\t%.0f\n", k, n[k], t[k] }' "$raw"
	elif [[ $method == fentry* ]]; then
		awk 'NR > 1 { print $1 "\t" $2 "\t" $3 }' "$raw"
	fi
	for p in "${progs[@]}"; do
		# run_time_ns/run_cnt of the program, after minus before
		paste <(grep -o 'run_time_ns [0-9]* run_cnt [0-9]*' "$tmp/$p.before" || echo "run_time_ns 0 run_cnt 0") \
			<(grep -o 'run_time_ns [0-9]* run_cnt [0-9]*' "$tmp/$p.after") |
			awk -v p="$p" '{ printf "bpf_prog:%s\t%d\t%d\n", p, $8 - $4, $6 - $2 }'
	done
}

# write_digest: time per request per function, largest first.
write_digest() {
	{
		echo "# server=$server method=$method kernel=$(uname -r) requests=$requests bench=${bench_args[*]}"
		echo "# $summary"
		((${#missing[@]})) && echo "# not in this kernel: ${missing[*]}"
		[[ -n ${why[*]:-} ]] && echo "# why not function_graph: ${why[*]}"
		echo "# time is inclusive (a function's callees count in it); per_req = over all $requests requests;"
		echo "# '(bench ctx)': calls while a bench thread was current: its own syscalls, and on loopback the softirq receive path the sender runs for the server"
		printf '%-40s %10s %10s %12s %10s %10s\n' function calls calls/req total_us us/req mean_us
		sort -t "$(printf '\t')" -k3,3nr "$tmp/rows" | awk -F '\t' -v r="$requests" '{
			printf "%-40s %10d %10.2f %12.1f %10.3f %10.3f\n", $1, $2, $2 / r,
				$3 / 1000, $3 / 1000 / r, $2 ? $3 / 1000 / $2 : 0 }'
	} >"$digest"
	if ((counts)) && [[ -s $tmp/counts ]]; then
		{
			echo "# function tracer hits"
			grep -v '^#' "$tmp/counts" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[A-Za-z_][A-Za-z0-9_.]*$/ && $(i+1) ~ /^<-/) { c[$i]++; break } }
				END { for (k in c) print "#   " k, c[k] }'
		} >>"$digest"
	fi
}

main "$@"
