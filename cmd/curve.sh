#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# curve.sh [--bound US] [--no-plot] DIR - latency against offered load, from the raw
# files of an open-loop rate sweep (run.sh compare --curve, or any compare
# --sweep rate=...). Nothing is run. Writes into DIR:
#   curve.tsv   one row per run: server, offered and achieved msg/s, the
#               p50/p99/p99.9 (us, from when each message was due), the
#               server's and the client's CPU per echo, the client's CPUs'
#               busy share, whether the point is client-limited, and the
#               p99 of how late bench sent (lag_us: the client's part)
#   curve.png   p99 (solid) and p50 (dashed) against achieved load, the
#               medians of each point's repetitions, one colour per
#               server, log latency axis; a client-limited point (any of
#               its repetitions) is an open circle and never a knee
#   demand.png  the server's CPU per echo against offered load (the
#               service-demand curve): each point's median over its
#               repetitions, with their range
# and prints, in markdown, each server's knee: the highest achieved load
# whose p99 stays under the bound (default 1000 us), before the first
# point over it, for each repetition, then their median (the lower middle
# one of an even count) and range.
#
# Latency is arrival_us (due -> the echo reached the client's kernel) where
# every run has it, else rtt_us. A point is client-limited when bench's
# CPUs were over 90% busy in the measured window (client_busy_s over
# window_s and the client's CPUs: /proc/stat, whoever kept them busy).
set -euo pipefail

# shellcheck source=lib/registry.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/registry.sh"
# shellcheck source=lib/plots.sh
source "$ECHOLAB_ROOT/lib/plots.sh"
prog_name curve.sh
SUMMARIZE=$ECHOLAB_ROOT/analysis/summarize
BOUND=1000
CLIENT_LIMIT=0.90
NO_PLOT=0

usage() {
	sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'
}

meta() { { raw_cat "$1" 2>/dev/null || true; } | sed -n "/^#/!q; s/^# $2=//p" | sed -n 1p; }
# What bench knows at the end (the CPU window) follows the rows.
end_meta() { raw_cat "$1" 2>/dev/null | tail -n 80 | sed -n "s/^# $2=//p" | tail -n 1; }


# table DIR: curve.tsv's rows, every raw file of a rate sweep.
table() {
	local f line label offered rep ncpu
	echo -e "server\toffered\trep\tachieved\tp50_us\tp99_us\tp999_us\tserver_cpu_us\tclient_cpu_us\tclient_busy\tclient_limited\tmetric\tlag_p99_us"
	# The servers in their declared order (servers/*.sh), as compare's.
	for f in "$1"/*-rate[0-9]*-[0-9]*.tsv{,.gz}; do
		[[ -e $f ]] || continue
		label=$(meta "$f" label)
		echo "$(variant_get "${label%-again}" order) $f"
	done | sort -k1,1n -s | while read -r _ f; do
		line=$("$SUMMARIZE" "$f")
		label=$(meta "$f" label)
		offered=$(meta "$f" rate)
		rep=${f##*-}
		rep=${rep%%.*}
		ncpu=$(cpu_list_count "$(meta "$f" client_cpus)")
		# A thinned file: its percentiles from every row, as thin.sh
		# recorded them (the rows kept are too few for a p99.9).
		if [[ -n $(meta "$f" thinned) ]]; then
			local key
			for key in p50_us p99_us p999_us arrival_p50_us arrival_p99_us arrival_p999_us; do
				# shellcheck disable=SC2001 # a regex: the value it replaces is unknown
				line=$(sed "s/ $key=[^ ]*/ $key=$(meta "$f" "full_$key")/" <<<"$line")
			done
		fi
		awk -v s="$label" -v o="$offered" -v r="$rep" -v n="$ncpu" -v lim="$CLIENT_LIMIT" \
			-v rps="$(field "$line" rps)" -v an="$(field "$line" arrival_n)" -v ok="$(field "$line" ok)" \
			-v a50="$(field "$line" arrival_p50_us)" -v a99="$(field "$line" arrival_p99_us)" \
			-v a999="$(field "$line" arrival_p999_us)" \
			-v r50="$(field "$line" p50_us)" -v r99="$(field "$line" p99_us)" -v r999="$(field "$line" p999_us)" \
			-v sc="$(field "$line" server_cpu_us_per_echo)" -v cc="$(field "$line" client_cpu_us_per_echo)" \
			-v cb="$(end_meta "$f" client_busy_s)" -v w="$(end_meta "$f" window_s)" \
			-v lag="$(if [[ -n $(meta "$f" thinned) ]]; then meta "$f" full_lag_p99_us; else raw_lag_p99 "$f"; fi)" '
			BEGIN {
				stamped = ok > 0 && an >= 0.99 * ok	# a few unstamped (a clock step) do not matter
				busy = (cb ~ /^[0-9.]+$/ && w > 0 && n > 0) ? cb / w / n : -1
				printf "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%.3f\t%d\t%s\t%s\n", s, o, r, rps,
					(stamped ? a50 : r50), (stamped ? a99 : r99), (stamped ? a999 : r999),
					sc, cc, busy, (busy > lim), (stamped ? "arrival" : "rtt"), lag
			}'
	done
}

