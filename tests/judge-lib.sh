# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What tests/judge.t's cases share (it sources this after tests/lib.sh,
# with $dir set): the raw files they judge, made from a fixed seed, and
# readers of judge's lines.

dir=${dir:?judge.t sets dir, the scratch directory, before sourcing this}

# A linear congruential generator: the same files on every machine and
# bash. rnd sets r, uniform in [0, 1000). Each set of files sets seed
# first, so it is the same whichever cases ran before.
seed=1
rnd() {
	seed=$(((seed * 1103515245 + 12345) % 2147483648))
	r=$(((seed >> 8) % 1000))
}

# mkrun FILE LABEL REPEAT LAT_US RPS CPU_CENTI: one run, 200 ok samples.
# The run's level is LAT_US and CPU_CENTI/100 give or take NOISE per mille
# (default 50), RPS give or take RPS_NOISE (default NOISE, at most 10: an
# open-loop run achieves its offered rate within a percent, so runs at one
# rate are at equal load); its samples' arrival_us spread uniformly from half
# to 1.5 times its level, rtt_us 5 us later. BOUND=client writes
# bottleneck=client; NOSTAMP=1 leaves arrival_us '-'; NOCPU=1 leaves out
# server_cpu_us_per_echo; WINDOW=S adds window_s; SWEEP=V sweep_value;
# BUSY="S C" the server's and the client's busy seconds on CPUs apart;
# SCOPE=all: the server's CPU counted over every CPU; CLIENT_CPU=CENTI
# the client's CPU per echo (exact, no noise);
# SCALE=PERMILLE slows the whole machine by that much (1000: not at all);
# STEAL="S C" the server's and the client's steal seconds, NEG="S C" their
# busy seconds below zero (bench's SIDE_busy_negative_s), SERVER_CPUS=LIST
# the server's CPUs (with WINDOW=S, what judge's disturbed rules read);
# META=LINES more '# key=value' lines on top (size=, rate=: findings.t).
mkrun() {
	local file=$1 label=$2 rep=$3 lat=$4 rps=$5 cpu=$6 i n=200 a arr
	local noise=${NOISE:-50} scale=${SCALE:-1000} rnoise
	rnoise=${RPS_NOISE:-$((${NOISE:-50} < 10 ? ${NOISE:-50} : 10))}
	lat=$((lat * scale / 1000)) rps=$((rps * 1000 / scale)) cpu=$((cpu * scale / 1000))
	rnd
	lat=$((lat * (1000 - noise + r * 2 * noise / 1000) / 1000))
	rnd
	rps=$((rps * (1000 - rnoise + r * 2 * rnoise / 1000) / 1000))
	rnd
	cpu=$((cpu * (1000 - noise + r * 2 * noise / 1000) / 1000))
	{
		printf '# label=%s\n# threads=4\n# repeat=%s\n' "$label" "$rep"
		[[ -z ${SWEEP:-} ]] || printf '# sweep=threads\n# sweep_value=%s\n' "$SWEEP"
		[[ -z ${META:-} ]] || printf '%s\n' "$META"
		printf '# columns=thread\tround\tconnect_us\trtt_us\tarrival_us\tlag_us\tstatus\n'
		for ((i = 0; i < n; i++)); do
			rnd
			a=$((lat * (500 + r) / 1000))
			arr=$a.0
			[[ -z ${NOSTAMP:-} ]] || arr=-
			printf '%d\t0\t-\t%d.0\t%s\t-\tok\n' $((i % 4)) $((a + 5)) "$arr"
		done
		printf '1\t1\t-\t-\t-\t-\ttimeout\n'
		# n samples at rps a second: n * 1e6 / rps microseconds.
		printf '# elapsed_s=%d.%06d\n' $((n / rps)) $((n * 1000000 / rps % 1000000))
		[[ -z ${WINDOW:-} ]] || printf '# window_s=%s\n' "$WINDOW"
		[[ -z ${BUSY:-} ]] || printf '# cpu_scope=split\n# server_busy_s=%s\n# client_busy_s=%s\n' "${BUSY% *}" "${BUSY#* }"
		[[ -z ${SCOPE:-} ]] || printf '# cpu_scope=%s\n' "$SCOPE"
		[[ -z ${CLIENT_CPU:-} ]] || printf '# client_cpu_us_per_echo=%d.%02d\n' $((CLIENT_CPU / 100)) $((CLIENT_CPU % 100))
		[[ -z ${SERVER_CPUS:-} ]] || printf '# server_cpus=%s\n' "$SERVER_CPUS"
		[[ -z ${STEAL:-} ]] || printf '# server_steal_s=%s\n# client_steal_s=%s\n' "${STEAL% *}" "${STEAL#* }"
		[[ -z ${NEG:-} ]] || printf '# server_busy_negative_s=%s\n# client_busy_negative_s=%s\n' "${NEG% *}" "${NEG#* }"
		[[ -n ${NOCPU:-} ]] || printf '# server_cpu_us_per_echo=%d.%02d\n' $((cpu / 100)) $((cpu % 100))
		printf '# bottleneck=%s\n' "${BOUND:-none}"
	} >"$dir/$file"
}

