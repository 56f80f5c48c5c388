# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # WRK_LUA is for cmd/seed003.sh; root, THREADS, ... are its
# cmd/seed003-wrk.sh - seed003.sh's wrk: the done() hook that writes a
# run's figures and latency histogram, and raw_file, which makes them a
# raw file of bench's format for analysis/judge. Sourced by
# cmd/seed003.sh only; it uses its settings (THREADS, CONNECTIONS, PORT)
# and root.

WRK_LUA='-- done(): the run as numbers, and its latency histogram, into the
-- file SEED003_OUT names (wrk calls it once, after its threads end)
done = function(summary, latency, requests)
	local f = assert(io.open(os.getenv("SEED003_OUT"), "w"))
	local e = summary.errors
	f:write(string.format("duration_us %d\nrequests %d\nbytes %d\n",
		summary.duration, summary.requests, summary.bytes))
	f:write(string.format("errors %d %d %d %d %d\n",
		e.connect, e.read, e.write, e.status, e.timeout))
	f:write(string.format("latency_mean_us %.1f\nlatency_max_us %d\n",
		latency.mean, latency.max))
	for i = 1, #latency do
		local v, n = latency(i)
		f:write(string.format("hist %d %d\n", v, n))
	end
	f:close()
end
'

# raw_file LABEL K T0 T1 TICKS0 TICKS1 WRK-COUNTERS TOTAL-COUNTERS < wrk.out:
# bench's raw file of the run on stdout, one row per request wrk timed.
#
# wrk's histogram, as its done() hook sees it, is the one it reports: after
# its run wrk adds, for every latency L of at least twice the connections'
# mean interval E (the run's time over its requests a connection), made-up
# samples at L - E, L - 2E, ... down to E (stats_correct, its answer to
# coordinated omission). Its own mean and percentiles (the seed's 7.53 ms)
# count them; its request count does not. The rows are the requests
# themselves: the correction undone, from the highest latency down. A
# latency M above E holds, besides its own requests, one made-up sample
# for every request at M + E, M + 2E, ...: those counted already.
raw_file() {
	awk -v label="$1" -v k="$2" -v t0="$3" -v t1="$4" -v s0="$5" -v s1="$6" \
		-v red="$7" -v total="$8" -v hz="$(getconf CLK_TCK)" -v ncpu="$(nproc)" \
		-v threads="$THREADS" -v conns="$CONNECTIONS" -v port="$PORT" -v kernel="$(uname -r)" \
		-v git="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo -)" '
		$1 == "hist" { v[++n] = $2; c[n] = $3; all += $3; next }
		$1 == "errors" { err = $2 " " $3 " " $4 " " $5 " " $6; next }
		{ m[$1] = $2 }
		# wrk percentile P of the histogram as wrk reports it
		function wrk_pct(p,   rank, i, t) {
			rank = int(p / 100 * all + 0.5 + 0.5)
			for (i = 1; i <= n; i++) if ((t += c[i]) >= rank) return v[i]
			return 0
		}
		END {
			per = int(m["requests"] / conns)
			e = per > 0 ? int(m["duration_us"] / per) : 0
			kept = 0
			for (i = n; i >= 1; i--) {
				r = e > 0 ? v[i] % e : 0
				own[i] = c[i]
				if (e > 0 && v[i] > e) own[i] -= acc[r]
				if (own[i] < 0) { print "raw_file: undoing wrk'"'"'s correction gave a negative count at " v[i] " us" > "/dev/stderr"; exit 1 }
				acc[r] += own[i]
				kept += own[i]
			}
			if (kept != m["requests"]) {
				printf "raw_file: wrk timed %d requests once its correction is undone, but reports %d\n", kept, m["requests"] > "/dev/stderr"
				exit 1
			}
			split(s0, a, " "); split(s1, b, " ")
			wall = t1 - t0
			idle = (b[2] - a[2]) / hz; steal = (b[3] - a[3]) / hz
			busy = wall * ncpu - idle - steal
			window = m["duration_us"] / 1e6
			printf "# tool=wrk -t%d -c%d through nginx (seed 003)\n", threads, conns
			printf "# label=%s\n# server=nginx\n# repeat=%d\n# where=netns\n", label, k
			printf "# kernel=%s\n# git=%s\n# port=%d\n# threads=%d\n# connections=%d\n", kernel, git, port, threads, conns
			printf "# loop=closed\n# window_s=%.6f\n# elapsed_s=%.6f\n", window, window
			printf "# wrk_requests=%d\n# wrk_bytes=%d\n# wrk_errors=%s\n", m["requests"], m["bytes"], err
			printf "# wrk_rps=%.2f\n", m["requests"] / window
			printf "# nginx_upstream_errors=%d\n", m["upstream_errors"]
			printf "# wrk_latency_mean_us=%s\n# wrk_latency_max_us=%s\n", m["latency_mean_us"], m["latency_max_us"]
			printf "# wrk_latency_p50_us=%d\n# wrk_latency_p99_us=%d\n", wrk_pct(50), wrk_pct(99)
			printf "# wrk_corrected_samples=%d\n# wrk_correction_interval_us=%d\n", all - kept, e
			printf "# cpu_scope=all\n# server_cpus=0-%d\n# user_hz=%d\n", ncpu - 1, hz
			printf "# cpu_window_s=%.6f\n# server_busy_s=%.3f\n# server_idle_s=%.3f\n# server_steal_s=%.3f\n", wall, busy, idle, steal
			if (busy < 0) printf "# server_busy_negative_s=%.3f\n", -busy
			printf "# cpu_echoes=%d\n# server_cpu_us_per_echo=%.3f\n", m["requests"], busy * 1e6 / m["requests"]
			printf "# bypass=%s\n", label ~ /-bypass$/ ? "on" : "off (sockredir ran, no process in its cgroup)"
			nk = split(red, kv, " ")
			for (i = 1; i <= nk; i++) printf "# bypass_wrk_%s\n", kv[i]
			nk = split(total, kv, " ")
			for (i = 1; i <= nk; i++) printf "# bypass_total_%s\n", kv[i]
			printf "# columns=thread\tround\tconnect_us\trtt_us\tarrival_us\tlag_us\tsent_us\tstatus\n"
			for (i = 1; i <= n; i++)
				for (j = 0; j < own[i]; j++)
					printf "0\t0\t-\t%d.0\t-\t-\t-\tok\n", v[i]
		}'
}
