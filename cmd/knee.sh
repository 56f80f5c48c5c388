#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# cmd/knee.sh - each server's knee, searched: the highest offered load it
# carries with its p99 under a bound. The command behind `sudo ./run.sh
# knee`; see knee_usage.
set -euo pipefail

# shellcheck source=lib/lifecycle.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/lifecycle.sh"
prog_name knee "./run.sh knee --help"

BOUND=1000		# --bound: the p99 bound, us
PRECISION=3		# --precision: the search ends when hi - lo <= PCT % of lo
REPEAT=3		# --repeat: searches per server, interleaved
FROM=1000		# --from: the first load offered, msg/s
MAX_RATE=2000000	# no search offers more
DEFAULT_BENCH="-c 50 -d 3 --warmup 1"
RATE_TOLERANCE=0.02	# a probe carried its load within this share (or a
			# Poisson count's 3 sd), as compare's equal loads
RUNNING=0		# --running: the server already on the port
PORT=$DEFAULT_PORT
SEED=
OUT=
LABELS=()
BENCH_ARGS=()

knee_usage() {
	cat <<EOF
Usage: sudo ./run.sh knee [SERVER|VARIANT...] [--bound US] [--precision PCT]
                          [--repeat N] [--from RATE] [--seed N] [--out DIR]
                          [-- BENCH-ARGS...]
       sudo ./run.sh knee --running [--port N] [options] [-- BENCH-ARGS...]

Searches each server's knee: the highest offered load (open loop, bench's
event engine) it carries with its p99 under the bound. A probe offers one
load for one bench run; it passes when every echo came back, the run
achieved the offered rate (within 2%, or a Poisson count's 3 sd), and the
p99 (from each message's due time to the echo's arrival) is under the
bound. From --from the offered load doubles until a probe fails, then
halves the bracket [passed, failed] until it is within --precision % of
its lower end: that lower end is the knee. A probe where bench's CPUs were
the limit ends the search with no knee: "client-limited beyond" the last
load passed. Each server is searched --repeat times, the servers in a
random order each time (seeded, recorded); the knee reported is the
median of the searches, with their range and its coverage of the median.

  SERVER|VARIANT  what to search (default: user, uring, ebpf where they
                 run): run.sh starts each afresh for every probe, placed
                 as run.sh places it, bench on the other CPUs
  --running      the server already listening on --port (any program: a
                 peer, a test server); BENCH-ARGS place bench (--cpus,
                 --server-cpus)
  --bound US     the p99 bound (default $BOUND)
  --precision PCT  the bracket's width at the end, % of the knee (default $PRECISION)
  --repeat N     searches per server (default $REPEAT)
  --from RATE    the first load offered, msg/s (default $FROM)
  --seed N       the orders' seed (default: random; recorded)
  --out DIR      where knee.tsv, probes.tsv, the raw files and knee.md go
                 (default results/DATE-knee)
  BENCH-ARGS     bench's arguments for every probe (default: $DEFAULT_BENCH;
                 they need -c, and no -R: the search sets the rate)

Writes probes.tsv (every probe: offered, achieved, p50, p99, its outcome),
knee.tsv (every search: the knee, the load that failed above it, why it
ended) and knee.md (per server: the median knee, range, coverage), and
keeps each probe's raw file, compressed (LABEL-rateR-REP.tsv.gz).
EOF
}