# runs SET LABEL COUNT LAT RPS CPU: COUNT runs of LABEL, files SET/LABEL-N.tsv.
runs() {
	local set=$1 label=$2 count=$3 i
	mkdir -p "$dir/$set"
	for ((i = 1; i <= count; i++)); do
		mkrun "$set/$label-$i.tsv" "$label" "$i" "$4" "$5" "$6"
	done
}

# twins FROM TO: TO holds FROM's user runs, and each again labelled twin.
twins() {
	local f
	mkdir -p "$dir/$2"
	for f in "$dir/$1"/user-*.tsv; do
		cp "$f" "$dir/$2/"
		sed 's/^# label=user$/# label=twin/' "$f" >"$dir/$2/twin-${f##*-}"
	done
}

# line OUTPUT LABEL FIGURE: judge's line for that label and figure.
line() { grep -E "^judge label=$2 figure=$3 " <<<"$1"; }
# verdict OUTPUT LABEL FIGURE: its verdict (the rest of the line).
verdict() { line "$@" | sed 's/.* verdict=//'; }

# median OUTPUT LABEL FIGURE: its source, runs, median and interval.
median() { line "$1" "$2" "$3" | grep -o ' source=[^ ]* n=5 excluded=0 disturbed=0 median=[^ ]* lo=[^ ]* hi=[^ ]*'; }

# no_difference NAME OUTPUT LABEL [WORDS]: no figure of LABEL is declared
# different: each is equivalent or inconclusive (or WORDS, a regex).
no_difference() {
	local name=$1 out=$2 label=$3 want=${4:-equivalent|inconclusive} f got=()
	for f in p50 p99 rps cpu; do
		got+=("$f: $(verdict "$out" "$label" "$f")")
	done
	like "$(printf '%s\n' "${got[@]}")" "^p50: ($want)"$'\n'"p99: ($want)"$'\n'"rps: ($want)"$'\n'"cpu: ($want)\$" "$name"
}

# ---- fixtures: sets of files several cases read, each made once and
# never changed (a case that changes files works on a copy) --------------------

# The data sets drawn from one distribution, 'SEED COUNT LAT RPS CPU
# NOISE' each: other seeds, other levels, noise from 2% to 10% a run,
# five to eight runs a side.
SAME_SETS=("1 5 100 20000 1500 50" "2 5 3000 800 9000 20" "3 8 40 150000 300 100"
	"4 6 700 5000 2500 80")

# same_set N: sameN/, the Nth of SAME_SETS: its runs of user and other.
same_set() {
	local s count lat rps cpu noise
	[[ ! -d $dir/same$1 ]] || return 0
	read -r s count lat rps cpu noise <<<"${SAME_SETS[$1 - 1]}"
	seed=$((s * 7919))
	NOISE=$noise runs "same$1" user "$count" "$lat" "$rps" "$cpu"
	NOISE=$noise runs "same$1" other "$count" "$lat" "$rps" "$cpu"
}

# equal_runs: equal/, user, cheap and dear at one rate, 5 runs each, and
# near (8% dearer) in 1% noise; near10/: the same 8% in 10% noise.
equal_runs() {
	[[ ! -d $dir/equal ]] || return 0
	seed=44
	runs equal user 5 100 20000 1500
	runs equal cheap 5 100 20000 900
	runs equal dear 5 100 20000 2400
	mkdir -p "$dir/near10"
	NOISE=10 runs equal near 5 100 20000 1620
	NOISE=100 runs near10 user 5 100 20000 1500
	NOISE=100 runs near10 near 5 100 20000 1620
}

