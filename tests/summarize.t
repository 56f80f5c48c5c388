#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench --summarize: the summary line from raw files alone, on known data.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# rtt 1..100 us over two files (one per repetition), two failures, 2 s.
raw() {
	local from=$1 to=$2
	printf '# label=demo\n# threads=10\n# rounds=10\n'
	for ((i = from; i <= to; i++)); do
		printf '%d\t0\t5.0\t%d.0\tok\n' $((i % 10)) "$i"
	done
	printf '3\t1\t5.0\t5000000.0\ttimeout\n'
	printf '# elapsed_s=1.000\n'
}
raw 1 60 >"$dir/a.tsv"
raw 61 100 >"$dir/b.tsv"

plan 13

out=$("$BENCH" --summarize "$dir/a.tsv" "$dir/b.tsv")
ok $? "summarize/exit 0"
like "$out" '^summary label=demo threads=10 rounds=10 samples=102 ok=100 failed=2 p50_us=50\.0 p90_us=90\.0 p99_us=99\.0 p999_us=100\.0 max_us=100\.0 mean_us=50\.5 sd_us=29\.0 rps=50$' \
	"summarize/pooled summary of two files"
is "$(field "$out" rps)" 50 "summarize/rps: 100 ok over 2 s"
is "$(field "$out" failed)" 2 "summarize/failures counted, not in the percentiles"

out=$("$BENCH" --summarize "$dir/a.tsv")
is "$(field "$out" samples)" 61 "summarize/one file: its samples"
is "$(field "$out" p50_us)" 30.0 "summarize/one file: its p50"

printf '# label=other\n# elapsed_s=1\n1\t0\t1.0\t1.0\tok\n' >"$dir/c.tsv"
out=$("$BENCH" --summarize "$dir/a.tsv" "$dir/c.tsv" 2>&1)
is $? 2 "summarize/two servers: exit 2"
like "$out" "summarize one server at a time" "summarize/two servers: says why"

printf 'not a raw file\n' >"$dir/d.tsv"
out=$("$BENCH" --summarize "$dir/d.tsv" 2>&1)
is $? 2 "summarize/garbage: exit 2"
like "$out" "not a bench raw file" "summarize/garbage: says why"

out=$("$BENCH" --summarize "$dir/missing.tsv" 2>&1)
is $? 2 "summarize/missing file: exit 2"

printf '# label=empty\n# elapsed_s=1\n' >"$dir/e.tsv"
out=$("$BENCH" --summarize "$dir/e.tsv")
is "$(field "$out" p50_us)" nan "summarize/no samples: p50 is nan"
is "$(field "$out" samples)" 0 "summarize/no samples: samples=0"

done_testing
