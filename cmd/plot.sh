#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# plot.sh [DIR] - draw a results directory from its raw files alone.
#
# DIR holds bench raw files (*.tsv or *.tsv.gz, '# label=' names the server; several
# files of one server are its repetitions, pooled). Default: the newest
# results directory, or the newest day of hand-run benches under
# results/runs/ (ECHOLAB_RUNS_DIR), where only each server's newest run is
# drawn: what was just measured.
#
# METRIC picks the response time drawn: arrival (send -> the echo reached
# the client's kernel: the server's time), rtt (send -> recv() returned:
# what the client saw) or auto (default: arrival when every ok sample has
# one, else rtt). Writes into DIR:
#   boxplot.png        response time per server, each server's p50 verdict
#                      against user under its name (analysis/judge)
#   cpu.png            server CPU per echo by kind (usr, sys, softirq,
#                      irq), the client's beside it, the verdicts under
#                      the names; when the raw files carry it
#   cdf.png            response-time CDF, log axis
#   scatter-NAME.png   thread id against response time, one per server
#   sweep-latency.png, sweep-rps.png   when the files come from a --sweep
#   curve.png, demand.png, curve.tsv   latency and CPU per echo against
#                      offered load, for a rate sweep (compare's equal load,
#                      --curve; cmd/curve.sh)
# A run bench found client-bound (the client held the requests back) is
# named in every title. Nothing is run; the same server has the same place
# and colour everywhere.
set -euo pipefail

# Each server's variants, their plot order and colours (servers/*.sh).
# shellcheck source=lib/registry.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/registry.sh"
# shellcheck source=lib/plots.sh
source "$ECHOLAB_ROOT/lib/plots.sh"
prog_name plot.sh
SUMMARIZE=$ECHOLAB_ROOT/analysis/summarize
JUDGE=$ECHOLAB_ROOT/analysis/judge
RUNS=${ECHOLAB_RUNS_DIR:-$ECHOLAB_ROOT/results/runs}
METRIC=${METRIC:-auto}

# The header lines only: raw files hold millions of samples below them.
# Committed ones are gzipped; gzip -f passes plain files through.
# (sed stops reading at the first row: gzip's broken pipe is expected.)
meta() { { raw_cat "$1" 2>/dev/null || true; } | sed -n "/^#/!q; s/^# $2=//p" | sed -n 1p; }

# raw_files DIR: its raw files, plain or gzipped.
raw_files() { { compgen -G "$1/*.tsv" || true; compgen -G "$1/*.tsv.gz" || true; } | sort; }

# A label's declared colour; grey for one no declaration knows.
colour() {
	local c
	c=$(variant_get "$1" colour)
	echo "${c:-#7f7f7f}"
}

newest_dir() {
	local d newest=
	for d in "$ECHOLAB_ROOT"/results/*/ "$RUNS"/*/; do
		[[ -d $d && $d != "$ECHOLAB_ROOT/results/runs/" ]] || continue
		[[ -n $(raw_files "${d%/}") ]] || continue
		[[ -z $newest || $d -nt $newest ]] && newest=$d
	done
	echo "$newest"
}

# The servers present in DIR, in their declared plot order (servers/*.sh),
# then the undeclared ones by name.
servers_in() {
	local f s
	for f in $(raw_files "$1"); do meta "$f" label; done | sort -u |
		while read -r s; do
			echo "$(variant_get "$s" order) $s"
		done | sort -k1,1n -k2 | awk '{ print $NF }'
}

# A day of hand-run benches (results/runs/DATE/) draws each server's
# newest run; any other directory pools all of a server's files.
hand_runs() { [[ $(cd "$1/.." && pwd) == "$(cd "$RUNS" 2>/dev/null && pwd)" ]]; }