parse_args() {
	local l
	while (($#)); do
		case $1 in
		-h | --help) knee_usage; exit 0 ;;
		--running) RUNNING=1 ;;
		--port)
			{ [[ ${2:-} =~ ^[0-9]+$ ]] && (($2 >= 1 && $2 <= 65535)); } ||
				usage_error "--port: '${2:-}' is not a port number (1-65535)"
			PORT=$2; shift ;;
		--bound)
			[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--bound: '${2:-}' is not a number of microseconds"
			BOUND=$2; shift ;;
		--precision)
			{ [[ ${2:-} =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v p="$2" 'BEGIN { exit !(p >= 0.5 && p <= 50) }'; } ||
				usage_error "--precision: '${2:-}' is not a percentage from 0.5 to 50"
			PRECISION=$2; shift ;;
		--repeat)
			[[ ${2:-} =~ ^[1-9][0-9]?$ ]] || usage_error "--repeat: '${2:-}' is not a number of searches (1-99)"
			REPEAT=$2; shift ;;
		--from)
			{ [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && (($2 >= 10 && $2 <= MAX_RATE)); } ||
				usage_error "--from: '${2:-}' is not a rate from 10 to $MAX_RATE msg/s"
			FROM=$2; shift ;;
		--seed)
			[[ ${2:-} =~ ^[0-9]+$ ]] || usage_error "--seed: '${2:-}' is not a number"
			SEED=$2; shift ;;
		--out) OUT=${2:?--out needs a directory}; shift ;;
		--) shift; BENCH_ARGS=("$@"); break ;;
		-*) usage_error "unknown option '$1'" ;;
		*)
			l=$1
			[[ -n $(variant_get "$l" server) ]] ||
				usage_error "'$l' is no server or variant (./run.sh list shows them)"
			LABELS+=("$l")
			;;
		esac
		shift
	done
	((RUNNING == 0 || ${#LABELS[@]} == 0)) || usage_error "--running searches the server on the port: name no server"
	((RUNNING || PORT == DEFAULT_PORT)) || usage_error "--port goes with --running (run.sh starts servers on $DEFAULT_PORT)"
	((${#BENCH_ARGS[@]})) || read -ra BENCH_ARGS <<<"$DEFAULT_BENCH"
	[[ " ${BENCH_ARGS[*]} " == *" -c "* || " ${BENCH_ARGS[*]} " == *" --connections "* ]] ||
		usage_error "bench's arguments need -c N: the search offers rates through bench's event engine"
	[[ " ${BENCH_ARGS[*]} " != *" -R "* && " ${BENCH_ARGS[*]} " != *" --rate "* ]] ||
		usage_error "the search sets the rate: drop -R from bench's arguments"
	local err
	err=$("$BENCH" "${BENCH_ARGS[@]}" -R 100 --help 2>&1 >/dev/null) ||
		usage_error "bad bench arguments '${BENCH_ARGS[*]}': ${err%%$'\n'*}"
	if ((RUNNING)); then
		LABELS=(running)
	elif ((${#LABELS[@]} == 0)); then
		for l in user uring ebpf; do
			[[ -n $(server_unavailable "$l") ]] || LABELS+=("$l")
		done
	fi
	[[ -n $SEED ]] || SEED=$(((RANDOM * 32768 + RANDOM) % 1000000000))
}

# probe LABEL REP RATE: one bench run at RATE (the server started afresh
# unless --running); sets OUTCOME, ACHIEVED and P99, and appends its row
# to probes.tsv. OUTCOME: pass, over-bound, short (the server fell
# behind), failed (an echo did not come back), client-limited, over (a
# late client caught up: not a pass).
probe() {
	local label=$1 rep=$2 rate=$3 server f summary st p50 failed
	local -a start_args=()
	f=$OUT/$label-rate$rate-$rep.tsv
	if ((RUNNING == 0)); then
		server=$(variant_get "$label" server)
		read -ra start_args <<<"$(variant_get "$label" args)"
		(server_start "$server" "${start_args[@]}") >"$OUT/.start.log" 2>&1 || {
			sed 's/^/    /' "$OUT/.start.log" >&2
			die "$label did not start (above)"
		}
	fi
	summary=$("$BENCH" -q -p "$PORT" -l "$label" -o "$f" -R "$rate" --meta "knee_rep=$rep" \
		--meta "where=${ECHOLAB_WHERE:-native}" "${BENCH_ARGS[@]}" 2>"$OUT/.bench.err") || true
	if ((RUNNING == 0)); then
		(server_stop quiet) >/dev/null 2>&1 || die "stopping $label failed: sudo ./run.sh stop says why"
	fi
	[[ -s $f ]] || die "$label at $rate msg/s: bench wrote no samples: $(tail -n 3 "$OUT/.bench.err")"
	grep -q '^# interrupted=1' "$f" && die "interrupted"
	st=$(point_state "$f" "$RATE_TOLERANCE")
	gzip -f "$f"
	p50=$(field "$summary" arrival_p50_us)
	P99=$(field "$summary" arrival_p99_us)
	[[ $P99 =~ ^[0-9.]+$ ]] || { p50=$(field "$summary" p50_us); P99=$(field "$summary" p99_us); }
	P99=${P99:--}
	ACHIEVED=${st##* }
	failed=$(field "$summary" failed)
	if [[ ${failed:-1} != 0 ]]; then OUTCOME=failed
	elif [[ $st == client-limited* ]]; then OUTCOME=client-limited
	elif [[ $st == short* ]]; then OUTCOME=short
	elif [[ $st == over* ]]; then OUTCOME=over
	elif awk -v p="$P99" -v b="$BOUND" 'BEGIN { exit !(p + 0 > b) }'; then OUTCOME=over-bound
	else OUTCOME=pass
	fi
	printf '%s\t%d\t%d\t%d\t%s\t%s\t%s\n' "$label" "$rep" "$rate" "$ACHIEVED" "${p50:--}" "$P99" \
		"$OUTCOME" >>"$OUT/probes.tsv"
}

# search LABEL REP: one search; its row in knee.tsv.
search() {
	local label=$1 rep=$2 lo=0 hi=0 rate=$FROM n=0 why=found
	while :; do
		n=$((n + 1))
		probe "$label" "$rep" "$rate"
		say "  $label, search $rep, probe $n: $rate msg/s offered, $ACHIEVED achieved, p99 $P99 us: $OUTCOME"
		case $OUTCOME in
		pass) lo=$rate ;;
		client-limited) why=client-limited; break ;;
		*) hi=$rate ;;
		esac
		if ((hi == 0)); then
			rate=$((rate * 2))
			((rate <= MAX_RATE)) || { why=no-knee-below-max; break; }
		elif ((lo == 0)); then
			rate=$((hi / 2))
			((rate >= 10)) || { why=none-above-10; break; }
		elif ((hi - lo <= 1)) ||	# whole msg/s: no rate lies between
			awk -v l="$lo" -v h="$hi" -v p="$PRECISION" 'BEGIN { exit !((h - l) * 100 <= p * l) }'; then
			break
		else
			rate=$(((lo + hi) / 2))
		fi
	done
	printf '%s\t%d\t%d\t%d\t%d\t%s\n' "$label" "$rep" "$lo" "$hi" "$n" "$why" >>"$OUT/knee.tsv"
	case $why in
	found) say "$label, search $rep: knee $lo msg/s (failed at $hi, $n probes)" ;;
	client-limited) say "$label, search $rep: no knee: client-limited beyond $lo msg/s" ;;
	*) say "$label, search $rep: no knee ($why)" ;;
	esac
}

# knee.md: per server, the median of its searches' knees, their range, and
# the range's coverage of the median (1 - 2 x 0.5^n for n searches); a
# server with a search that ended client-limited gets no knee.
write_summary() {
	{
		echo "# Knees, $(date -u +%Y-%m-%d)"
		echo
		echo "Kernel $(uname -r), $(nproc) cores, where=${ECHOLAB_WHERE:-native}. bench ${BENCH_ARGS[*]} -R (searched);"
		echo "p99 bound $BOUND us, precision $PRECISION%, $REPEAT searches per server, orders seeded $SEED (meta.txt)."
		echo
		echo "| server | knee, msg/s (median) | range | coverage | searches (knee / failed at) |"
		echo "|---|---|---|---|---|"
		awk -F'\t' '
		NR == 1 { next }
		{
			if (!($1 in n)) order[++m] = $1
			n[$1]++
			list[$1] = list[$1] (list[$1] == "" ? "" : ", ") ($6 == "found" ? $3 " / " $4 : $6 " beyond " $3)
			if ($6 == "client-limited") cl[$1] = 1
			else if ($6 == "found") k[$1, ++f[$1]] = $3
		}
		END {
			for (i = 1; i <= m; i++) {
				s = order[i]
				if (cl[s] || f[s] < n[s]) { printf "| %s | none (%s) | | | %s |\n", s, cl[s] ? "client-limited" : "no knee found", list[s]; continue }
				c = f[s]
				for (a = 1; a <= c; a++) for (b = a + 1; b <= c; b++) if (k[s, b] < k[s, a]) { t = k[s, a]; k[s, a] = k[s, b]; k[s, b] = t }
				med = k[s, int((c + 1) / 2)]
				cov = c > 1 ? 100 * (1 - 2 * 0.5 ^ c) : 0
				printf "| %s | %d | [%d, %d] | %.2f%% | %s |\n", s, med, k[s, 1], k[s, c], cov, list[s]
			}
		}' "$OUT/knee.tsv"
		echo
		echo "probes.tsv: every probe; the raw files: LABEL-rateR-REP.tsv.gz."
	} >"$OUT/knee.md"
}

# On any exit: a server still in the state is one a probe started (the
# search refuses to begin while another runs).
cleanup() {
	rm -f "$OUT/.start.log" "$OUT/.bench.err"
	((RUNNING)) || [[ -z $(state server) ]] || (server_stop quiet) >/dev/null 2>&1 || true
}

main() {
	local rep i j t order
	parse_args "$@"
	need_root knee
	[[ -x $BENCH ]] || make -C "$ECHOLAB_ROOT" --no-print-directory bench >/dev/null
	OUT=${OUT:-$ECHOLAB_ROOT/results/$(date +%Y%m%d-%H%M%S)-knee}
	mkdir -p "$OUT"
	if ((RUNNING)); then
		"$BENCH" -q -p "$PORT" -t 1 -r 1 -o /dev/null >/dev/null 2>&1 ||
			die "--running: nothing echoes on port $PORT: start the server first"
	elif [[ -n $(state server) ]]; then
		die "a server is running ($(state server)): the search starts its own; sudo ./run.sh stop first, or --running to search that one"
	fi
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	printf 'server\trep\toffered\tachieved\tp50_us\tp99_us\toutcome\n' >"$OUT/probes.tsv"
	printf 'server\trep\tknee\tfailed_at\tprobes\tended\n' >"$OUT/knee.tsv"
	{
		echo "bench=${BENCH_ARGS[*]}"
		echo "bound_us=$BOUND"
		echo "precision_pct=$PRECISION"
		echo "seed=$SEED"
		echo "kernel=$(uname -r)"
	} >"$OUT/meta.txt"
	RANDOM=$SEED
	for ((rep = 1; rep <= REPEAT; rep++)); do
		order=("${LABELS[@]}")
		for ((i = ${#order[@]} - 1; i > 0; i--)); do
			j=$((RANDOM % (i + 1)))
			t=${order[i]} order[i]=${order[j]} order[j]=$t
		done
		echo "order=search $rep: ${order[*]}" >>"$OUT/meta.txt"
		for i in "${order[@]}"; do
			say "search $rep of $REPEAT: $i"
			search "$i" "$rep"
		done
	done
	write_summary
	cat "$OUT/knee.md"
	echo "results: $OUT"
}

main "$@"