# knees CURVE.TSV: the markdown table of each server's knee.
knees() {
	awk -F'\t' -v bound="$BOUND" '
		NR == 1 { next }
		{
			key = $1 SUBSEP $3
			if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 }
			reps[$1, $3] = 1
			n = ++np[key]; off[key, n] = $2; ach[key, n] = $4; p99[key, n] = $6; lim[key, n] = $11
		}
		END {
			print "| server | knee, msg/s (median of repetitions) | range | each repetition | p99 bound |"
			print "|---|---|---|---|---|"
			for (i = 1; i <= ns; i++) {
				s = order[i]; m = 0; list = ""
				for (r = 1; r <= 100; r++) {
					key = s SUBSEP r
					if (!((s, r) in reps)) continue
					# The points in offered order (insertion sort).
					for (a = 1; a <= np[key]; a++) idx[a] = a
					for (a = 2; a <= np[key]; a++)
						for (b = a; b > 1 && off[key, idx[b]] < off[key, idx[b - 1]]; b--) {
							t = idx[b]; idx[b] = idx[b - 1]; idx[b - 1] = t
						}
					knee = 0; note = ""
					for (a = 1; a <= np[key]; a++) {
						k = idx[a]
						if (lim[key, k]) { note = "+"; break }	# the client, not the server
						if (p99[key, k] > bound) break
						knee = ach[key, k]
					}
					v[++m] = knee
					list = list (list == "" ? "" : ", ") knee note
				}
				# The median, and the range of the repetitions.
				for (a = 2; a <= m; a++)
					for (b = a; b > 1 && v[b] < v[b - 1]; b--) { t = v[b]; v[b] = v[b - 1]; v[b - 1] = t }
				# The median; of an even count, the lower middle one (a
				# knee some repetition found, not a mean of two).
				med = m % 2 ? v[(m + 1) / 2] : v[m / 2]
				printf "| %s | %d | [%d, %d] | %s | %d us |\n", s, med, v[1], v[m], list, bound
			}
		}' "$1"
}

# plot DIR: curve.png, from curve.tsv (plots/curve.gp draws it).
plot() {
	local dir=$1 s c metric servers=() colours=()
	command -v gnuplot >/dev/null || { warn "no gnuplot: curve.png not drawn"; return 0; }
	metric=$(awk -F'\t' 'NR > 1 { m[$12] = 1 } END { print ("rtt" in m) ? "rtt" : "arrival" }' "$dir/curve.tsv")
	while read -r s; do
		c=$(variant_get "$s" colour)
		servers+=("$s")
		colours+=("${c:-#7f7f7f}")
		# Per server, per offered rate: the medians over the repetitions
		# (achieved, p50, p99), client-limited when any repetition was.
		awk -F'\t' -v s="$s" 'NR > 1 && $1 == s' "$dir/curve.tsv" | sort -t$'\t' -k2,2n |
			awk -F'\t' -v OFS='\t' '
				function med(list,   v, n, a, b, t) {
					n = split(list, v, " ")
					for (a = 2; a <= n; a++)
						for (b = a; b > 1 && v[b] + 0 < v[b - 1] + 0; b--) { t = v[b]; v[b] = v[b - 1]; v[b - 1] = t }
					return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
				}
				$2 != off && NR > 1 { print off, med(a), med(p50), med(p99), lim; a = p50 = p99 = ""; lim = 0 }
				{ off = $2; a = a " " $4; p50 = p50 " " $5; p99 = p99 " " $6; if ($11) lim = 1 }
				END { if (NR) print off, med(a), med(p50), med(p99), lim }' >"$dir/.curve-$s.tsv"
		# Per offered rate: CPU per echo's median, min and max.
		awk -F'\t' -v s="$s" 'NR > 1 && $1 == s && $8 ~ /^[0-9.]+$/ { print $2 "\t" $8 }' "$dir/curve.tsv" |
			sort -t$'\t' -k1,1n -k2,2g | awk -F'\t' -v OFS='\t' '
				function flush(   m) {
					m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
					print off, m, v[1], v[n]
				}
				NR > 1 && $1 != off { flush(); n = 0 }
				{ off = $1; v[++n] = $2 }
				END { if (n) flush() }' >"$dir/.demand-$s.tsv"
	done < <(awk -F'\t' 'NR > 1 && !seen[$1]++ { print $1 }' "$dir/curve.tsv")
	gp_plot curve out="$dir/curve.png" metric="$metric" bound="$BOUND" \
		data="$dir" servers="${servers[*]}" colours="${colours[*]}"
	gp_plot demand out="$dir/demand.png" data="$dir" servers="${servers[*]}" colours="${colours[*]}"
	rm -f "$dir"/.curve-*.tsv "$dir"/.demand-*.tsv
}

main() {
	local dir
	while (($#)); do
		case $1 in
		-h | --help) usage; exit 0 ;;
		--no-plot) NO_PLOT=1 ;;
		--bound)
			[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--bound needs microseconds, e.g. 1000"
			BOUND=$2
			shift
			;;
		-*) usage_error "unknown option '$1'" ;;
		*) dir=$1 ;;
		esac
		shift
	done
	[[ -n ${dir:-} ]] || usage_error "which results directory? curve.sh DIR"
	[[ -d $dir ]] || usage_error "'$dir' is not a directory"
	table "$dir" >"$dir/curve.tsv"
	(($(wc -l <"$dir/curve.tsv") > 1)) ||
		usage_error "'$dir' holds no runs of a rate sweep (SERVER-rateN-RUN.tsv): run.sh compare --curve makes them"
	knees "$dir/curve.tsv"
	((NO_PLOT)) || plot "$dir"
}

main "$@"
