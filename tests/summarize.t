#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# analysis/summarize: the summary line from raw files alone, on known data.
# No root, no server. Its cases:
#   pooled           two first-format files pooled: every figure, rps, failures
#   one-file         one file alone: its samples and p50
#   two-servers      files of two labels: exit 2, says why
#   garbage          a file that is not a raw file: exit 2, says why
#   missing-file     a file that does not exist: exit 2
#   no-samples       no rows: samples=0, p50 nan
#   columns-by-name  the present format's columns= line: ok and p50 from
#                    rtt_us; one without rtt_us says why
#   arrival          arrival_us: '-' is no stamp, its p50 and max
#   client-rq-share  the client's CPU wait over its thread time
#   samples          --samples arrival and rtt: the rows they print
#   sent-us          rps over first send to last echo, not elapsed_s
#   cpu              CPU per echo pooled over files as busy time over echoes
#   thin             cmd/thin.sh keeps counts, rate and CPU; thinned twice;
#                    a table beside the raw files left alone
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="pooled one-file two-servers garbage missing-file no-samples
	columns-by-name arrival client-rq-share samples sent-us cpu thin"
select_cases "$@"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# raw FROM TO: a first-format file, rtt FROM..TO us, one failure, 1 s.
raw() {
	local from=$1 to=$2 i
	printf '# label=demo\n# threads=10\n# rounds=10\n'
	for ((i = from; i <= to; i++)); do
		printf '%d\t0\t5.0\t%d.0\tok\n' $((i % 10)) "$i"
	done
	printf '3\t1\t5.0\t5000000.0\ttimeout\n'
	printf '# elapsed_s=1.000\n'
}

# first_format: a.tsv and b.tsv, rtt 1..100 us over two files (one per
# repetition), two failures, 2 s.
first_format() {
	[[ -e $dir/b.tsv ]] && return
	raw 1 60 >"$dir/a.tsv"
	raw 61 100 >"$dir/b.tsv"
}

# present_format: f.tsv, in the present format: columns by name,
# arrival_us beside rtt_us, '-' where the kernel gave no stamp, the
# client's CPU wait after the rows.
present_format() {
	local i
	[[ -e $dir/f.tsv ]] && return
	{
		printf '# label=now\n# threads=2\n# rounds=5\n'
		printf '# columns=thread\tround\tconnect_us\trtt_us\tarrival_us\tlag_us\tstatus\n'
		for ((i = 1; i <= 10; i++)); do
			printf '%d\t%d\t-\t%d.0\t%d.0\t-\tok\n' $((i % 2)) $((i / 2)) $((i * 10)) "$i"
		done
		printf '0\t9\t-\t500.0\t-\t-\tok\n'
		printf '1\t9\t-\t-\t-\t-\ttimeout\n'
		printf '# elapsed_s=1.0\n# client_rq_wait_s=0.5\n# client_thread_s=2.0\n'
	} >"$dir/f.tsv"
}

test_pooled() {
	local out
	first_format
	out=$("$SUMMARIZE" "$dir/a.tsv" "$dir/b.tsv")
	ok $? "exit 0"
	like "$out" '^summary label=demo threads=10 rounds=10 samples=102 ok=100 failed=2 p50_us=50\.0 p90_us=90\.0 p99_us=99\.0 p999_us=100\.0 max_us=100\.0 mean_us=50\.5 sd_us=29\.0 rps=50 arrival_n=0 arrival_p50_us=nan ' \
		"pooled summary of two files (first-format files: no arrival)"
	is "$(field "$out" rps)" 50 "rps: 100 ok over 2 s"
	is "$(field "$out" failed)" 2 "failures counted, not in the percentiles"
}

test_one_file() {
	local out
	first_format
	out=$("$SUMMARIZE" "$dir/a.tsv")
	is "$(field "$out" samples)" 61 "its samples"
	is "$(field "$out" p50_us)" 30.0 "its p50"
}

test_two_servers() {
	local out
	first_format
	printf '# label=other\n# elapsed_s=1\n1\t0\t1.0\t1.0\tok\n' >"$dir/c.tsv"
	out=$("$SUMMARIZE" "$dir/a.tsv" "$dir/c.tsv" 2>&1)
	is $? 2 "exit 2"
	like "$out" "summarize one server at a time" "says why"
}

test_garbage() {
	local out
	printf 'not a raw file\n' >"$dir/d.tsv"
	out=$("$SUMMARIZE" "$dir/d.tsv" 2>&1)
	is $? 2 "exit 2"
	like "$out" "not a bench raw file" "says why"
}

test_missing_file() {
	"$SUMMARIZE" "$dir/missing.tsv" >/dev/null 2>&1
	is $? 2 "exit 2"
}

