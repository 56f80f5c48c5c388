#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# sizes.sh DIR - the size table of a `run.sh compare --sizes` directory:
# DIR/size-S/ holds one comparison per message size S, each with the
# verdicts it judged in judged.txt (analysis/judge's lines, each led by
# the offered rate). Prints markdown: per size, offered load and server,
# CPU per echo and per echoed KiB, p50 and p99, and the verdicts against
# the baseline (the machine's CPU per echo too: the server's and the
# client's CPUs together, comparable whatever CPUs the server's figure
# counts). Nothing is run.
set -euo pipefail

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
prog_name sizes.sh

usage() { sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; }

main() {
	local dir=${1:-} d size
	case $dir in
	-h | --help) usage; exit 0 ;;
	'' | -*) usage_error "which results directory? sizes.sh DIR" ;;
	esac
	[[ -d $dir ]] || usage_error "'$dir' is not a directory"
	compgen -G "$dir/size-*/judged.txt" >/dev/null ||
		usage_error "'$dir' holds no size-S/judged.txt: run.sh compare --sizes makes them"
	echo "# Message size as an axis, $(sed -n 's/^date=//p' "$dir/meta.txt" 2>/dev/null | cut -c1-10)"
	echo
	echo "One comparison per size, each in \`size-S/\` with its own summary.md: every"
	echo "server offered the same open-loop rates (or run as \`$(sed -n 's/^args=//p' "$dir/meta.txt" 2>/dev/null)\` says)."
	echo "CPU per echo and per echoed KiB (the server's CPUs, microseconds), p50 and"
	echo "p99 (microseconds), each the median of the runs with its interval; the"
	echo "ratios against the baseline with their intervals, coverage and verdicts"
	echo "(analysis/judge: beyond 1 ± 3% a difference, within it equivalent, else"
	echo "inconclusive; CPU is judged only at equal achieved rates). Machine CPU"
	echo "is the server's and the client's CPUs together (the whole machine):"
	echo "comparable where the server's own figure is not (a server that runs on"
	echo "any CPU, as kecho's unbound and kthread modes do)."
	echo
	echo "| size, B | offered, msg/s | server | CPU us/echo | CPU us/KiB | p50 us | p99 us | CPU vs baseline | p50 vs baseline | machine CPU us/echo | machine CPU vs baseline |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	for d in "$dir"/size-*/; do
		size=${d%/}
		size=${size##*/size-}
		echo "$size $d"
	done | sort -n | while read -r size d; do
		awk -v size="$size" '
		function kv(line, m,   i, n, f, p) {
			n = split(line, f, " ")
			for (i = 2; i <= n; i++) {
				p = index(f[i], "=")
				if (p) m[substr(f[i], 1, p - 1)] = substr(f[i], p + 1)
				if (substr(f[i], 1, 8) == "verdict=") {	# the rest of the line
					m["verdict"] = substr(line, index(line, " verdict=") + 9)
					break
				}
			}
		}
		function iv(m, key) { return m["median"] == "-" ? "-" : m["median"] " [" m["lo"] ", " m["hi"] "]" }
		function vs(m) {
			if (m["verdict"] == "-") return "baseline"
			if (m["ratio_lo"] == "-") return (m["ratio"] == "-" ? "" : m["ratio"] " ") m["verdict"]
			return sprintf("%s [%s, %s] %.1f%% %s", m["ratio"], m["ratio_lo"], m["ratio_hi"],
				100 * m["ratio_coverage"], m["verdict"])
		}
		/^judge / {
			delete m; kv($0, m)
			point = ($2 ~ /=/) ? substr($2, index($2, "=") + 1) : "-"
			key = point SUBSEP m["label"]
			if (!(key in seen)) { seen[key] = 1; order[++n] = key; pt[n] = point; lab[n] = m["label"] }
			if (m["figure"] == "cpu") {
				cpu[key] = iv(m); cvs[key] = vs(m)
				kib[key] = m["median"] == "-" ? "-" : sprintf("%.2f", m["median"] * 1024 / size)
			}
			if (m["figure"] == "p50") { p50[key] = iv(m); pvs[key] = vs(m) }
			if (m["figure"] == "p99") p99[key] = iv(m)
			if (m["figure"] == "machine") { mach[key] = iv(m); mvs[key] = vs(m) }
		}
		END {
			for (i = 1; i <= n; i++) {
				k = order[i]
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", size, pt[i], lab[i],
					cpu[k], kib[k], p50[k], p99[k], cvs[k], pvs[k],
					(k in mach ? mach[k] : "-"), (k in mvs ? mvs[k] : "-")
			}
		}' "$d/judged.txt"
	done
	echo
	echo "Each size's verdicts in full, CPU by kind and what was left out: \`size-S/summary.md\`."
}

main "$@"