files_of() {
	local dir=$1 server=$2 f newest=
	for f in $(raw_files "$dir"); do
		[[ $(meta "$f" label) == "$server" ]] || continue
		if hand_runs "$dir"; then
			[[ -n $newest && ! $f -nt $newest ]] || newest=$f
		else
			echo "$f"
		fi
	done
	[[ -z $newest ]] || echo "$newest"
}

# arrival when every ok sample of these servers' files has an arrival_us.
pick_metric() {
	local dir=$1 s line
	local files=()
	[[ $METRIC == auto ]] || { echo "$METRIC"; return; }
	for s in "${servers[@]}"; do
		mapfile -t files < <(files_of "$dir" "$s")
		line=$("$SUMMARIZE" "${files[@]}")
		if [[ $(field "$line" ok) == 0 ||
			$(field "$line" arrival_n) != "$(field "$line" ok)" ]]; then
			echo rtt
			return
		fi
	done
	echo arrival
}

# canvas_width: pixels; wider with more servers, so that each one's
# verdict fits under its name.
canvas_width() {
	local width=$((${#servers[@]} * 140 + 120))
	((width >= 960)) || width=960
	echo "$width"
}

# wrap_title LINE...: the title under a plot's headline (plots/*.gp add
# it), the LINEs (each may hold \n) one under the other, each wrapped
# after a ", ", "; " or ": " where it would not fit the canvas (about 7
# pixels a character).
wrap_title() {
	printf '%s\n' "$@" | sed 's/\\n/\n/g' | awk -v max=$(($(canvas_width) / 7)) '
		{
			line = $0
			while (length(line) > max) {
				cut = 0
				for (i = max - 1; i > max / 2; i--) {
					c = substr(line, i, 2)
					if (c == ", " || c == "; " || c == ": ") { cut = i; break }
				}
				if (!cut)
					break
				out = out (out == "" ? "" : "\\n") substr(line, 1, cut)
				line = substr(line, cut + 2)
			}
			out = out (out == "" ? "" : "\\n") line
		}
		END { print out }'
}

# colours: the servers' colours, in their order.
colours() {
	local s
	for s in "${servers[@]}"; do colour "$s"; done | paste -sd' ' -
}

main() {
	local dir=${1:-} first title s n files notes=()
	if [[ $dir == -h || $dir == --help ]]; then
		sed -n '3,/^# Nothing is run/{s/^# \{0,1\}//;p}' "$0"
		return 0
	fi
	[[ $METRIC =~ ^(auto|arrival|rtt)$ ]] ||
		die "METRIC='$METRIC': use arrival (the server's time), rtt (the client's) or auto"
	command -v gnuplot >/dev/null ||
		die "gnuplot not found: install gnuplot-nox (make deps as root, or sudo make deps)"
	[[ -x $SUMMARIZE ]] || die "analysis/summarize is not built: run 'make analysis'"
	if [[ -n $dir && ! -d $dir && -d $ECHOLAB_ROOT/results/$dir ]]; then
		dir=$ECHOLAB_ROOT/results/$dir	# a name under results/
	fi
	[[ -n $dir ]] || dir=$(newest_dir)
	[[ -n $dir ]] || die "no results yet: run 'sudo ./run.sh compare' or 'sudo ./run.sh bench user'"
	dir=${dir%/}
	first=$(raw_files "$dir" | sed -n 1p)
	[[ -n $first ]] || die "no raw files (*.tsv, *.tsv.gz) in $dir"
	title=$(run_title "$dir" "$first")

	tmp=$(mktemp -d)	# global: the EXIT trap removes it
	trap 'rm -rf "$tmp"' EXIT
	mapfile -t servers < <(servers_in "$dir")
	metric=$(pick_metric "$dir")	# global: plot_sweep reads it
	if [[ $metric == arrival ]]; then
		what="server side: send -> echo in the client's kernel (arrival_us)"
	else
		what="client side: send -> recv() returned (rtt_us)"
	fi
	title="$title\n$what"
	for s in "${servers[@]}"; do
		mapfile -t files < <(files_of "$dir" "$s")
		"$SUMMARIZE" --samples "$metric" "${files[@]}" >"$tmp/$s.dat"
		[[ -s $tmp/$s.dat ]] || die "no ok samples of $s in $dir to draw"
		echo "$s: $(wc -l <"$tmp/$s.dat") samples from ${files[*]##*/}"
	done

	judge_dir "$dir"
	mapfile -t notes < <(runs_note "$dir")
	bound_note=	# global: plot_cpu reads it
	if ((${#notes[@]})); then
		bound_note=$(join '\n' "${notes[@]}")
		title="$title\n$bound_note"
		printf 'note: %s\n' "${notes[@]}"
	fi
	plot_samples "$dir" "$title"

	plot_sweep "$dir" "$tmp"
	n=$((${#servers[@]} + 2))
	! plot_cpu "$dir" || n=$((n + 1))
	# A rate sweep (equal load, --curve): latency and CPU per echo against
	# load (cmd/curve.sh); --curve's bound, else curve.sh's own.
	if [[ -f $dir/meta.txt ]] && grep -q '^sweep=rate=' "$dir/meta.txt"; then
		local bound
		bound=$(sed -n 's/^curve=bound=//p' "$dir/meta.txt")
		"$ECHOLAB_ROOT/cmd/curve.sh" ${bound:+--bound "$bound"} "$dir" >/dev/null &&
			n=$((n + 2))
	fi
	echo "plots: $n PNG files in $dir ($metric: $what)"
}

# run_title DIR FIRST-FILE: the plots' title, from the first raw file's
# metadata: where and on what kernel it ran, the load (a swept parameter
# with all its values, not the first file's), the client.
run_title() {
	local dir=$1 first=$2 where kernel threads size key values f rate client title
	where=$(meta "$first" where)
	case $where in
	vm) where="qemu guest (TCG: compare ratios only)" ;;
	netns) where="netns (client and server over veth)" ;;
	"") where="native" ;;
	esac
	case $(meta "$first" placement) in
	two-machine) where="$where, two machines on one box (veth)" ;;
	loopback) where="$where, loopback" ;;
	esac
	kernel=$(meta "$first" kernel)
	rate=$(meta "$first" rate)
	threads="$(meta "$first" threads) threads"
	# bench's event engine: its connections, over a few threads.
	[[ $(meta "$first" engine) != event ]] ||
		threads="$(meta "$first" connections) connections on $(meta "$first" threads) event threads"
	size="$(meta "$first" size) B"
	key=$(meta "$first" sweep)
	if [[ -n $key ]]; then
		values=$(for f in $(raw_files "$dir"); do meta "$f" sweep_value; done |
			sort -nu | paste -sd, -)
		[[ $key == threads ]] && threads="$values threads (swept)"
		[[ $key == size ]] && size="$values B (swept)"
		[[ $key == connections ]] && threads="$values connections (swept)"
		[[ $key == rate ]] && rate="$values msg/s (swept)"
	fi
	client="closed-loop client"
	[[ $(meta "$first" loop) != open ]] || client="open-loop client, $rate"
	[[ $(meta "$first" loop) != open || $rate == *swept* ]] || client="$client req/s"
	case $(meta "$first" sched) in
	idle) client="$client at SCHED_IDLE" ;;
	normal) client="$client at normal priority" ;;
	esac
	# Where each ran: compare's split (run.sh --cpus and bench --cpus).
	if [[ -n $(meta "$first" server_cpus) ]]; then
		client="$client on CPUs $(meta "$first" cpus), server on $(meta "$first" server_cpus)"
	fi
	title="$where, kernel $kernel, $threads x $(meta "$first" rounds) rounds x $(meta "$first" messages) msgs of $size, $client"
	[[ $(meta "$first" duration) == 0 ]] ||
		title="$where, kernel $kernel, $threads for $(meta "$first" duration) s, $size, $client"
	printf '%s\n' "$title"
}

# plot_samples DIR TITLE: the box plot, the CDF and each server's scatter
# of the samples in $tmp; a log axis when they span more than two decades.
plot_samples() {
	local dir=$1 logy width wrapped s
	logy=$(cat "$tmp"/*.dat | awk -F'\t' 'NR == 1 || $2 < min { min = $2 }
		$2 > max { max = $2 } END { print (min > 0 && max / min > 100) }')
	width=$(canvas_width)
	wrapped=$(wrap_title "$2")
	gp_plot box out="$dir/boxplot.png" width="$width" title="$wrapped" \
		data="$tmp" servers="${servers[*]}" colours="$(colours)" \
		labels="$(tic_labels p50)" logy="$logy"
	gp_plot cdf out="$dir/cdf.png" width="$width" title="$wrapped" \
		data="$tmp" servers="${servers[*]}" colours="$(colours)"
	for s in "${servers[@]}"; do
		gp_plot scatter out="$dir/scatter-$s.png" width="$width" title="$wrapped" \
			server="$s" data="$tmp/$s.dat" colour="$(colour "$s")" logy="$logy"
	done
}

# judge_dir DIR: one analysis/judge over the servers' runs, against user
# (else the first server), as summary.md judges them. Fills EXCLUDED[server]
# (its client-bound runs, by judge's rule: bench's bottleneck=client, or
# the client's CPUs saturated while the server's were not), DISTURBED[server]
# (its runs the host disturbed, which judge counts there alone) and, for a
# comparison (not the day's hand runs, one each), VERDICT[server.figure] =
# "ratio verdict\n[lo, hi]" (or the verdict alone where there is no
# interval). JUDGED=1 when judge answered.
declare -A VERDICT=() EXCLUDED=() DISTURBED=()
JUDGED=0
judge_dir() {
	local dir=$1 s files=() line label figure v base=${servers[0]}
	[[ -x $JUDGE ]] || return 0
	for s in "${servers[@]}"; do
		[[ $s != user ]] || base=user
		mapfile -t -O "${#files[@]}" files < <(files_of "$dir" "$s")
	done
	while read -r line; do
		JUDGED=1
		label=$(field "$line" label)
		figure=$(field "$line" figure)
		if [[ $figure == p50 ]]; then
			EXCLUDED[$label]=$(field "$line" excluded)
			DISTURBED[$label]=$(field "$line" disturbed)
		fi
		! hand_runs "$dir" || continue	# one run per server: nothing to judge
		v=${line##*verdict=}
		v=${v/no difference detected/no difference}	# judges before 2026-11-25
		v=${v/not judged (rates differ:*/not judged:\\nrates differ}
		if [[ $(field "$line" ratio_lo) != - ]]; then
			# two lines under the name: "ratio verdict", "[lo, hi]"
			VERDICT[$label.$figure]="$(field "$line" ratio) $v\\n[$(field "$line" ratio_lo), $(field "$line" ratio_hi)]"
		elif [[ $v == "not comparable"* ]]; then
			VERDICT[$label.$figure]="not comparable:\\nother CPUs counted"
		elif [[ $v != - ]]; then
			VERDICT[$label.$figure]=$v
		fi
	done < <("$JUDGE" --baseline "$base" "${files[@]}" 2>/dev/null | grep '^judge ')
}

# runs_note DIR: title lines naming the runs that are not evidence of the
# server, by judge's counts: those the host disturbed (judge counts them
# there alone, client-bound or not) and the client-bound others. Where
# judge did not answer, bench's bottleneck key alone.
runs_note() {
	local dir=$1 s f n total bound=() disturbed=()
	for s in "${servers[@]}"; do
		n=0
		total=0
		for f in $(files_of "$dir" "$s"); do
			total=$((total + 1))
			((JUDGED)) || ! raw_cat "$f" | grep -q '^# bottleneck=client$' || n=$((n + 1))
		done
		((!JUDGED)) || n=${EXCLUDED[$s]:-0}
		((n == 0)) || bound+=("$s $n of $total")
		n=${DISTURBED[$s]:-0}
		((n == 0)) || disturbed+=("$s $n of $total")
	done
	((${#disturbed[@]} == 0)) ||
		echo "DISTURBED runs ($(join ', ' "${disturbed[@]}")): the host disturbed them (steal, or a CPU reading no server makes); they count in no verdict"
	((${#bound[@]} == 0)) ||
		echo "CLIENT-BOUND runs ($(join ', ' "${bound[@]}")): the client held requests back; their latency is the client's, not the server's"
}

# tic_labels FIGURE: the servers' names, each with its verdict on FIGURE
# under it (gp_list).
tic_labels() {
	local s v nl='\n' labels=()	# gnuplot's newline, in a string
	for s in "${servers[@]}"; do
		v=${VERDICT[$s.$1]:-}
		labels+=("$s${v:+$nl$v}")
	done
	gp_list "${labels[@]}"
}

# plot_cpu DIR: cpu.png, server CPU per echo stacked by kind and the
# client's beside it; fails when the raw files carry no CPU figures.
plot_cpu() {
	local dir=$1 s i line files
	: >"$tmp/cpu.dat"
	for i in "${!servers[@]}"; do
		s=${servers[i]}
		mapfile -t files < <(files_of "$dir" "$s")
		line=$("$SUMMARIZE" "${files[@]}")
		[[ -n $(field "$line" server_cpu_us_per_echo) ]] || return 1
		printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\n' $((i + 1)) \
			"$(field "$line" server_usr_us_per_echo)" "$(field "$line" server_sys_us_per_echo)" \
			"$(field "$line" server_softirq_us_per_echo)" "$(field "$line" server_irq_us_per_echo)" \
			"$(field "$line" client_cpu_us_per_echo)" "$(field "$line" server_cpus)" >>"$tmp/cpu.dat"
	done
	gp_plot cpu out="$dir/cpu.png" width="$(canvas_width)" \
		title="$(wrap_title "${title%%\\n*}${bound_note:+\\n$bound_note}")" \
		data="$tmp/cpu.dat" labels="$(tic_labels cpu)" n="${#servers[@]}"
}

# --sweep runs: p50/p99 and req/s against the swept value, per server.
plot_sweep() {
	local dir=$1 tmp=$2 key s v f line files
	key=$(meta "$(raw_files "$dir" | sed -n 1p)" sweep)
	[[ -n $key ]] || return 0
	for s in "${servers[@]}"; do
		: >"$tmp/$s.sweep"
		while read -r v; do
			files=()
			for f in $(files_of "$dir" "$s"); do
				[[ $(meta "$f" sweep_value) == "$v" ]] && files+=("$f")
			done
			((${#files[@]})) || continue
			line=$("$SUMMARIZE" "${files[@]}")
			awk -v v="$v" -v p="$([[ $metric == arrival ]] && echo arrival_)" '
				{ for (i = 2; i <= NF; i++) { split($i, kv, "="); m[kv[1]] = kv[2] }
				print v "\t" m[p "p50_us"] "\t" m[p "p99_us"] "\t" m["rps"] }' <<<"$line" >>"$tmp/$s.sweep"
		done < <(for f in $(raw_files "$dir"); do meta "$f" sweep_value; done | sort -un)
	done
	local width wrapped
	width=$(canvas_width)
	wrapped=$(wrap_title "$title")
	gp_plot sweep-latency out="$dir/sweep-latency.png" width="$width" title="$wrapped" \
		swept="$key" data="$tmp" servers="${servers[*]}" colours="$(colours)"
	gp_plot sweep-rps out="$dir/sweep-rps.png" width="$width" title="$wrapped" \
		swept="$key" data="$tmp" servers="${servers[*]}" colours="$(colours)"
}

main "$@"
