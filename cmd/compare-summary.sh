# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# cmd/compare-summary.sh - compare's judging and its summary.md: which
# runs each verdict judges, analysis/judge's verdicts, the tables of CPU
# per echo, the stream and the response times, and --summarize, which
# writes them again from a directory's raw files. Sourced by
# cmd/compare.sh only.


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
	local f=$OUT/summary.md s v base
	: >"$OUT/judged.txt"
	base=user
	[[ " ${MEASURED[*]} " == *" user "* ]] || base=${MEASURED[0]:-user}
	# Behind the proxy, every path against the plain relay.
	[[ " ${MEASURED[*]} " != *" user-proxy-copy "* ]] || base=user-proxy-copy
	{
		summary_head
		for v in "${SWEEP_VALUES[@]:-}"; do
			summary_value "$v" "$base"
		done
		if ((${#SKIPPED[@]})); then
			echo "Not measured here:"
			echo
			for s in "${SKIPPED[@]}"; do echo "- $s"; done
			echo
		fi
		if ((CURVE)); then
			summary_curve
		fi
		local dir=${OUT#"$ROOT"/results/}
		[[ $dir != /* ]] || dir="this directory"	# the guest's /out
		echo "Raw files: \`SERVER[-SWEEP]-RUN.tsv\`; redraw with \`make plots RESULTS=$dir\`,"
		echo "judge again with \`analysis/judge --markdown FILE...\`."
	} >"$f"
}

# summary_head: what was run, where and how, above every table.
summary_head() {
	echo "# $WHERE comparison, ${SUM_DATE:-$(date -u +%Y-%m-%d)}"
	echo
	echo "Kernel ${SUM_KERNEL:-$(uname -r)}, ${SUM_CORES:-$(nproc)} cores. Workload ${WORKLOAD:-custom}: bench ${BENCH_ARGS[*]}"
	echo "(${SUM_CLIENT:-$(client_mode)}). Placement: ${SUM_PLACEMENT:-$(placement_text)}."
	echo "Runs per server: $(repeat_text). Interleaved (each repetition runs every"
	echo "server once, in a random order: meta.txt's order= lines), each a fresh start of the server. Times in"
	echo "microseconds; CPU per echo is microseconds of CPU time per echoed message"
	echo "in the measured window (netperf's service demand), from /proc/stat."
	echo
}

# summary_value SWEEP-VALUE BASELINE: the verdicts against BASELINE at
# one value of the sweep, the runs they leave out, then the tables.
summary_value() {
	local v=$1 base=$2 files=()
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
	((${#files[@]})) || return 0
	echo "### Verdicts against $base"
	echo
	"$JUDGE" --baseline "$base" --markdown "${files[@]}" ||
		echo "(analysis/judge could not judge these runs: its message is in compare's output)"
	# The same verdicts as lines, for cmd/sizes.sh's table.
	"$JUDGE" --baseline "$base" "${files[@]}" 2>/dev/null |
		sed "s/^judge /judge ${SWEEP_KEY:-value}=${v:--} /" >>"$OUT/judged.txt" || true
	echo
	summary_cpu "$v"
	[[ $WORKLOAD != stream ]] || stream_table "$v"
	summary_latency "$v"
}

# summary_cpu SWEEP-VALUE: CPU per echo by kind, every run pooled.
summary_cpu() {
	local v=$1 s files=() line anywhere=()
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
		[[ $(variant_get "${s%-again}" cpu_scope) == all ]] || continue
		# Server-bound, its CPUs are the guest's, all of them the server's.
		mapfile -t files < <(run_files "$s" "$v")
		# (awk reads it all: an early exit would fail zcat under pipefail)
		((${#files[@]})) && [[ $(zcat -f "${files[0]}" |
			awk '/^# cpu_scope=/ { s = $0 } END { print s }') == '# cpu_scope=split' ]] ||
			anywhere+=("$s")
	done
	if ((${#anywhere[@]})); then
		echo "${anywhere[*]}: run on any CPU (kecho's unbound workqueue, its kthread"
		echo "mode's threads), so their CPU per echo counts every CPU, the client's"
		echo "included: not comparable with a server-only figure. The verdicts'"
		echo "machine CPU (the server's and the client's CPUs together) compares them."
		echo
	fi
}

# summary_latency SWEEP-VALUE: the pooled response times, for reference.
summary_latency() {
	local v=$1 s files=()
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
}

# summary_curve: --curve's knees, from cmd/curve.sh.
summary_curve() {
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
