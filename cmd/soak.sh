#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# cmd/soak.sh - the same load again and again, and what each server holds
# after every run: the command behind `sudo ./run.sh soak` (`make soak`).
# Servers start and stop with lib/lifecycle.sh; those this machine cannot
# run (kecho where modules do not load) are soaked by the guest's run.sh,
# into the same file. See soak_usage.
set -euo pipefail

# shellcheck source=lib/lifecycle.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/lifecycle.sh"
# shellcheck source=lib/guest.sh
source "$ECHOLAB_ROOT/lib/guest.sh"
prog_name soak "./run.sh soak --help"
WHERE=${ECHOLAB_WHERE:-native}
PORT=$DEFAULT_PORT

SOAK_RUNS=20
SOAK_OUT=
SOAK_VM=0
SOAK_LABELS=()
# Growth from run 1 to the last, in percent, past which the server's RSS or
# the kernel's slab counts as grown. Run 1 is the baseline: it makes what
# later runs reuse (worker stacks, socket caches).
SOAK_DRIFT_PCT=10
SOAK_SETTLE_S=30	# for the server's connections to close after a run
# The connections a server holds open: not closed by it. Those it closed
# (LAST-ACK, FIN-WAIT, CLOSING, TIME-WAIT) are TCP's to finish on its own
# timers, and a TCG guest's last ACK can take longer than the settling.
SOAK_OPEN_STATES='^(ESTAB|CLOSE-WAIT|SYN-RECV)$'
# bench's timeout: its default (5 s) natively; the guest's TCG runs 10-50 x
# slower, and kecho's kthread mode has a p99 of 1-5 s there: a soak looks
# for growth, not for the tail, which compare measures.
if [[ ${ECHOLAB_WHERE:-} == vm ]]; then SOAK_TIMEOUT_MS=30000; else SOAK_TIMEOUT_MS=5000; fi
SOAK_COLUMNS="label where run samples failed p50_us p99_us fds rss_kb sockets timewait held slab_kb"

soak_usage() {
	cat <<EOF
Usage: sudo ./run.sh soak [--runs N] [--vm] [--out DIR] [VARIANT...]
       ./run.sh soak --verdict DIR

Runs bench -t 1000 -r 10 against each server N times in a row (default 20)
and, after every run, records what the server holds: its descriptors and
RSS, the connections it holds open, what it tracks itself
(ebpf: its sockmap's entries; kecho: its open connections) and the
kernel's slab. A server passes when no run failed and nothing grew from
run 1 to the last: descriptors, connections and entries not at all, RSS
and slab by at most $SOAK_DRIFT_PCT%. Exit status 1 when a server failed.

  --runs N    runs per server (default 20; CI's short form: 2)
  --vm        every server in the qemu guest (kecho goes there anyway
              where this kernel cannot load modules); with --kernel
              VERSION (run.sh's), the guest's kernel
  --out DIR   results directory (default results/DATE-soak-PLACE):
              soak.tsv (a row per run), failures.tsv (every failed
              sample: label, run, then bench's raw columns), summary.md
  --verdict DIR  judge DIR/soak.tsv again and rewrite DIR/summary.md
              (nothing is run)
  VARIANT     limit it to these (default every variant, the bypass's
              included): $(all_variants | cut -d' ' -f1 | tr '\n' ' ')
EOF
}

soak_parse_args() {
	local known
	known=" $(all_variants | cut -d' ' -f1 | tr '\n' ' ')"
	while (($#)); do
		case $1 in
		--runs)
			[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--runs needs a positive number"
			SOAK_RUNS=$2
			shift 2
			;;
		--out)
			[[ -n ${2:-} ]] || usage_error "--out needs a directory"
			SOAK_OUT=$2
			shift 2
			;;
		--vm)
			SOAK_VM=1
			shift
			;;
		--verdict)
			[[ -f ${2:-}/soak.tsv ]] || usage_error "--verdict needs a directory with a soak.tsv"
			SOAK_OUT=$2
			soak_verdict
			exit
			;;
		-h | --help)
			soak_usage
			exit 0
			;;
		-*) usage_error "unknown option '$1'" ;;
		*)
			[[ $known == *" $1 "* ]] || usage_error "unknown variant '$1' (variants:$known)"
			SOAK_LABELS+=("$1")
			shift
			;;
		esac
	done
}

# soak_held SERVER: what the server tracks per connection itself, or '-'.
soak_held() {
	local n
	n=$(server_hook "$1" held 2>/dev/null)
	echo "${n:--}"
}

