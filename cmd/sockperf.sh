#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# sockperf.sh - seed 004's experiment again: sockperf's own ping-pong
# against sockperf's own server, without and with the sk_msg bypass in
# front of it, judged by the suite's method.
#
#   sudo ./cmd/sockperf.sh [--repeat N] [--seconds S] [--sizes L] [--seed N] [--out DIR]
#
#   --repeat N    runs of each, in pairs (default 5); each pair in a
#                 random order (--seed N: that order again)
#   --seconds S   each run's sockperf --time (default 10, the seed's)
#   --sizes L     message sizes in bytes, comma-separated (default 14:
#                 sockperf's own default, the seed's)
#   --out DIR     default results/DATE-sockperf
#
# Each run starts sockperf's server with run.sh command (--bypass for
# the bypass's runs; --cpus all: one connection, and the bypass takes it
# only when both ends enter its map before the first bytes, which their
# own CPUs can race), runs sockperf ping-pong --tcp with --full-log in
# the bypass's cgroup (run.sh client), and stops the server. Its raw file
# (bench's format, DIR/size-S/LABEL-K.tsv) holds one row per message of
# sockperf's measured window (rtt_us: its round trip, from its full log),
# the window, sockperf's own summary (its "latency", half the mean round
# trip), and the whole machine's CPU per message (/proc/stat over the
# client's run; both ends are here: cpu_scope=all). A bypass run whose
# messages did not take the bypass (its counters: under 99% of the bytes
# sockperf moved, redirected) is refused. analysis/judge then judges p50,
# p99, messages a second and CPU per message, paired by repetition; its
# table is DIR/size-S/summary.md, sockperf's own figures beside it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/lifecycle.sh
source "$root/lib/lifecycle.sh"
prog_name sockperf.sh "cmd/sockperf.sh --help"

RUN=$root/run.sh
JUDGE=$root/analysis/judge

usage() {
	sed -n '/^#   sudo/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"
}

# busy_us: the whole machine's busy CPU time so far (/proc/stat's cpu
# line, in microseconds: user nice system irq softirq steal).
busy_us() {
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.0f\n", ($2 + $3 + $4 + $7 + $8 + $9) * 1e6 / hz; exit }' /proc/stat
}