test_no_samples() {
	local out
	printf '# label=empty\n# elapsed_s=1\n' >"$dir/e.tsv"
	out=$("$SUMMARIZE" "$dir/e.tsv")
	is "$(field "$out" p50_us)" nan "p50 is nan"
	is "$(field "$out" samples)" 0 "samples=0"
}

test_columns_by_name() {
	local out
	present_format
	out=$("$SUMMARIZE" "$dir/f.tsv")
	is "$(field "$out" ok)" 11 "11 ok samples"
	is "$(field "$out" p50_us)" 60.0 "rtt p50 from rtt_us"
	printf '# columns=thread\tround\n1\t2\n' >"$dir/g.tsv"
	out=$("$SUMMARIZE" "$dir/g.tsv" 2>&1)
	like "$out" "lacks thread, rtt_us or status" "a columns line without rtt_us: says why"
}

test_arrival() {
	local out
	present_format
	out=$("$SUMMARIZE" "$dir/f.tsv")
	is "$(field "$out" arrival_n)" 10 "'-' is no stamp, not a zero"
	is "$(field "$out" arrival_p50_us)" 5.0 "p50 from arrival_us"
	is "$(field "$out" arrival_max_us)" 10.0 "max from arrival_us"
}

test_client_rq_share() {
	local out
	present_format
	out=$("$SUMMARIZE" "$dir/f.tsv")
	is "$(field "$out" client_rq_share)" 0.25 "waited / thread time"
}

test_samples() {
	local out
	present_format
	out=$("$SUMMARIZE" --samples arrival "$dir/f.tsv" | wc -l)
	is "$out" 10 "--samples arrival: the 10 stamped ok samples"
	out=$("$SUMMARIZE" --samples rtt "$dir/f.tsv" | tail -n1)
	is "$out" $'0\t500.0' "--samples rtt: thread and rtt_us"
}

# The span from sent_us, not elapsed_s: 10 ok rows sent 100 us apart, each
# back 100 us later (the last one's rtt_us counts from its intended send,
# 50 us before it left: lag_us), so 1 ms from the first send to the last
# echo; elapsed_s (1 s) is what a file without sent_us would use.
test_sent_us() {
	local out i
	{
		printf '# label=span\n# threads=1\n# rounds=1\n'
		printf '# columns=thread\tround\tconnect_us\trtt_us\tarrival_us\tlag_us\tsent_us\tstatus\n'
		for ((i = 0; i < 9; i++)); do
			printf '0\t0\t-\t100.0\t-\t-\t%d.0\tok\n' $((i * 100))
		done
		printf '0\t0\t-\t150.0\t-\t50.0\t900.0\tok\n'
		printf '0\t1\t20.0\t-\t-\t-\t-\trefused\n'
		printf '# elapsed_s=1.0\n'
	} >"$dir/span.tsv"
	out=$("$SUMMARIZE" "$dir/span.tsv")
	is "$(field "$out" rps)" 10000 "rps over first send to last echo (1 ms)"
	is "$(field "$out" failed)" 1 "a sample never sent ('-') is still counted"
	{
		printf '# label=span\n'
		for ((i = 0; i < 11; i++)); do printf '0\t0\t5.0\t10.0\tok\n'; done
		printf '# elapsed_s=1.0\n'
	} >"$dir/span-old.tsv"
	out=$("$SUMMARIZE" "$dir/span.tsv" "$dir/span-old.tsv")
	is "$(field "$out" rps)" 21 "one file's span, another's elapsed_s (21 ok in 1.001 s)"
}

# cpu BUSY ECHOES: a file whose server and client were busy BUSY seconds
# for ECHOES echoes, split by kind.
cpu() {
	local busy=$1 echoes=$2
	printf '# label=cpu\n# cpu_scope=split\n'
	printf '0\t0\t5.0\t10.0\tok\n'
	printf '# cpu_echoes=%d\n' "$echoes"
	printf '# server_busy_s=%s\n# server_usr_s=%s\n# server_sys_s=%s\n# server_softirq_s=%s\n# server_irq_s=0\n' \
		"$busy" "$(awk -v b="$busy" 'BEGIN { print b / 5 }')" "$(awk -v b="$busy" 'BEGIN { print b * 3 / 5 }')" \
		"$(awk -v b="$busy" 'BEGIN { print b / 5 }')"
	printf '# client_busy_s=%s\n# client_usr_s=%s\n# client_sys_s=0\n# client_softirq_s=0\n# client_irq_s=0\n' \
		"$busy" "$busy"
	printf '# elapsed_s=1.0\n'
}