# soak_slab: the kernel's slab in KiB, less its TIME_WAIT sockets': those
# are mostly the client's (it closes first), 10,000 a run, gone after 60 s.
soak_slab() {
	local page_kb
	page_kb=$(($(getconf PAGESIZE 2>/dev/null || echo 4096) / 1024))
	awk -v p="$page_kb" '
		FILENAME ~ /meminfo/ && $1 == "Slab:" { slab = $2 }
		FILENAME ~ /slabinfo/ && $1 ~ /^tw_sock_TCP/ { tw += $(NF - 1) * $6 * p }
		END { print slab - tw }' /proc/meminfo /proc/slabinfo
}

# soak_snapshot SERVER: 'fds rss_kb sockets timewait held slab_kb' now.
soak_snapshot() {
	local pid fds=- rss=- conns
	pid=$(state pid)
	if [[ -n $pid && -d /proc/$pid ]]; then
		fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
		rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status")
	fi
	conns=$(ss -Htan "sport = :$PORT")
	echo "$fds $rss" \
		"$(awk "\$1 ~ /$SOAK_OPEN_STATES/" <<<"$conns" | grep -c .)" \
		"$(awk '$1 == "TIME-WAIT"' <<<"$conns" | grep -c .)" \
		"$(soak_held "$1")" "$(soak_slab)"
}

# soak_settle: until the server holds none of its connections open, or
# SOAK_SETTLE_S; the snapshot then shows what stayed.
soak_settle() {
	local i
	for ((i = 0; i < SOAK_SETTLE_S * 10; i++)); do
		[[ -z $(ss -Htan "sport = :$PORT" | awk "\$1 ~ /$SOAK_OPEN_STATES/") ]] && return
		sleep 0.1
	done
}

# soak_server LABEL SERVER [START-OPTIONS...]
soak_server() {
	local label=$1 server=$2 run out
	shift 2
	(server_start "$server" --port "$PORT" "$@") 2>&1 | sed 's/^/  /'
	if ((PIPESTATUS[0] != 0)); then
		say "$label: did not start (its message is above)"
		printf '%s\t%s\t0\t-\tstart\n' "$label" "$WHERE" >>"$SOAK_OUT/soak.tsv"
		return 1
	fi
	for ((run = 1; run <= SOAK_RUNS; run++)); do
		out=$(front_enter "$BENCH" -p "$PORT" -t 1000 -r 10 -T "$SOAK_TIMEOUT_MS" -q \
			-o "$SOAK_OUT/run.tsv" 2>/dev/null) || true
		# Of the samples, the failed ones are kept (failures.tsv), with why.
		awk -F'\t' -v OFS='\t' -v l="$label" -v r="$run" \
			'!/^#/ && $NF != "ok" { print l, r, $0 }' "$SOAK_OUT/run.tsv" >>"$SOAK_OUT/failures.tsv"
		rm -f "$SOAK_OUT/run.tsv"
		soak_settle
		read -r fds rss sockets tw held slab <<<"$(soak_snapshot "$server")"
		printf '%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$WHERE" "$run" \
			"$(soak_field "$out" samples)" "$(soak_field "$out" failed)" \
			"$(soak_field "$out" arrival_p50_us)" "$(soak_field "$out" arrival_p99_us)" \
			"$fds" "$rss" "$sockets" "$tw" "$held" "$slab" >>"$SOAK_OUT/soak.tsv"
		say "$label run $run/$SOAK_RUNS: samples=$(soak_field "$out" samples) failed=$(soak_field "$out" failed)" \
			"fds=$fds rss=${rss}KiB connections=$sockets time_wait=$tw held=$held slab=${slab}KiB"
	done
	(server_stop) 2>&1 | sed 's/^/  /'
}

# soak_field LINE KEY: field, '-' when the line lacks KEY.
soak_field() {
	local v
	v=$(field "$1" "$2")
	echo "${v:--}"
}

