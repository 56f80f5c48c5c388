#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# analysis/judge on synthetic raw files: servers drawn from one distribution
# are never declared different, servers clearly apart get the verdict that
# points the right way, CPU per echo is judged only at equal rates,
# client-bound runs are left out of latency and counted, too few runs get
# no verdict, bad input says why. No root, no server; KEEP=1 keeps the
# generated files. Its cases:
#   help               --help: exit 0, names its flags
#   same-distribution  two labels from one distribution (four data sets):
#                      equivalent or inconclusive for every figure
#   same-runs          the same runs under two labels at equal load:
#                      equivalent on every figure, CPU per echo too; ratio 1
#   apart              servers clearly apart: faster, slower the right way;
#                      ratios and the baseline's line
#   equal-load         at one rate, cheaper and costlier the right way, an
#                      8% difference in 1% noise declared, one in 10% not
#   unequal-rates      rates 5% apart: CPU per echo not judged, saying why;
#                      --rate-tolerance 10 judges it
#   coverage           5 pairs: the ratio's interval covers 93.75%, said in
#                      the line and the table
#   cpu-scope          cpu_scope all against the baseline's split: CPU not
#                      compared, latency still judged
#   machine            the server's and the client's CPU per echo together:
#                      work moved to the client's CPU is not cheaper there,
#                      a server counted over every CPU is judged there
#   threshold          --threshold 70: differences inside it not declared
#   other-baseline     --baseline fast: user is slower than it
#   reproducible       the same output twice, with or without another server
#   known-medians      rps and cpu medians of runs with no noise
#   paired             6% dearer under a 15% drift, paired by repeat=: costlier
#   unpaired           the same without partners: the drift hides it
#                      (inconclusive)
#   paired-twins       the same drifting runs under two labels: ratio 1 exactly
#   two-directories    two compares' files: pairs within each, no warning
#   unpartnered        a run without a partner unpairs the server
#   client-bound       client-bound runs left out of latency and rps, counted;
#                      a saturated client with the server not is client-bound
#   disturbed          runs the host disturbed (steal, zero busy with echoes)
#                      left out of every figure and listed with their
#                      reasons, their pairs dropped: the verdict changes
#   disturbed-rules    each rule alone: steal over 3% of either side's
#                      window, busy below zero by over a tick, CPU per echo
#                      under 1 us; files without the newer keys still judged
#   too-few-runs       two runs, or a baseline of two: too few runs
#   no-cpu             no server_cpu_us_per_echo: the figure is absent
#   no-stamps          latency from rtt_us unless every echo is stamped
#   thinned            a thinned file's p50 and p99 are its trailer's
#                      (full_arrival_*, else full_p50_us, full_p99_us),
#                      not its rows'; a trailer without them, the rows'
#   window             rps over window_s first
#   server-name        no label: server= names the server
#   gzipped            gzipped raw files
#   bad-input          bad usage and files: exit 1 or 2, says why
#   markdown           --markdown: header, rows, too few runs, the paragraph
#   agreement          cmd/agreement.sh: comparisons side by side; --point N
#                      takes the Nth rate of each equal-load compare
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="help same-distribution same-runs apart equal-load unequal-rates
	coverage cpu-scope machine threshold
	other-baseline reproducible known-medians paired unpaired paired-twins
	two-directories unpartnered client-bound disturbed plot-notes disturbed-rules
	too-few-runs no-cpu no-stamps thinned
	window server-name gzipped bad-input markdown agreement"
select_cases "$@"

dir=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$dir"' EXIT

# The raw files the cases judge, made here, and how to read judge's lines:
# tests/judge-lib.sh.
# shellcheck source=tests/judge-lib.sh
source "$(dirname "$0")/judge-lib.sh"

test_help() {
	local out
	out=$("$JUDGE" --help)
	ok $? "exit 0"
	like "$out" "--baseline LABEL.*--threshold PCT.*--markdown" "names its flags"
}

# ---- one distribution, two labels: never a difference ----------------------------