# CPU per echo pooled: busy time over echoes, file by file. 5 us per echo
# on 100000 echoes and 10 on 300000 make 8.75, not their mean 7.5.
test_cpu() {
	local out
	cpu 0.5 100000 >"$dir/cpu1.tsv"
	cpu 3.0 300000 >"$dir/cpu2.tsv"
	out=$("$SUMMARIZE" "$dir/cpu1.tsv" "$dir/cpu2.tsv")
	is "$(field "$out" server_cpu_us_per_echo)" 8.75 "pooled as summed busy time over summed echoes"
	is "$(field "$out" server_usr_us_per_echo)/$(field "$out" server_sys_us_per_echo)/$(field "$out" server_softirq_us_per_echo)/$(field "$out" server_irq_us_per_echo)" \
		1.75/5.25/1.75/0.00 "each kind pooled alike"
	is "$(field "$out" client_cpu_us_per_echo)/$(field "$out" client_usr_us_per_echo)" 8.75/8.75 \
		"the client's CPUs pooled alike"
	is "$(field "$out" cpu_scope)" split "the files' cpu_scope"
	printf '# label=cpu\n0\t0\t5.0\t10.0\tok\n# elapsed_s=1.0\n' >"$dir/cpu-old.tsv"
	out=$("$SUMMARIZE" "$dir/cpu1.tsv" "$dir/cpu-old.tsv")
	is "$(field "$out" server_cpu_us_per_echo)" 5.00 "a file without CPU time adds no echoes to it"
	out=$("$SUMMARIZE" "$dir/cpu-old.tsv")
	is "$(field "$out" server_cpu_us_per_echo)/$(field "$out" cpu_scope)" nan/unknown \
		"none known: nan"
}

# cmd/thin.sh: a thinned file keeps its counts, its rate and its CPU per
# echo exactly (metadata); its percentiles come from the rows kept.
test_thin() {
	local i before jbefore after again thin=$dir/thin
	mkdir -p "$thin"
	{
		printf '# label=user\n# repeat=1\n# columns=thread\tround\tconnect_us\trtt_us\tarrival_us\tlag_us\tstatus\n'
		for ((i = 1; i <= 1000; i++)); do printf '0\t0\t-\t%d.0\t%d.0\t-\tok\n' "$i" "$i"; done
		printf '0\t0\t-\t9.0\t-\t-\ttimeout\n'
		printf '# elapsed_s=2.000\n# window_s=2.000\n# server_cpu_us_per_echo=7.500\n# bottleneck=server\n'
	} >"$thin/user-1.tsv"
	before=$("$SUMMARIZE" "$thin/user-1.tsv")
	jbefore=$("$JUDGE" "$thin/user-1.tsv" | grep -E 'figure=(rps|cpu) ')
	printf 'rate\tp99_us\n1000\t250.0\n' >"$thin/curve.tsv"
	"$ECHOLAB_ROOT/cmd/thin.sh" 10 "$thin" >/dev/null
	ok $? "thin.sh 10 exits 0"
	[[ -f $thin/curve.tsv && ! -e $thin/curve.tsv.gz ]]
	ok $? "thin.sh leaves a table that is no raw file (curve.tsv) as it was"
	after=$("$SUMMARIZE" "$thin/user-1.tsv.gz")
	is "$(field "$after" samples)/$(field "$after" ok)/$(field "$after" failed)/$(field "$after" rps)/$(field "$after" arrival_n)" \
		"$(field "$before" samples)/$(field "$before" ok)/$(field "$before" failed)/$(field "$before" rps)/$(field "$before" arrival_n)" \
		"samples, ok, failed, rps and arrival_n as before thinning"
	is "$(gzip -dc "$thin/user-1.tsv.gz" | grep -vc '^#')" 101 "1 in 10 ok rows kept, and the failed one"
	is "$(field "$after" p50_us)" 491.0 "percentiles from the rows kept"
	is "$("$JUDGE" "$thin/user-1.tsv.gz" | grep -E 'figure=(rps|cpu) ')" "$jbefore" \
		"judge's rps and cpu as before thinning"
	# Thinned again: 1 in 10 of the rows kept, the full run's counts as they were.
	"$ECHOLAB_ROOT/cmd/thin.sh" 10 "$thin" >/dev/null
	ok $? "thinning a thinned file again exits 0"
	again=$("$SUMMARIZE" "$thin/user-1.tsv.gz")
	is "$(gzip -dc "$thin/user-1.tsv.gz" | sed -n 's/^# thinned=//p')/$(gzip -dc "$thin/user-1.tsv.gz" | grep -vc '^#')" 100/11 \
		"thinned again, thinned=100 and 1 in 100 ok rows kept, and the failed one"
	is "$(field "$again" samples)/$(field "$again" ok)/$(field "$again" rps)/$(gzip -dc "$thin/user-1.tsv.gz" | grep -c '^# full_samples=')" \
		"$(field "$before" samples)/$(field "$before" ok)/$(field "$before" rps)/1" \
		"thinned again, the full run's counts kept once"
}

run_tests
plan_at_end