# soak_verdict: summary.md from soak.tsv; status 1 when a server failed.
soak_verdict() {
	local md=$SOAK_OUT/summary.md rc=0
	{
		echo "# Soak: bench -t 1000 -r 10 again and again, per server"
		echo
		echo "$(date -u +%Y-%m-%d); host $(uname -r), $(nproc) CPUs; 'vm': the qemu guest's kernel."
		echo "Run 1 is the baseline; the last run's snapshot is held against it. slab: the"
		echo "kernel's, less its TIME_WAIT sockets (the client's: 10,000 a run, gone in 60 s)."
		echo
		echo "| server | where | runs | failed | fds | RSS KiB | connections left | held | slab KiB | verdict |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
	} >"$md"
	awk -F'\t' -v pct="$SOAK_DRIFT_PCT" '
		function drift(a, b) { return (a == "-" || a == 0) ? "-" : sprintf("%+.1f%%", (b - a) * 100 / a) }
		function grew(a, b) { return a != "-" && b != "-" && (b - a) * 100 > pct * a }
		function col(row, name,   f) { split(row, f, "\t"); return f[c[name]] }
		$1 == "label" { for (i = 1; i <= NF; i++) c[$i] = i; next }
		!($1 in first) { order[++n] = $1; first[$1] = $0; where[$1] = $2 }
		{
			last[$1] = $0; runs[$1]++
			v = $c["failed"]
			if (v != 0) bad[$1] += (v ~ /^[0-9]+$/) ? v : 1	# "start": did not start
			if ($c["sockets"] > left[$1]) left[$1] = $c["sockets"]
		}
		END {
			for (i = 1; i <= n; i++) {
				l = order[i]; a = first[l]; z = last[l]
				why = ""
				if (bad[l]) why = why " failed"
				if (col(a, "fds") != col(z, "fds")) why = why " fds"
				if (left[l] > 0) why = why " connections"
				if (col(z, "held") != "-" && col(z, "held") > 0) why = why " held"
				if (grew(col(a, "rss_kb"), col(z, "rss_kb"))) why = why " RSS"
				if (grew(col(a, "slab_kb"), col(z, "slab_kb"))) why = why " slab"
				printf "| %s | %s | %d | %d | %s -> %s | %s -> %s (%s) | %d | %s | %s -> %s (%s) | %s |\n",
					l, where[l], runs[l], bad[l], col(a, "fds"), col(z, "fds"),
					col(a, "rss_kb"), col(z, "rss_kb"), drift(col(a, "rss_kb"), col(z, "rss_kb")),
					left[l], col(z, "held"),
					col(a, "slab_kb"), col(z, "slab_kb"), drift(col(a, "slab_kb"), col(z, "slab_kb")),
					why == "" ? "ok" : "grew or failed:" why
				if (why != "") failed = 1
			}
			exit failed
		}' "$SOAK_OUT/soak.tsv" >>"$md" || rc=$?
	cat "$md"
	return "$rc"
}

main() {
	local label server args why
	local guest=()
	soak_parse_args "$@"
	need_root soak
	[[ -x $BENCH ]] || make -C "$ECHOLAB_ROOT" --no-print-directory bench >/dev/null
	SOAK_OUT=${SOAK_OUT:-$ECHOLAB_ROOT/results/$(date +%Y%m%d-%H%M%S)-soak-$( ((SOAK_VM)) && echo vm || echo "$WHERE")}
	mkdir -p "$SOAK_OUT"
	[[ -s $SOAK_OUT/soak.tsv ]] || tr ' ' '\t' <<<"$SOAK_COLUMNS" >"$SOAK_OUT/soak.tsv"
	# The tests' leftover TIME_WAIT sockets are no reason to wait here:
	# back to back is the point.
	while read -r label server args; do
		((${#SOAK_LABELS[@]} == 0)) || [[ " ${SOAK_LABELS[*]} " == *" $label "* ]] || continue
		# shellcheck disable=SC2086 # args: zero or more start options
		why=$(server_unavailable "$server" $args)
		if ((SOAK_VM)) || [[ -n $why && $WHERE != vm ]]; then
			guest+=("$label")
			continue
		fi
		if [[ -n $why ]]; then
			say "$label: not soaked here: $why"
			continue
		fi
		say "$label: $SOAK_RUNS runs"
		# shellcheck disable=SC2086 # args: zero or more start options
		soak_server "$label" "$server" $args || true
	done < <(all_variants)
	if ((${#guest[@]})); then
		say "${guest[*]}: in the qemu guest"
		in_guest "$SOAK_OUT" "${VM_TIMEOUT:-7200}" ./run.sh soak --runs "$SOAK_RUNS" --out /out "${guest[@]}" ||
			say "the guest's soak ended with a failure (its rows are in soak.tsv)"
	fi
	local rc=0
	soak_verdict || rc=$?
	echo "results: $SOAK_OUT"
	return "$rc"
}

main "$@"
