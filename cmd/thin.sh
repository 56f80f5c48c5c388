#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# thin.sh K DIR... - make a comparison small enough to commit.
#
# A 5 s run at 75,000 echoes a second is 15 MB of raw rows; a comparison
# is twenty of them. thin.sh keeps every failed row and every Kth ok row of
# each raw file (SERVER[-SWEEP]-RUN.tsv or .tsv.gz; tables such as
# curve.tsv are left alone), writes the run's own counts on top
# (thinned=K, full_samples, full_ok, full_failed, full_arrival_n) and
# gzips it. analysis/summarize and analysis/judge read those counts: a thinned
# file keeps its exact sample counts, request rate and CPU per echo (all
# metadata); summarize's percentiles come from the rows kept, a systematic
# sample of 1 in K. summary.md, written from every row, stays as it was.
# The run's exact p50/p99/p99.9 (both times) and lag p99 are recorded too
# (full_p99_us, ...): analysis/judge takes its p50 and p99 from them, and
# cmd/curve.sh draws a thinned curve from them.
# A file thinned already is thinned again: 1 in K of the rows it kept
# (thinned= multiplied by K), its full run's counts and tails as they were.
# Its summaries.txt (bench's summary line of each run, as compare ran
# them) is gzipped too.
# A DIR's disturbed/ (the runs compare measured again because the host
# disturbed them, SERVER[-SWEEP]-RUN-tryN.tsv) is thinned with it.
set -euo pipefail

usage() { sed -n '/^# thin.sh/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

# thin_file K FILE: FILE.gz with 1 in K ok rows; the original removed.
# full_tails FILE: '# full_KEY=value' lines of the run's exact tail
# percentiles (analysis/summarize of every row) and its lag's p99, which
# the rows kept could not give again: curve.sh reads them.
full_tails() {
	local line key lag
	line=$("$SUMMARIZE" "$1" 2>/dev/null) || return 0
	for key in p50_us p99_us p999_us arrival_p50_us arrival_p99_us arrival_p999_us; do
		printf '# full_%s=%s\n' "$key" "$(sed -n "s/.* $key=\([^ ]*\).*/\1/p" <<<" $line")"
	done
	lag=$(raw_lag_p99 "$1")
	[[ -z $lag ]] || printf '# full_lag_p99_us=%s\n' "$lag"
}

thin_file() {
	local k=$1 f=$2 plain tmp tails
	plain=${f%.gz}
	tmp=$(mktemp "$plain.XXXXXX")
	# A thinned file keeps the counts and tails of its full run: only
	# its rows are thinned again.
	if gzip -dcf "$f" | sed -n '/^#/!q; /^# thinned=/p' | grep -q .; then
		tails=
	else
		tails=$(full_tails "$f")
	fi
	gzip -dcf "$f" | awk -F'\t' -v k="$k" -v name="$f" -v tails="$tails" '
		# The first pass counts (the file is read twice), the second writes.
		FNR == 1 { pass++ }
		pass == 1 {
			if (/^# thinned=/) { before = substr($0, 11) + 0; next }
			if (/^# columns=/) {
				cols = substr($0, 11); n = split(cols, c, "\t")
				for (i = 1; i <= n; i++) col[c[i]] = i
				next
			}
			if (/^#/) next
			samples++
			if ($col["status"] != "ok") { failed++; next }
			ok++
			if ($col["arrival_us"] != "-" && $col["arrival_us"] != "") arrival++
			next
		}
		/^# thinned=/ { printf "# thinned=%d\n", before * k; next }
		/^# columns=/ && before { print; next }
		/^# columns=/ {
			printf "# thinned=%d\n# full_samples=%d\n# full_ok=%d\n# full_failed=%d\n# full_arrival_n=%d\n",
				k, samples, ok, failed, arrival
			if (tails != "") print tails
			print; next
		}
		/^#/ { print; next }
		$col["status"] != "ok" { print; next }
		{ if (seen++ % k == 0) print }
	' - <(gzip -dcf "$f") >"$tmp" || { rm -f "$tmp"; return 1; }
	gzip -9 -c "$tmp" >"$plain.gz"
	rm -f "$tmp"
	[[ $f == "$plain.gz" ]] || rm -f "$f"
}

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
prog_name thin.sh
SUMMARIZE=$ECHOLAB_ROOT/analysis/summarize

main() {
	local k=${1:-} d f
	[[ $k != -h && $k != --help ]] || { usage; return 0; }
	[[ $k =~ ^[1-9][0-9]*$ && $# -ge 2 ]] || { usage >&2; exit 2; }
	shift
	for d in "$@"; do
		[[ -d $d ]] || usage_error "'$d' is no directory"
		for f in "$d"/*.tsv "$d"/*.tsv.gz "$d"/disturbed/*.tsv "$d"/disturbed/*.tsv.gz; do
			# raw files only (SERVER[-SWEEP]-RUN.tsv, -tryN in
			# disturbed/): a directory's tables (curve.tsv,
			# profile.tsv) are not samples
			[[ -e $f && ${f##*/} =~ -[0-9]+(-try[0-9]+)?\.tsv(\.gz)?$ ]] || continue
			thin_file "$k" "$f"
		done
		# compare's log of bench's summary lines, one a run: kept, as
		# the raw files say it again, gzipped (a sweep's: megabytes).
		[[ ! -f $d/summaries.txt ]] || gzip -9f "$d/summaries.txt"
		say "$d: 1 in $k ok rows kept, $(du -sh "$d" | cut -f1)"
	done
}

main "$@"