# apart_runs: apart/, user, fast and slow clearly apart, 5 runs each.
apart_runs() {
	[[ ! -d $dir/apart ]] || return 0
	seed=42
	runs apart user 5 100 20000 1500
	runs apart fast 5 60 30000 900
	runs apart slow 5 160 12000 2400
}

# drift_runs: drift/ and nopair/. The machine drifts: each repetition
# runs 15% slower or faster than the next for every server alike (SCALE),
# the runs themselves vary 1%, and 'dearer' costs 6% more than user in
# every repetition. Paired by repeat=, the drift cancels; unpaired (in
# nopair/, dearer's repeat numbers are no user's), it hides the 6%.
drift_runs() {
	local rep=0 scale
	[[ ! -d $dir/drift ]] || return 0
	seed=17
	mkdir -p "$dir/drift" "$dir/nopair"
	for scale in 1000 1150 870 1200 950 1100 850 1050; do
		rep=$((rep + 1))
		SCALE=$scale NOISE=10 mkrun "drift/user-$rep.tsv" user "$rep" 100 20000 1000
		SCALE=$scale NOISE=10 mkrun "drift/dearer-$rep.tsv" dearer "$rep" 100 20000 1060
		sed "s/^# repeat=.*/# repeat=$((rep + 100))/" "$dir/drift/dearer-$rep.tsv" >"$dir/nopair/dearer-$rep.tsv"
		cp "$dir/drift/user-$rep.tsv" "$dir/nopair/"
	done
}

# thin_copy FROM TO ARRIVAL_N [TAILS]: TO holds FROM's files as cmd/thin.sh
# leaves them, a trailer on top: thinned=10, 2000 ok samples of which
# ARRIVAL_N were stamped and, with TAILS, the full run's percentiles, far
# from the rows' (run N: arrival p50 300+N, p99 900+N; rtt 400+N, 1000+N).
thin_copy() {
	local f n tails
	mkdir -p "$dir/$2"
	for f in "$dir/$1"/*.tsv; do
		n=$(sed -n 's/^# repeat=//p' "$f")
		tails=
		[[ -z ${4:-} ]] ||
			tails=$(printf '\\n# full_p50_us=%d.0\\n# full_p99_us=%d.0\\n# full_arrival_p50_us=%d.0\\n# full_arrival_p99_us=%d.0' \
				$((400 + n)) $((1000 + n)) $((300 + n)) $((900 + n)))
		sed "/^# columns=/i # thinned=10\\n# full_ok=2000\\n# full_arrival_n=$3$tails" "$f" >"$dir/$2/${f##*/}"
	done
}

# few_runs: few/, user 5 runs, two 2 runs.
few_runs() {
	[[ ! -d $dir/few ]] || return 0
	seed=9
	runs few user 5 100 20000 1500
	runs few two 2 50 40000 700
}

# window_runs: window/, user's 5 runs and a 9th with window_s=0.5.
window_runs() {
	[[ ! -d $dir/window ]] || return 0
	seed=15
	runs window user 5 100 20000 1500
	WINDOW=0.5 mkrun window/user-9.tsv user 9 100 20000 1500
}

# ---- the help ----------------------------------------------------------------

# disturbed_runs: disturbed/, user and other alike over 7 repetitions (1%
# noise, 5 s windows, a little steal everywhere, bench's newer key), except
# that the host took two of other's: in the 6th its busy time read 0 with
# 200 echoes (results/20261126-proxy-load-fixed's user-rate3100-2), in the
# 7th it stole 10% of the server's window and the CPU read 40% low.
disturbed_runs() {
	local i
	[[ ! -d $dir/disturbed ]] || return 0
	seed=23
	mkdir -p "$dir/disturbed"
	for ((i = 1; i <= 7; i++)); do
		WINDOW=5 STEAL="0.02 0.03" NEG="0 0" NOISE=10 mkrun "disturbed/user-$i.tsv" user "$i" 100 20000 1500
		((i > 5)) ||
			WINDOW=5 STEAL="0.02 0.03" NEG="0 0" NOISE=10 mkrun "disturbed/other-$i.tsv" other "$i" 100 20000 1500
	done
	WINDOW=5 STEAL="0.90 1.50" NEG="0.40 0" NOISE=10 mkrun disturbed/other-6.tsv other 6 100 20000 0
	WINDOW=5 STEAL="0.50 0.10" NEG="0 0" NOISE=10 mkrun disturbed/other-7.tsv other 7 100 20000 900
}