test_same_distribution() {
	local set out count noise
	for set in 1 2 3 4; do
		same_set "$set"
		read -r _ count _ _ _ noise <<<"${SAME_SETS[set - 1]}"
		out=$("$JUDGE" "$dir/same$set"/*.tsv)
		no_difference "set $set ($count runs, noise $((noise / 10))%): equivalent or inconclusive, every figure" "$out" other
	done
}

# The same runs under a second label: identical data never differ.
test_same_runs() {
	local out
	same_set 1
	twins same1 copy
	out=$("$JUDGE" "$dir"/copy/*.tsv)
	no_difference "equivalent on every figure, CPU per echo too" "$out" twin equivalent
	like "$(line "$out" twin p50)" " ratio=1\.000 " "ratio 1"
}

# ---- clearly apart: verdicts point the right way -----------------------------------

test_apart() {
	local out f
	apart_runs
	out=$("$JUDGE" "$dir"/apart/*.tsv)
	for f in p50 p99 rps; do
		is "$(verdict "$out" fast "$f")" faster "fast is faster ($f)"
		is "$(verdict "$out" slow "$f")" slower "slow is slower ($f)"
	done
	like "$(line "$out" fast p50)" " ratio=0\.[0-9]+ ratio_lo=0\.[0-9]+ ratio_hi=0\.[0-9]+ " \
		"a lower latency is a ratio below 1, interval too"
	like "$(line "$out" fast rps)" " ratio=1\.[0-9]+ ratio_lo=1\.[0-9]+ ratio_hi=1\.[0-9]+ " \
		"more requests a second is a ratio above 1, interval too"
	like "$(line "$out" user p50)" "^judge label=user figure=p50 source=arrival_us n=5 excluded=0 disturbed=0 median=[0-9.]+ lo=[0-9.]+ hi=[0-9.]+ coverage=0\.938 ratio=- ratio_lo=- ratio_hi=- ratio_coverage=- pairs=0 verdict=-$" \
		"the baseline's line: its median, no ratio, 5 runs cover 93.8%"
	is "$(head -n1 <<<"$out" | cut -d' ' -f2)" label=user "the baseline comes first"
}

# At one rate, CPU per echo is judged: cheaper and costlier the right way;
# 8% in 1% noise is declared, in 10% it is inconclusive, never equivalent.
test_equal_load() {
	local out
	equal_runs
	out=$("$JUDGE" "$dir"/equal/*.tsv)
	is "$(verdict "$out" cheap cpu)" cheaper "less CPU per echo at one rate is cheaper"
	is "$(verdict "$out" dear cpu)" costlier "more CPU per echo at one rate is costlier"
	like "$(line "$out" dear cpu)" " ratio=1\.[0-9]+ ratio_lo=1\.[0-9]+ ratio_hi=1\.[0-9]+ ratio_coverage=0\.938 pairs=5 " \
		"a higher cost is a ratio above 1, paired over 5 repetitions"
	is "$(verdict "$out" near cpu)" costlier "8% dearer in 1% noise: costlier"
	out=$("$JUDGE" "$dir"/near10/*.tsv)
	is "$(verdict "$out" near cpu)" inconclusive "8% dearer in 10% noise: inconclusive, not equivalent"
}

# Rates 5% apart: the CPU per echo of two loads, not of two servers.
test_unequal_rates() {
	local out
	seed=46
	runs rates user 5 100 20000 1500
	RPS_NOISE=0 runs rates other 5 100 21000 1500
	out=$("$JUDGE" "$dir"/rates/*.tsv)
	like "$(verdict "$out" other cpu)" "^not judged \(rates differ: 2[01][0-9]{3} against (19|20)[0-9]{3} req/s\)$" \
		"rates 5% apart: CPU per echo not judged, the rates said"
	like "$(line "$out" other cpu)" " ratio_lo=- ratio_hi=- " "rates 5% apart: no interval"
	is "$(verdict "$out" other rps)" faster "rates 5% apart: req/s still judged"
	out=$("$JUDGE" --rate-tolerance 10 "$dir"/rates/*.tsv)
	like "$(verdict "$out" other cpu)" "^(equivalent|inconclusive)$" "--rate-tolerance 10: judged"
	out=$("$JUDGE" --markdown "$dir"/rates/*.tsv)
	like "$(grep '^| other |' <<<"$out")" "not judged \(rates differ: [0-9]+ against [0-9]+ req/s\) \|$" "--markdown: the refusal in the table"
	like "$out" "judged only where both servers ran at the same achieved rate" "--markdown: the paragraph says why"
}

# Five pairs: [min, max] of their ratios covers 1 - 2/32 = 93.75%.
test_coverage() {
	local out
	equal_runs
	out=$("$JUDGE" "$dir"/equal/user-*.tsv "$dir"/equal/cheap-*.tsv)
	like "$(line "$out" cheap cpu)" " ratio_coverage=0\.938 pairs=5 " "5 pairs: ratio_coverage=0.938"
	out=$("$JUDGE" "$dir"/equal/user-*.tsv "$dir"/equal/cheap-[1-4].tsv)
	like "$(line "$out" cheap cpu)" " ratio_coverage=0\.950 pairs=0 " "4 runs, unpaired: the bootstrap's 0.950"
	out=$("$JUDGE" --markdown "$dir"/equal/user-*.tsv "$dir"/equal/cheap-*.tsv)
	like "$(grep '^| cheap |' <<<"$out")" "\] 93\.8% cheaper \|$" "--markdown: 93.8% after the interval"
}

# CPU counted over every CPU (kecho's unbound workqueue) against the
# baseline's own CPUs is not a ratio of two servers' costs.
test_cpu_scope() {
	local out f
	apart_runs
	mkdir -p "$dir/scope"
	cp "$dir"/apart/user-*.tsv "$dir/scope/"
	for f in "$dir"/apart/slow-*.tsv; do
		sed 's/^# bottleneck=/# cpu_scope=all\n&/' "$f" >"$dir/scope/${f##*/}"
	done
	out=$("$JUDGE" "$dir"/scope/*.tsv)
	is "$(verdict "$out" slow cpu)" "not comparable (cpu_scope differs)" \
		"cpu_scope all against the baseline's split: CPU not compared"
	like "$(line "$out" slow cpu)" " ratio=- ratio_lo=- ratio_hi=- " \
		"cpu_scope all against the baseline's split: no ratio either"
	is "$(verdict "$out" slow p50)" slower "cpu_scope differs: latency still judged"
}

# The machine's CPU per echo, the server's and the client's CPUs together:
# a server whose work moved to the client's CPU is cheaper on its own CPU
# and not on the machine's; one counted over every CPU, not comparable on
# CPU, is on the machine's. Files without the client's figure have no
# machine column.
test_machine() {
	local out m
	seed=41
	NOISE=5 BUSY="1 1" CLIENT_CPU=2000 runs machine user 5 100 1000 1000
	NOISE=5 BUSY="1 1" CLIENT_CPU=2300 runs machine moved 5 100 1000 700
	NOISE=5 SCOPE=all CLIENT_CPU=2500 runs machine anywhere 5 100 1000 3000
	out=$("$JUDGE" "$dir"/machine/*.tsv)
	m=$(line "$out" user machine | sed 's/.* median=\([^ ]*\) .*/\1/')
	awk -v m="$m" 'BEGIN { exit !(m >= 29.9 && m <= 30.1) }'
	ok $? "machine: the server's CPU per echo plus the client's (10 + 20 us: $m)"
	is "$(verdict "$out" moved cpu)" cheaper "machine: work moved to the client's CPU is cheaper on the server's"
	is "$(verdict "$out" moved machine)" equivalent "... and equivalent on the machine's"
	is "$(verdict "$out" anywhere cpu)" "not comparable (cpu_scope differs)" \
		"machine: a server counted over every CPU is not comparable on CPU"
	is "$(verdict "$out" anywhere machine)" equivalent "... and judged on the machine's (its own figure)"
	apart_runs
	out=$("$JUDGE" --markdown "$dir"/apart/*.tsv)
	[[ $out != *"machine CPU"* && $out == *"CPU vs user"* ]]
	ok $? "machine: no client figure in the files, no machine column"
}

test_threshold() {
	local out
	apart_runs
	out=$("$JUDGE" --threshold 70 --rate-tolerance 60 "$dir"/apart/*.tsv)
	no_difference "--threshold 70: differences inside it are not declared" "$out" fast
}

test_other_baseline() {
	local out
	apart_runs
	out=$("$JUDGE" --baseline fast "$dir"/apart/*.tsv)
	is "$(verdict "$out" user p50)" slower "--baseline fast: user is slower than it"
}

# Reproducible, and each comparison on its own: another server's runs
# among the files change no line of this one.
test_reproducible() {
	local a b
	apart_runs
	a=$("$JUDGE" "$dir"/apart/user-*.tsv "$dir"/apart/fast-*.tsv)
	b=$("$JUDGE" "$dir"/apart/*.tsv)
	is "$(line "$a" fast p99)" "$(line "$b" fast p99)" "the same line with or without another server"
	is "$("$JUDGE" "$dir"/apart/*.tsv)" "$b" "the same output twice"
}

# Known medians: every run of 'flat' has the same level, noise 0.
test_known_medians() {
	local out
	seed=3
	NOISE=0 runs flat user 5 100 20000 1500
	out=$("$JUDGE" "$dir"/flat/*.tsv)
	is "$(line "$out" user rps | grep -o ' median=[^ ]* lo=[^ ]* hi=[^ ]*')" " median=20000 lo=20000 hi=20000" \
		"rps: ok samples over elapsed_s"
	is "$(line "$out" user cpu | grep -o ' n=5 excluded=0 disturbed=0 median=[^ ]*')" " n=5 excluded=0 disturbed=0 median=15.00" \
		"cpu: server_cpu_us_per_echo as it is"
}

# ---- paired by repetition ---------------------------------------------------------

test_paired() {
	local out
	drift_runs
	out=$("$JUDGE" "$dir"/drift/*.tsv)
	is "$(verdict "$out" dearer cpu)" costlier "6% dearer in every repetition is costlier under a 15% drift"
	like "$(line "$out" dearer cpu)" " ratio=1\.0[5-7][0-9] ratio_lo=1\.0[3-9][0-9] ratio_hi=1\.0[5-9][0-9] ratio_coverage=0\.992 pairs=8 " \
		"the median of the 8 pairs' ratios, near 1.06"
	out=$("$JUDGE" --markdown "$dir"/drift/*.tsv)
	like "$out" "\] 99\.2% costlier \|" "--markdown: a paired ratio carries its coverage, no mark"
}

test_unpaired() {
	local out
	drift_runs
	out=$("$JUDGE" "$dir"/nopair/*.tsv)
	is "$(verdict "$out" dearer cpu)" inconclusive "no partner of the same repeat: the drift hides it (inconclusive)"
	like "$(line "$out" dearer cpu)" " pairs=0 " "pairs=0"
	out=$("$JUDGE" --markdown "$dir"/nopair/*.tsv)
	like "$out" "\] 95\.0% inconclusive \(unpaired\) \|" "--markdown: an unpaired ratio says so, with its nominal coverage"
}

# The same drifting runs under two labels: every pair's ratio is 1.
test_paired_twins() {
	local out
	drift_runs
	twins drift drifttwin
	out=$("$JUDGE" "$dir"/drifttwin/*.tsv)
	no_difference "the same drifting runs under two labels: equivalent" "$out" twin equivalent
	like "$(line "$out" twin cpu)" " ratio=1\.000 ratio_lo=1\.000 ratio_hi=1\.000 ratio_coverage=0\.992 pairs=8 verdict=equivalent$" \
		"identical pairs give 1 exactly: equivalent"
}

# Two compares' files together: each repetition pairs within its own
# directory, and the repeat numbers both use are no warning.
test_two_directories() {
	local out
	drift_runs
	cp -r "$dir/drift" "$dir/drift2"
	out=$("$JUDGE" "$dir"/drift/*.tsv "$dir"/drift2/*.tsv 2>"$dir/drift2.err")
	like "$(line "$out" dearer cpu)" " pairs=16 verdict=costlier$" "16 pairs, within each"
	is "$(cat "$dir/drift2.err")" "" "no 'given twice' warning"
}

# A run without a partner unpairs the server: one of dearer's runs gone.
test_unpartnered() {
	local out
	drift_runs
	cp -r "$dir/drift" "$dir/unpartnered"
	rm "$dir/unpartnered/dearer-3.tsv"
	out=$("$JUDGE" "$dir"/unpartnered/*.tsv)
	like "$(line "$out" dearer cpu)" " n=7 .* pairs=0 " "a baseline run without a partner: unpaired"
}

# ---- client-bound runs -------------------------------------------------------------

test_client_bound() {
	local out
	seed=5
	runs bound user 5 100 20000 1500
	runs bound other 5 100 20000 1500
	BOUND=client mkrun bound/other-6.tsv other 6 5000 500 1500
	BOUND=client mkrun bound/other-7.tsv other 7 5000 500 1500
	out=$("$JUDGE" "$dir"/bound/*.tsv)
	like "$(line "$out" other p99)" " n=5 excluded=2 " "left out of p99 and counted"
	like "$(line "$out" other rps)" " n=5 excluded=2 " "left out of rps and counted"
	like "$(line "$out" other cpu)" " n=7 excluded=0 " "kept for cpu"
	no_difference "their latency does not make a difference" "$out" other

	# A client whose CPUs were busy 95% of the window, the server's not, set
	# the pace, whatever bench's delay rule said; a server as busy as it did not.
	WINDOW=5 BUSY="4.5 4.99" mkrun bound/other-8.tsv other 8 100 20000 1500
	WINDOW=5 BUSY="4.99 4.99" mkrun bound/other-9.tsv other 9 100 20000 1500
	WINDOW=5 BUSY="4.5 4.5" mkrun bound/other-10.tsv other 10 100 20000 1500
	out=$("$JUDGE" "$dir"/bound/*.tsv)
	like "$(line "$out" other rps)" " n=7 excluded=3 " \
		"a saturated client with the server not is client-bound; both saturated or neither is not"
}

# ---- runs the host disturbed -----------------------------------------------------------

test_disturbed() {
	local out
	disturbed_runs
	out=$("$JUDGE" "$dir"/disturbed/*.tsv)
	like "$(line "$out" other cpu)" " n=5 excluded=0 disturbed=2 " "left out of cpu and counted"
	like "$(line "$out" other p50)" " n=5 excluded=0 disturbed=2 " "left out of latency too"
	like "$(line "$out" other rps)" " n=5 excluded=0 disturbed=2 " "... and of rps"
	like "$(line "$out" user cpu)" " n=7 excluded=0 disturbed=0 " "their partners stay in user's own figures"
	like "$(line "$out" other cpu)" " pairs=5 verdict=equivalent$" \
		"the two pairs drop out, the five others stand: equivalent"
	like "$(grep '^disturbed label=other repeat=6 ' <<<"$out")" \
		"^disturbed label=other repeat=6 file=$dir/disturbed/other-6\.tsv reason=server steal 18\.0% of the window \(0\.90 s\); client steal 30\.0% of the window \(1\.50 s\); server busy 0\.40 s below zero; server CPU 0\.00 us per echo with 200 echoes$" \
		"zero busy with echoes: listed with every reason"
	like "$(grep '^disturbed label=other repeat=7 ' <<<"$out")" \
		" file=$dir/disturbed/other-7\.tsv reason=server steal 10\.0% of the window \(0\.50 s\)$" \
		"steal over the bound: listed, its reason the steal alone"
	is "$(grep -c '^disturbed ' <<<"$out")" 2 "no other run listed"

	# What the rule changes: the same runs, with the evidence of the 7th
	# run's steal gone (its steal line) and the 6th gone; the 7th's low
	# reading then counts and unsettles the verdict.
	mkdir -p "$dir/undisturbed"
	cp "$dir"/disturbed/user-*.tsv "$dir"/disturbed/other-[1-5].tsv "$dir/undisturbed/"
	sed '/^# server_steal_s=/d' "$dir/disturbed/other-7.tsv" >"$dir/undisturbed/other-7.tsv"
	out=$("$JUDGE" "$dir"/undisturbed/*.tsv)
	like "$(line "$out" other cpu)" " n=6 excluded=0 disturbed=0 .* verdict=inconclusive$" \
		"the stolen run counted: inconclusive, where leaving it out gave equivalent"

	out=$("$JUDGE" --markdown "$dir"/disturbed/*.tsv)
	like "$(grep '^| other |' <<<"$out")" "^\| other \| 7, 2 disturbed \|" "--markdown: the runs column counts them"
	like "$out" $'\n- `other-6\\.tsv` \\(other, repeat 6\\): server steal 18\\.0%[^\n]*server CPU 0\\.00 us per echo with 200 echoes\n' \
		"--markdown: listed below the table with their reasons"
	like "$out" "Left out of every figure, disturbed by the host: steal over"$'\n'"3% of the window" \
		"--markdown: the list says the rule"
}

# What cmd/plot.sh's titles say of the runs judge left out: each run the
# host disturbed as disturbed, client-bound or not (it counts in no figure),
# and the other client-bound runs as client-bound. CI's run of 2026-12-07
# named ebpf's client-bound run alone: user's, client-bound too, was disturbed.
test_plot_notes() {
	local out
	disturbed_runs
	mkdir -p "$dir/notes"
	cp "$dir"/disturbed/*.tsv "$dir/notes/"
	BOUND=client mkrun notes/other-8.tsv other 8 5000 500 1500
	BOUND=client WINDOW=5 STEAL="0.50 0.10" NEG="0 0" mkrun notes/user-8.tsv user 8 5000 500 1500
	out=$("$ECHOLAB_ROOT/cmd/plot.sh" "$dir/notes" 2>&1)
	ok $? "plot-notes: cmd/plot.sh draws the runs"
	like "$out" $'\nnote: DISTURBED runs \(other 2 of 8, user 1 of 8\): ' \
		"plot-notes: the disturbed runs named, a client-bound one among them"
	like "$out" $'\nnote: CLIENT-BOUND runs \(other 1 of 8\): ' \
		"plot-notes: the client-bound runs the host left alone named apart"
}

# Each rule alone, one run of 'rules' each beside user's clean ones; the
# last two files are of before bench's busy_negative_s (and the very last
# of before steal_s).
test_disturbed_rules() {
	local out listed
	seed=29
	mkdir -p "$dir/rules"
	runs rules user 5 100 20000 1500
	WINDOW=5 STEAL="0.14 0.14" NEG="0 0" mkrun rules/rules-1.tsv rules 1 100 20000 1500
	WINDOW=5 STEAL="0.01 0.20" NEG="0 0" mkrun rules/rules-2.tsv rules 2 100 20000 1500
	WINDOW=5 STEAL="0.01 0.01" NEG="0.05 0" mkrun rules/rules-3.tsv rules 3 100 20000 1500
	WINDOW=5 STEAL="0.01 0.01" NEG="0.005 0" mkrun rules/rules-4.tsv rules 4 100 20000 1500
	WINDOW=5 SERVER_CPUS=0-1 STEAL="0.25 0.01" NEG="0 0" mkrun rules/rules-5.tsv rules 5 100 20000 1500
	WINDOW=5 STEAL="0.01 0.01" NOISE=0 mkrun rules/rules-6.tsv rules 6 100 20000 90
	mkrun rules/rules-7.tsv rules 7 100 20000 0
	mkrun rules/rules-8.tsv rules 8 100 20000 1500
	out=$("$JUDGE" "$dir"/rules/*.tsv)
	listed=$(sed -n 's/^disturbed label=rules repeat=\([0-9]*\) .* reason=/\1 /p' <<<"$out")
	diag "$listed"
	like "$listed" $'(^|\n)2 client steal 4\\.0% of the window \\(0\\.20 s\\)(\n|$)' \
		"the client's steal over 3% of its window: disturbed"
	like "$listed" $'(^|\n)3 server busy 0\\.05 s below zero(\n|$)' \
		"busy 5 ticks below zero (bench's newer key): disturbed, whatever its CPU per echo"
	like "$listed" $'(^|\n)6 server CPU 0\\.90 us per echo with 200 echoes(\n|$)' \
		"0.9 us per echo: under the floor"
	like "$listed" $'(^|\n)7 server CPU 0\\.00 us per echo with 200 echoes(\n|$)' \
		"zero busy with echoes in a file without the newer keys: disturbed"
	is "$(cut -d' ' -f1 <<<"$listed" | tr '\n' ' ')" "2 3 6 7 " \
		"not disturbed: 2.8% stolen, under a tick below zero, 5% of two CPUs' window on one, an older clean file"
	like "$(line "$out" rules cpu)" " n=4 excluded=0 disturbed=4 " "the four left out of the figures"
}

# ---- too few runs, absent figures, which time ------------------------------------------

test_too_few_runs() {
	local out
	few_runs
	out=$("$JUDGE" "$dir"/few/*.tsv)
	is "$(verdict "$out" two p50)" "too few runs" "two runs: too few runs (p50)"
	is "$(verdict "$out" two cpu)" "too few runs" "two runs: too few runs (cpu)"
	like "$(line "$out" two p50)" " ratio=0\.[0-9]+ ratio_lo=- ratio_hi=- " "two runs: the ratio, no interval"
	out=$("$JUDGE" --baseline two "$dir"/few/*.tsv)
	is "$(verdict "$out" user rps)" "too few runs" "a baseline of two runs: too few runs"
}

test_no_cpu() {
	local out
	seed=11
	runs old user 5 100 20000 1500
	NOCPU=1 runs old old 5 100 20000 1500
	out=$("$JUDGE" "$dir"/old/*.tsv)
	like "$(line "$out" old cpu)" " n=0 excluded=0 disturbed=0 median=- lo=- hi=- .* verdict=too few runs$" \
		"no server_cpu_us_per_echo: the figure is absent"
}

test_no_stamps() {
	local out
	seed=13
	runs stamps user 5 100 20000 1500
	NOSTAMP=1 runs stamps bypass 5 100 20000 1500
	out=$("$JUDGE" "$dir"/stamps/*.tsv)
	like "$(line "$out" user p50)" " source=rtt_us " "a server without arrival stamps: every latency from rtt_us"
	like "$("$JUDGE" "$dir"/stamps/user-*.tsv)" "figure=p50 source=arrival_us " \
		"every echo stamped: latency from arrival_us"
}

# A thinned file keeps 1 in K rows: its p99 is a few dozen of them. The
# trailer holds the full run's exact figures, and judge reads those.
test_thinned() {
	local out
	seed=29
	runs unthinned user 5 100 20000 1500
	thin_copy unthinned thinned 2000 tails
	out=$("$JUDGE" "$dir"/thinned/*.tsv)
	is "$(median "$out" user p50)" " source=arrival_us n=5 excluded=0 disturbed=0 median=303.0 lo=301.0 hi=305.0" \
		"p50: the trailer's full_arrival_p50_us, not the rows'"
	is "$(median "$out" user p99)" " source=arrival_us n=5 excluded=0 disturbed=0 median=903.0 lo=901.0 hi=905.0" \
		"p99: the trailer's full_arrival_p99_us"
	thin_copy unthinned unstamped 1999 tails
	out=$("$JUDGE" "$dir"/unstamped/*.tsv)
	is "$(median "$out" user p50)" " source=rtt_us n=5 excluded=0 disturbed=0 median=403.0 lo=401.0 hi=405.0" \
		"one sample of the full run without arrival_us: rtt_us, the trailer's full_p50_us"
	is "$(median "$out" user p99)" " source=rtt_us n=5 excluded=0 disturbed=0 median=1003.0 lo=1001.0 hi=1005.0" \
		"... and full_p99_us"
	thin_copy unthinned countsonly 2000
	is "$(median "$("$JUDGE" "$dir"/countsonly/*.tsv)" user p50)" "$(median "$("$JUDGE" "$dir"/unthinned/*.tsv)" user p50)" \
		"a trailer without percentiles: the rows' p50, as unthinned"
}

test_window() {
	local out
	window_runs
	out=$("$JUDGE" "$dir"/window/user-9.tsv)
	like "$(line "$out" user rps)" " source=window_s n=1 excluded=0 disturbed=0 median=400 " "rps: window_s first (200 ok over 0.5 s)"
}

test_server_name() {
	window_runs
	sed 's/^# label=user$/# server=user/' "$dir"/window/user-9.tsv >"$dir/server.tsv"
	like "$("$JUDGE" "$dir/server.tsv")" "^judge label=user figure=p50 " "no label: server= names the server"
}

test_gzipped() {
	local out
	apart_runs
	mkdir -p "$dir/gzipped"
	cp "$dir"/apart/user-*.tsv "$dir"/apart/fast-*.tsv "$dir/gzipped/"
	gzip "$dir"/gzipped/fast-*.tsv
	out=$("$JUDGE" "$dir"/gzipped/user-*.tsv "$dir"/gzipped/fast-*.tsv.gz)
	is "$(verdict "$out" fast p50)" faster "fast judged faster from its gzipped raw files"
}

# ---- bad input -----------------------------------------------------------------------

# fails NAME STATUS WHY ARGS...: judge exits STATUS, stderr's first line WHY.
fails() { fails_with "$1" "$2" "^judge: $3" "$JUDGE" "${@:4}"; }

test_bad_input() {
	apart_runs
	printf 'not a raw file\n' >"$dir/garbage.tsv"
	seed=19
	SWEEP=10 mkrun sweep-a.tsv user 1 100 20000 1500
	SWEEP=100 mkrun sweep-b.tsv user 2 100 20000 1500
	fails "no files" 2 "no raw files" --markdown
	fails "unknown flag" 2 "unknown option '--no-such-flag'" --no-such-flag "$dir"/apart/user-1.tsv
	fails "bad threshold" 2 "--threshold: 'x' is not a percentage" --threshold x "$dir"/apart/user-1.tsv
	fails "missing file" 1 "cannot read '$dir/missing.tsv'" "$dir"/apart/user-1.tsv "$dir/missing.tsv"
	fails "not a raw file" 1 ".*not a bench raw file" "$dir/garbage.tsv"
	fails "no baseline" 1 "no runs of the baseline 'user' among those of fast: name one with --baseline" \
		"$dir"/apart/fast-*.tsv
	fails "two sweep values" 1 ".*different sweep values" "$dir/sweep-a.tsv" "$dir/sweep-b.tsv"
}

# ---- markdown --------------------------------------------------------------------------

test_markdown() {
	local out
	apart_runs
	few_runs
	equal_runs
	out=$("$JUDGE" --markdown "$dir"/apart/*.tsv "$dir"/few/two-*.tsv)
	like "$out" $'\n\\| server \\| runs \\| p50 \\(us\\) \\| p50 vs user \\|' "the table's header"
	like "$(grep '^| fast |' <<<"$out")" "^\| fast \| 5 \| [0-9.]+ \[[0-9.]+, [0-9.]+\] \| 0\.[0-9]+ \[0\.[0-9]+, 0\.[0-9]+\] 93\.8% faster \|.* not judged \(rates differ: [0-9]+ against [0-9]+ req/s\) \|$" \
		"a row with medians, intervals, coverages and verdicts; CPU at another rate not judged"
	like "$(grep '^| two |' <<<"$out")" "too few runs" "too few runs said"
	like "$out" "beyond 1 ± 3%.*\"equivalent\" when it lies within, \"inconclusive\" when.*left out of latency" \
		"the paragraph says the threshold, the three verdicts and what is left out"
	out=$("$JUDGE" --markdown "$dir"/equal/*.tsv)
	like "$(grep '^| dear |' <<<"$out")" " costlier \|$" "at equal load, the CPU verdict in the row"
}

# ---- cmd/agreement.sh: back-to-back comparisons side by side -------------------------

# Two comparisons where ebpf is 1.5 x user's CPU per echo, and a third
# where it is user's: the verdicts agree in the first two only.
test_agreement() {
	local out spread agree=$ECHOLAB_ROOT/cmd/agreement.sh
	seed=21
	runs agree-1 user 5 100 20000 1000
	runs agree-1 ebpf 5 100 20000 1500
	runs agree-2 user 5 100 20000 1000
	runs agree-2 ebpf 5 100 20000 1500
	runs agree-3 user 5 100 20000 1000
	runs agree-3 ebpf 5 100 20000 1000
	out=$("$agree" "$dir/agree-1" "$dir/agree-2")
	ok $? "exit 0"
	like "$(grep '^| ebpf |' <<<"$out")" \
		'^\| ebpf \| 1[45]\.[0-9]+ / 1[45]\.[0-9]+ \| [0-9.]+% \| costlier \(1\.[0-9]+\) / costlier \(1\.[0-9]+\) \| yes \| costlier \(1\.[0-9]+ \[1\.[0-9]+, 1\.[0-9]+\]\) \|$' \
		"ebpf costlier in both, identical, and costlier judged together"
	like "$(grep '^| user |' <<<"$out")" '^\| user \| .* \| baseline / baseline \| yes \| baseline \|$' "user is the baseline in both"
	out=$("$agree" "$dir/agree-1" "$dir/agree-2" "$dir/agree-3")
	like "$(grep '^| ebpf |' <<<"$out")" '/ (equivalent|inconclusive) \([0-9.]+\) \| no \| [a-z ]+ \([0-9.]+ \[[0-9.]+, [0-9.]+\]\) \|$' \
		"a third comparison with another verdict: not identical"
	spread=$(grep '^| ebpf |' <<<"$out" | awk -F' [|] ' '{ print $3 }')
	like "$spread" '^(4[0-9]|5[0-9]|6[0-9])\.[0-9]%$' "the spread is max / min - 1 (15 against 10)"
	diag "agreement: the spread is $spread"
	out=$("$agree" "$dir/agree-1" 2>&1)
	is $? 2 "one directory exits 2"
	like "$out" "two or more" "says it needs two or more"
	"$agree" --figure bogus "$dir/agree-1" "$dir/agree-2" >/dev/null 2>&1
	is $? 2 "a bad --figure exits 2"

	# Two equal-load compares whose probes gave other rates: --point 2 takes
	# each one's second rate (ebpf 1.5 x user there, equal at the first).
	local d k r s cpu
	seed=23
	for d in 1 2; do
		mkdir -p "$dir/point-$d"
		printf 'sweep=rate=%d,%d\n' $((10000 + d * 100)) $((20000 + d * 100)) >"$dir/point-$d/meta.txt"
		for k in 1 2 3 4 5; do
			for s in user ebpf; do
				r=$((10000 + d * 100)) cpu=1000
				SWEEP=$r mkrun "point-$d/$s-rate$r-$k.tsv" "$s" "$k" 100 "$r" "$cpu"
				r=$((20000 + d * 100))
				[[ $s == user ]] || cpu=1500
				SWEEP=$r mkrun "point-$d/$s-rate$r-$k.tsv" "$s" "$k" 100 "$r" "$cpu"
			done
		done
	done
	out=$("$agree" --point 2 "$dir/point-1" "$dir/point-2")
	ok $? "--point 2: exit 0 over sweeps of other rates"
	like "$(grep '^| ebpf |' <<<"$out")" '^\| ebpf \| 1[45]\.[0-9]+ / 1[45]\.[0-9]+ \| .* costlier \(1\.[0-9]+\) / costlier' \
		"--point 2: each directory's second rate, ebpf costlier in both"
	"$agree" --point 3 "$dir/point-1" "$dir/point-2" >/dev/null 2>&1
	is $? 2 "--point past the sweep's values exits 2"
}

run_tests
plan_at_end
