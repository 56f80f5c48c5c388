#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# study.sh - the figure the study's notes report, from a comparison's raw
# files: the mean response time, beside the median and p99, and the
# suite's verdicts.
#
#   ./cmd/study.sh [--baseline LABEL] DIR...
#
# Seed 000 reports the mean response time of 1,000 threads sending one
# request each (bench -t 1000 -r 1). compare's summary.md judges medians
# and p99s; this prints, per DIR and server, a markdown row: the runs (and
# how many bench found client-bound), the median over the runs of each
# run's mean, p50 and p99 (client side, rtt_us: what the study's client
# measured, in microseconds; analysis/summarize of each raw file), and
# analysis/judge's verdicts on p50 and p99 against the baseline (default
# user), or why there is none. A comparison with a sweep (--sweep
# threads=100,1000) gives a row per server and value, judged value by
# value: "DIR (threads 1000)".
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUMMARIZE=$root/analysis/summarize
JUDGE=$root/analysis/judge

usage() { sed -n '/^#   \.\/cmd/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

baseline=user
dirs=()
while (($#)); do
	case $1 in
	--baseline) baseline=${2:?--baseline needs a label}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "study.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) [[ -d $1 ]] || { echo "study.sh: '$1' is not a directory" >&2; exit 2; }; dirs+=("$1") ;;
	esac
	shift
done
((${#dirs[@]})) || { echo "study.sh: name a comparison's directory" >&2; usage >&2; exit 2; }
[[ -x $SUMMARIZE && -x $JUDGE ]] || { echo "study.sh: analysis/ is not built: run 'make all'" >&2; exit 1; }

echo "| results | server | runs (client-bound) | mean, us | p50, us | p99, us | p50 vs $baseline | p99 vs $baseline |"
echo "|---|---|---|---|---|---|---|---|"
# study_files DIR: DIR's raw files, a line each, "TAG FILE": TAG is the
# sweep value the file ran at (threads1000 of user-threads1000-3.tsv), or
# - for a comparison without a sweep. judge takes one value at a time.
study_files() {
	local f tag
	for f in "$1"/*.tsv "$1"/*.tsv.gz; do
		[[ -e $f && ${f##*/} =~ -[0-9]+\.tsv(\.gz)?$ ]] || continue
		tag=-
		[[ ${f##*/} =~ -((threads|connections|size|rate)[0-9]+)-[0-9]+\.tsv(\.gz)?$ ]] && tag=${BASH_REMATCH[1]}
		echo "$tag $f"
	done
}

for d in "${dirs[@]}"; do
	mapfile -t entries < <(study_files "$d")
	((${#entries[@]})) || { echo "study.sh: no raw files in $d" >&2; exit 1; }
	for tag in $(printf '%s\n' "${entries[@]}" | cut -d' ' -f1 | sort -uV); do
		files=()
		for e in "${entries[@]}"; do
			[[ ${e%% *} == "$tag" ]] && files+=("${e#* }")
		done
		where=${d%/}
		[[ $tag == - ]] || where+=" (${tag%%[0-9]*} ${tag##*[a-z]})"
		verdicts=$("$JUDGE" --baseline "$baseline" "${files[@]}" 2>/dev/null) || verdicts=
		for f in "${files[@]}"; do
			# awk reads the whole file: grep -m1 would leave zcat writing
			# to a closed pipe, and pipefail would count that a failure.
			printf '%s ' "$(zcat -f "$f" | awk '/^# bottleneck=/ && !b { b = $0 } END { print b ? b : "# bottleneck=-" }')"
			"$SUMMARIZE" "$f"
		done | awk -v dir="$where" -v base="$baseline" -v verdicts="$verdicts" '
			function med(list,   a, n, i, j, t) {
				n = split(list, a, " ")
				for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			# the verdict on FIGURE of LABEL, from judge line by line
			function verdict(label, figure,   n, l, i, k, w) {
				n = split(verdicts, l, "\n")
				for (i = 1; i <= n; i++) {
					if (l[i] !~ ("label=" label " ") || l[i] !~ (" figure=" figure " ")) continue
					split(l[i], w, " ")
					r = x = ""
					for (k in w) {
						if (w[k] ~ /^ratio=/) r = substr(w[k], 7)
						if (w[k] ~ /^excluded=/) x = substr(w[k], 10)
					}
					sub(/.* verdict=/, "", l[i])
					return (r == "-" ? "" : r " ") l[i] (x > 0 ? " (" x " client-bound runs left out)" : "")
				}
				return "-"
			}
			{
				cb = ($1 == "#" && $2 == "bottleneck=client")
				for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				s = v["label"]
				if (!(s in runs)) order[++m] = s
				runs[s]++; bound[s] += cb
				mean[s] = mean[s] " " v["mean_us"]; p50[s] = p50[s] " " v["p50_us"]; p99[s] = p99[s] " " v["p99_us"]
			}
			END {
				for (i = 0; i <= m; i++) {
					# the baseline first, then the others as their files came
					s = i ? order[i] : base
					if (!(s in runs) || (i && s == base)) continue
					printf "| %s | %s | %d (%d) | %.0f | %.0f | %.0f | %s | %s |\n", dir, s, runs[s], bound[s],
						med(mean[s]), med(p50[s]), med(p99[s]),
						s == base ? "baseline" : verdict(s, "p50"), s == base ? "baseline" : verdict(s, "p99")
				}
			}'
	done
done