# counter NAME: the bypass's counter NAME, as run.sh status shows it.
counter() { "$RUN" status | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

# one_run LABEL SIZE K FILE: one sockperf run of LABEL into FILE.
one_run() {
	local label=$1 size=$2 k=$3 file=$4 flags=() b0 b1 r0=0 r1=0 p0=0 p1=0 out log=$tmp/full.csv
	[[ $label != *-bypass ]] || flags=(--bypass)
	"$RUN" command "${flags[@]}" --cpus all -- sockperf server --tcp -i '{addr}' -p '{port}' >"$tmp/start.log" 2>&1 ||
		die "$label: sockperf's server did not start: $(tail -n 3 "$tmp/start.log")"
	if ((${#flags[@]})); then r0=$(counter bytes_redirected); p0=$(counter bytes_passed); fi
	b0=$(busy_us)
	rm -f "$log"
	if ! out=$(timeout $((SECS + 30)) "$RUN" client sockperf ping-pong --tcp -i 127.0.0.1 -p "$DEFAULT_PORT" \
		-m "$size" -t "$SECS" --full-log "$log" 2>&1); then
		"$RUN" stop >/dev/null 2>&1 || true
		die "$label: sockperf ping-pong failed: $(tail -n 3 <<<"$out")"
	fi
	b1=$(busy_us)
	if ((${#flags[@]})); then r1=$(counter bytes_redirected); p1=$(counter bytes_passed); fi
	"$RUN" stop >/dev/null || die "$label: run.sh stop failed"
	awk -v label="$label" -v k="$k" -v size="$size" -v secs="$SECS" -v busy=$((b1 - b0)) \
		-v redir=$((r1 - r0)) -v passed=$((p1 - p0)) -v bypass=${#flags[@]} -v git="$(git -C "$root" rev-parse --short HEAD 2>/dev/null)" '
		FILENAME != "-" && /^[0-9]/ {
			# the full log: "packet, txTime, rxTime" (seconds)
			gsub(/ /, ""); split($0, f, ",")
			if (f[3] + 0 > 0 && f[2] + 0 > 0) rtt[++n] = (f[3] - f[2]) * 1e6
			next
		}
		FILENAME == "-" && /\[Total Run\]/ { match($0, /ReceivedMessages=[0-9]+/); total = substr($0, RSTART + 17, RLENGTH - 17); match($0, /SentMessages=[0-9]+/); sent = substr($0, RSTART + 13, RLENGTH - 13) }
		FILENAME == "-" && /\[Valid Duration\]/ { match($0, /RunTime=[0-9.]+/); window = substr($0, RSTART + 8, RLENGTH - 8) }
		FILENAME == "-" && /Summary: Latency is/ { lat = $NF; if (lat == "usec") lat = $(NF - 1) }
		FILENAME == "-" && /percentile 50.000/ { p50 = $NF }
		FILENAME == "-" && /percentile 99.000/ { p99 = $NF }
		END {
			if (n == 0 || total <= 0 || window <= 0) { print "no samples or no window in the output of sockperf" > "/dev/stderr"; exit 1 }
			moved = size * (sent + total)	# out and back
			if (bypass && (redir < 0.99 * moved || passed * 99 > redir)) {
				printf "refused: the bypass redirected %d of the %d bytes sockperf moved (%d through TCP)\n", redir, moved, passed > "/dev/stderr"; exit 1
			}
			printf "# tool=sockperf ping-pong --tcp -m %d -t %s (its server, run.sh command)\n# label=%s\n# server=command\n# repeat=%d\n", size, secs, label, k
			printf "# size=%d\n# git=%s\n# window_s=%s\n# cpu_scope=all\n", size, git, window
			printf "# server_cpu_us_per_echo=%.3f\n", busy / total
			printf "# sockperf_latency_us=%s\n# sockperf_p50_us=%s\n# sockperf_p99_us=%s\n# sockperf_messages=%d\n", lat, p50, p99, total
			if (bypass) printf "# bytes_redirected=%d\n# bytes_passed=%d\n", redir, passed
			printf "# columns=thread\tround\tconnect_us\trtt_us\tarrival_us\tlag_us\tsent_us\tstatus\n"
			for (i = 1; i <= n; i++) printf "0\t0\t-\t%.1f\t-\t-\t-\tok\n", rtt[i]
		}' "$log" - <<<"$out" >"$file" || { rm -f "$file"; die "$label: run $k refused or unreadable (above)"; }
	say "$label, $size B, run $k: sockperf says latency $(sed -n 's/^# sockperf_latency_us=//p' "$file") us; machine CPU $(sed -n 's/^# server_cpu_us_per_echo=//p' "$file") us/message"
}

main() {
	local repeat=5 seed='' sizes=14 out='' size k dir order l
	SECS=10
	while (($#)); do
		case $1 in
		--repeat) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--repeat needs a whole number"; repeat=$2; shift ;;
		--seconds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--seconds needs a whole number"; SECS=$2; shift ;;
		--sizes) [[ ${2:-} =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || usage_error "--sizes needs sizes in bytes, e.g. 14,64"; sizes=$2; shift ;;
		--seed) [[ ${2:-} =~ ^[0-9]+$ ]] || usage_error "--seed needs a number"; seed=$2; shift ;;
		--out) out=${2:?--out needs a directory}; shift ;;
		-h | --help) usage; exit 0 ;;
		*) usage_error "unknown argument '$1'" ;;
		esac
		shift
	done
	need_root "${0##*/}"
	command -v sockperf >/dev/null || die "sockperf is not installed: run 'sudo make deps' (Debian: sockperf)"
	[[ -z $(server_unavailable user --bypass) ]] || die "the bypass cannot run here: $(server_unavailable user --bypass)"
	[[ -x $JUDGE ]] || die "analysis/judge is not built: run 'make all'"
	[[ -n $(state server) ]] && die "a server is running ($(state server)): stop it first ('sudo ./run.sh stop')"
	[[ -n $out ]] || out=$root/results/$(date +%Y%m%d)-sockperf
	seed=${seed:-$RANDOM}
	RANDOM=$seed
	tmp=$(mktemp -d)
	trap '"$RUN" stop >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
	trap 'exit 130' INT TERM
	mkdir -p "$out"
	printf 'seed=%s\nrepeat=%s\nseconds=%s\nsizes=%s\nkernel=%s\n' "$seed" "$repeat" "$SECS" "$sizes" "$(uname -r)" >"$out/meta.txt"
	for size in ${sizes//,/ }; do
		dir=$out/size-$size
		mkdir -p "$dir"
		for ((k = 1; k <= repeat; k++)); do
			order=(sockperf sockperf-bypass)
			((RANDOM % 2 == 0)) || order=(sockperf-bypass sockperf)
			echo "order=size-$size repeat=$k ${order[*]}" >>"$out/meta.txt"
			for l in "${order[@]}"; do
				one_run "$l" "$size" "$k" "$dir/$l-$k.tsv"
			done
		done
		"$JUDGE" --baseline sockperf --markdown "$dir"/sockperf-[0-9]*.tsv "$dir"/sockperf-bypass-*.tsv >"$dir/summary.md"
		{
			echo
			echo "sockperf's own figures (its summary; latency is half the mean round trip), median of the runs:"
			echo
			echo "| label | runs | latency, us | p50, us | p99, us | messages |"
			echo "|---|---|---|---|---|---|"
			for l in sockperf sockperf-bypass; do
				awk -F= -v l="$l" '
					function med(a, n,   i, j, t) {
						for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
						return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
					}
					$1 == "# sockperf_latency_us" { lat[++n] = $2 } $1 == "# sockperf_p50_us" { p50[++m] = $2 }
					$1 == "# sockperf_p99_us" { p99[++q] = $2 } $1 == "# sockperf_messages" { msg[++r] = $2 }
					END { printf "| %s | %d | %.3f | %.3f | %.3f | %.0f |\n", l, n, med(lat, n), med(p50, m), med(p99, q), med(msg, r) }' \
					"$dir/$l"-[0-9]*.tsv
			done
		} >>"$dir/summary.md"
		gzip -f "$dir"/*.tsv
		say "size $size: $dir/summary.md"
		sed -n '/^| label /,$p' "$dir/summary.md"
	done
	say "results: $out"
}

main "$@"
