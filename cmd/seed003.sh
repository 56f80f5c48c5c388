#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# seed003.sh - seed 003's experiment again, as the seed ran it: Debian's
# nginx as an HTTP load balancer (upstream, round robin) in front of two
# web servers that answer with their names, wrk -c100 as the client, each
# party in a network namespace of its own, without and with the sk_msg
# bypass (sockredir/) joining the local connections, judged by the
# suite's method.
#
#   sudo ./cmd/seed003.sh [--repeat N] [--duration S] [--threads N]
#                         [--port N] [--seed N] [--out DIR]
#   sudo ./cmd/seed003.sh --cleanup
#
#   --repeat N    pairs of runs, each pair one run without and one with
#                 the bypass in a random order (default 5; --seed N: that
#                 order again)
#   --duration S  each run's wrk -d, in seconds (default 10, the seed's)
#   --threads N   wrk -t (default 2: the seed's, wrk's own default, one a
#                 CPU on this 2-CPU machine)
#   --port N      the port every party listens on, each at its own
#                 address (default 80, the seed's)
#   --out DIR     default results/DATE-seed003
#   --cleanup     remove what a killed run left (its namespaces, nginx,
#                 wrk and sockredir processes, the bypass's cgroup), then
#                 exit
#
# The parties, as the seed's containers: wrk in echolab-seed003-client
# (172.17.0.4), the balancer in echolab-seed003-lb (172.17.0.5, nginx,
# worker_processes auto: the seed's configuration), the web servers in
# echolab-seed003-web1 and -web2 (172.17.0.2 and .3, nginx with one
# worker each, answering "Hostname: http1" or "http2"), joined by veths
# to a bridge in echolab-seed003-bridge. No access log (the seed's image
# logged every request to the container's stdout: a cost common to both
# modes that would only shrink the bypass's share).
#
# Every run starts all three nginx and sockredir afresh. In a bypass run
# the nginx and wrk processes start in the bypass's cgroup
# (<cgroup2>/echolab-bypass-PORT), so both legs, client -> balancer and
# balancer -> web server, are local connections to PORT that it joins;
# in the other runs sockredir runs too, with no process in its cgroup:
# its counters then show that nothing took it. Its counters before and
# after wrk (SIGUSR1) give what wrk's run redirected.
#
# Out, in DIR: per run LABEL-K.tsv.gz (bench's raw file: one row per
# request with wrk's latency, from its histogram; the run's window, the
# whole machine's CPU per request from /proc/stat, the bypass's counters
# as metadata), LABEL-K.wrk.txt (wrk's own report), LABEL-K.log (the
# parties' logs); meta.txt (settings, versions, the order); summary.md
# (analysis/judge, baseline nginx, and wrk's own figures). LABEL is
# nginx or nginx-bypass. A run that wrk reports errors for (non-2xx,
# timeouts, socket errors) stops the experiment: every request must be
# one the backends answered. Exit status: 0; 1 on an error; 2 for bad
# usage; 130 when interrupted (what was written stays).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/common.sh
source "$root/lib/common.sh"
# shellcheck source=cmd/seed003-wrk.sh
source "$root/cmd/seed003-wrk.sh"
prog_name seed003.sh "cmd/seed003.sh --help"

SOCKREDIR=$root/sockredir/sockredir
JUDGE=$root/analysis/judge
NS_PREFIX=echolab-seed003
PARTIES=(client lb web1 web2)
declare -A ADDR=([web1]=172.17.0.2 [web2]=172.17.0.3 [client]=172.17.0.4 [lb]=172.17.0.5)
ATTACH_S=20	# what sockredir may take to attach (servers/bypass.sh's bound)

usage() { sed -n '/^#   sudo/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

ns_path() { echo "/run/netns/$NS_PREFIX-$1"; }

# ---- what the experiment leaves, and taking it away ------------------------

# our_namespaces: the namespaces of this experiment that exist.
our_namespaces() { ip netns list | awk -v p="$NS_PREFIX-" 'index($1, p) == 1 { print $1 }'; }

# stop_pids SIGNAL SECONDS PID...: SIGNAL to each, then SIGKILL to any
# still there after SECONDS.
stop_pids() {
	local sig=$1 secs=$2 p
	shift 2
	(($#)) || return 0
	kill "-$sig" "$@" 2>/dev/null || true
	for p; do
		# alive: a child that ended is a zombie until reaped, which kill -0
		# does not tell from a live one.
		wait_until "$secs" eval "! alive $p" || kill -KILL "$p" 2>/dev/null || true
	done
}

# ns_pids: every process inside one of our namespaces (nginx's workers
# included: they outlive a master killed with SIGKILL).
ns_pids() {
	local ns
	for ns in $(our_namespaces); do
		ip netns pids "$ns" 2>/dev/null || true
	done
}

# stop_parties: the nginx and wrk processes of the run, and any process
# left in our namespaces.
stop_parties() {
	local pids
	# SIGINT: nginx's fast shutdown, and wrk's end (it still reports)
	# shellcheck disable=SC2086 # PIDS: a list
	stop_pids INT 5 ${PIDS:-}
	PIDS=
	pids=$(ns_pids)
	# shellcheck disable=SC2086 # a list of pids
	[[ -z $pids ]] || stop_pids KILL 2 $pids
}

# stop_bypass: sockredir stopped (it detaches, empties and removes its
# cgroup, and prints its counters); a cgroup a killed one left, removed.
stop_bypass() {
	local cg
	if [[ -n ${BYPASS_PID:-} ]]; then
		stop_pids TERM 10 "$BYPASS_PID"
		wait "$BYPASS_PID" 2>/dev/null || true
		BYPASS_PID=
	fi
	cg=$(cgroup2_mount)
	cg=${cg:+$cg/echolab-bypass-$PORT}
	if [[ -n $cg && -d $cg ]]; then
		# shellcheck disable=SC2046 # a list of pids
		[[ ! -s $cg/cgroup.procs ]] || stop_pids KILL 2 $(<"$cg/cgroup.procs")
		rmdir "$cg" 2>/dev/null || warn "cannot remove $cg: remove it by hand"
	fi
	CG=
}

# teardown: nothing of the experiment left: processes, sockredir, its
# cgroup, the namespaces (deleting them takes their veths and bridge).
teardown() {
	local ns
	stop_parties
	stop_bypass
	for ns in $(our_namespaces); do
		ip netns del "$ns" 2>/dev/null || warn "cannot delete the namespace $ns"
	done
}

# on_exit: always; a run cut short says so in meta.txt.
on_exit() {
	local rc=$?
	trap - EXIT INT TERM
	set +e
	teardown
	if [[ -n ${OUT:-} && -f $OUT/meta.txt && ${FINISHED:-0} != 1 ]]; then
		echo "status=stopped (exit $rc) after $DONE_RUNS of $TOTAL_RUNS runs" >>"$OUT/meta.txt"
		warn "stopped after $DONE_RUNS of $TOTAL_RUNS runs; what they wrote is in $OUT"
	fi
	[[ -z ${TMP:-} ]] || rm -rf "$TMP"
	exit "$rc"
}

# ---- the network: four parties and a bridge ----------------------------------

setup_net() {
	local p br=$NS_PREFIX-bridge
	ip netns add "$br"
	ip -n "$br" link set lo up
	ip -n "$br" link add br0 type bridge
	ip -n "$br" link set br0 up
	for p in "${PARTIES[@]}"; do
		ip netns add "$NS_PREFIX-$p"
		ip -n "$NS_PREFIX-$p" link set lo up
		ip -n "$br" link add "$p" type veth peer name eth0 netns "$NS_PREFIX-$p"
		ip -n "$br" link set "$p" master br0 up
		ip -n "$NS_PREFIX-$p" addr add "${ADDR[$p]}/24" dev eth0
		ip -n "$NS_PREFIX-$p" link set eth0 up
	done
}

# ---- the parties ---------------------------------------------------------------

# nginx_conf NAME: the configuration of the balancer (lb) or a web server.
nginx_conf() {
	local name=$1 dir=$TMP/$1
	mkdir -p "$dir"
	{
		echo "daemon off;"
		echo "pid $dir/nginx.pid;"
		echo "error_log $dir/error.log notice;"
		if [[ $name == lb ]]; then
			echo "worker_processes auto;"
		else
			echo "worker_processes 1;"
		fi
		echo "events { worker_connections 1024; }"
		echo "http {"
		echo "    access_log off;"
		local t
		for t in client_body proxy fastcgi uwsgi scgi; do
			echo "    ${t}_temp_path $dir/$t;"
		done
		if [[ $name == lb ]]; then
			# max_fails=0: no passive health check. Its default (1 failure
			# in 10 s takes a server out for 10 s) turns one failed
			# connection to each web server into 10 s of 502s: the run
			# then measures nginx's outage, not the hops. The request is
			# still tried at the other server; the error is logged, and
			# counted in the run's raw file.
			echo "    upstream webservers {"
			echo "        server ${ADDR[web1]}:$PORT max_fails=0;"
			echo "        server ${ADDR[web2]}:$PORT max_fails=0;"
			echo "    }"
			echo "    server {"
			echo "        listen ${ADDR[lb]}:$PORT;"
			echo "        location / { proxy_pass http://webservers; }"
			echo "    }"
		else
			echo "    server {"
			echo "        listen ${ADDR[$name]}:$PORT;"
			printf '        location / { return 200 "Hostname: http%s\\n"; }\n' "${name#web}"
			echo "    }"
		fi
		echo "}"
	} >"$dir/nginx.conf"
}

# spawn PARTY LOG CMD...: CMD in PARTY's namespace, in the bypass's
# cgroup when CG is set, in the background; its pid in SPAWNED.
spawn() {
	local party=$1 log=$2
	shift 2
	(
		[[ -z ${CG:-} ]] || echo "$BASHPID" >"$CG/cgroup.procs"
		exec nsenter --net="$(ns_path "$party")" "$@"
	) </dev/null >>"$log" 2>&1 &
	SPAWNED=$!
}

# http_get: one request from the client's namespace to the balancer, the
# response on stdout (bash's /dev/tcp: no curl needed).
http_get() {
	# shellcheck disable=SC2016 # bash -c's own arguments
	timeout 2 nsenter --net="$(ns_path client)" bash -c \
		'exec 3<>"/dev/tcp/$0/$1" && printf "GET / HTTP/1.0\r\nHost: lb\r\n\r\n" >&3 && cat <&3' \
		"${ADDR[lb]}" "$PORT" 2>/dev/null
}

# balanced: the balancer answers, and from both web servers.
balanced() {
	local seen='' r _
	for _ in 1 2 3 4; do
		r=$(http_get) || return 1
		[[ $r == "HTTP/1.1 200"* ]] || return 1
		[[ $r != *"Hostname: http1"* ]] || seen+=1
		[[ $r != *"Hostname: http2"* ]] || seen+=2
	done
	[[ $seen == *1* && $seen == *2* ]]
}

# keep_error_logs LOG: each nginx's error log of the run onto LOG, and
# emptied for the next (nginx appends). Its messages, told apart from the
# times, pids and connection numbers, counted: a run whose balancer lost
# its web servers says why in a few lines, not one per request.
# LB_ERRORS: the balancer's messages of level error or worse (an upstream
# connection that failed is one).
keep_error_logs() {
	local log=$1 p f
	LB_ERRORS=0
	for p in lb web1 web2; do
		f=$TMP/$p/error.log
		[[ -f $f ]] || continue
		[[ $p != lb ]] || LB_ERRORS=$(grep -cE '\[(error|crit|alert|emerg)\]' "$f" || true)
		{
			echo "== $p: error.log, $(wc -l <"$f") lines, each message counted"
			sed -E 's/^[0-9\/]+ [0-9:]+ //; s/[0-9]+#[0-9]+: (\*[0-9]+ )?//' "$f" | sort | uniq -c | sort -rn | head -n 20
		} >>"$log"
		: >"$f"
	done
}

start_parties() {
	local p log=$1
	PIDS=
	for p in web1 web2 lb; do
		spawn "$p" "$log" nginx -p "$TMP/$p/" -c "$TMP/$p/nginx.conf" -e "$TMP/$p/error.log"
		PIDS+=" $SPAWNED"
	done
	wait_until 10 balanced || {
		keep_error_logs "$log"
		die "nginx did not answer from both web servers within 10 s (their error logs: $log): $(tail -n 5 "$log")"
	}
}

# ---- the bypass ------------------------------------------------------------------

# start_bypass LOG: sockredir for PORT, attached; CG its cgroup.
start_bypass() {
	local log=$1
	setsid "$SOCKREDIR" --port "$PORT" </dev/null >"$log" 2>&1 &
	BYPASS_PID=$!
	wait_until "$ATTACH_S" eval "sockredir_cgroup '$log' >/dev/null || ! kill -0 $BYPASS_PID 2>/dev/null" || true
	BYPASS_CG=$(sockredir_cgroup "$log") ||
		die "sockredir did not attach: $(tail -n 5 "$log")"
	[[ -d $BYPASS_CG ]] || die "sockredir's cgroup '$BYPASS_CG' is not there"
}

# counters LOG: sockredir's counters now (SIGUSR1; the line it adds to
# its log), 'key=value ...'.
counters() {
	local log=$1 n
	n=$(grep -c '^counters ' "$log" || true)
	kill -USR1 "$BYPASS_PID"
	wait_until 5 eval "(( \$(grep -c '^counters ' '$log' || true) > $n ))" ||
		die "sockredir printed no counters within 5 s of SIGUSR1"
	grep '^counters ' "$log" | tail -n 1 | sed 's/^counters //'
}

# delta BEFORE AFTER: each counter's growth, 'key=value ...'.
delta() {
	local kv k grown=()
	for kv in $2; do
		k=${kv%%=*}
		grown+=("$k=$((${kv#*=} - $(field "$1" "$k")))")
	done
	echo "${grown[*]}"
}

# ---- one run -----------------------------------------------------------------------

# cpu_ticks: the cpu line of /proc/stat: 'busy idle steal' in ticks, busy
# the fields a CPU works in (user nice system irq softirq), idle with
# iowait.
cpu_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6, $9; exit }' /proc/stat; }

# one_run LABEL K: one run of LABEL (nginx or nginx-bypass), repetition K.
one_run() {
	local label=$1 k=$2 base=$OUT/$1-$2 log c0 c1 t0 t1 s0 s1 rc=0 red blog=$TMP/sockredir.log e
	log=$base.log
	: >"$log"
	start_bypass "$blog"
	CG=
	[[ $label != *-bypass ]] || CG=$BYPASS_CG
	start_parties "$log"
	c0=$(counters "$blog")
	s0=$(cpu_ticks)
	t0=$EPOCHREALTIME
	rm -f "$TMP/wrk.out"
	spawn client "$base.wrk.txt" env SEED003_OUT="$TMP/wrk.out" \
		timeout -k 5 $((DURATION + 30)) wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" --latency \
		-s "$TMP/seed003.lua" "http://${ADDR[lb]}:$PORT/"
	PIDS+=" $SPAWNED"
	wait "$SPAWNED" || rc=$?
	t1=$EPOCHREALTIME
	s1=$(cpu_ticks)
	c1=$(counters "$blog")
	stop_parties
	stop_bypass
	{ echo "== sockredir"; cat "$blog"; } >>"$log"
	keep_error_logs "$log"
	# 130: wrk ended by a SIGINT (its timeout passes ours on), an
	# interrupt whose trap the wait may have missed.
	((rc != 130)) || exit 130
	((rc == 0)) || die "$label, run $k: wrk failed (exit $rc): $(tail -n 3 "$base.wrk.txt")"
	[[ -s $TMP/wrk.out ]] || die "$label, run $k: wrk wrote no figures (its done() hook): $(tail -n 3 "$base.wrk.txt")"
	red=$(delta "$c0" "$c1")
	echo "upstream_errors $LB_ERRORS" >>"$TMP/wrk.out"
	raw_file "$label" "$k" "$t0" "$t1" "$s0" "$s1" "$red" "$c1" <"$TMP/wrk.out" >"$TMP/raw.tsv" ||
		die "$label, run $k: cannot make its raw file from wrk's figures (above); wrk's report: $base.wrk.txt"
	gzip -9 -c "$TMP/raw.tsv" >"$base.tsv.gz"
	read -r -a e < <(sed -n 's/^errors //p' "$TMP/wrk.out")
	((e[0] + e[1] + e[2] + e[3] + e[4] == 0)) ||
		die "$label, run $k: wrk reports errors (connect read write status timeout: ${e[*]}); the balancer's commonest message:$(sed -n '/^== lb:/{n;p;q}' "$log"); see $base.wrk.txt and $log"
	say "$label, pair $k: $(sed -n 's/^Requests\/sec: *//p' "$base.wrk.txt") req/s, mean latency $(awk '$1 == "latency_mean_us" { printf "%.2f ms", $2 / 1000 }' "$TMP/wrk.out"), machine CPU $(sed -n 's/^# server_cpu_us_per_echo=//p' "$TMP/raw.tsv") us/request; bypass during wrk: $(field "$red" msgs_redirected) messages redirected, $(field "$red" msgs_passed) through TCP"
	((LB_ERRORS == 0)) ||
		say "$label, pair $k: the balancer logged $LB_ERRORS errors (each request it retried at the other web server; none reached wrk): see $log"
}

# ---- the summary -------------------------------------------------------------------

write_summary() {
	local files=("$OUT"/nginx-[0-9]*.tsv.gz "$OUT"/nginx-bypass-[0-9]*.tsv.gz)
	{
		echo "# Seed 003 again: nginx balancing two web servers, wrk -t$THREADS -c100, ${DURATION} s runs"
		echo
		echo "\`$CMDLINE\`"
		echo
		"$JUDGE" --baseline nginx --markdown "${files[@]}"
		echo
		echo "wrk's own figures and the bypass's counters during wrk, median over the runs:"
		echo
		echo "| label | runs | req/s (wrk) | mean latency, ms (wrk) | machine CPU, us/request | messages redirected | messages through TCP |"
		echo "|---|---|---|---|---|---|---|"
		local l
		for l in nginx nginx-bypass; do
			for f in "$OUT/$l"-[0-9]*.tsv.gz; do
				# || true: awk stops at the first row, zcat then gets SIGPIPE
				{ zcat "$f" || true; } | awk -F= '!/^#/ { exit } { m[substr($1, 3)] = $2 }
					END { print m["wrk_rps"], m["wrk_latency_mean_us"], m["server_cpu_us_per_echo"], m["bypass_wrk_msgs_redirected"], m["bypass_wrk_msgs_passed"] }'
			done | awk -v l="$l" '
				function med(col,   a, i, j, t, k) {
					for (i = 1; i <= NR; i++) a[i] = v[i, col] + 0
					for (i = 2; i <= NR; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
					k = int((NR + 1) / 2)
					return NR % 2 ? a[k] : (a[NR / 2] + a[NR / 2 + 1]) / 2
				}
				{ for (i = 1; i <= NF; i++) v[NR, i] = $i }
				END { printf "| %s | %d | %.0f | %.2f | %.1f | %.0f | %.0f |\n", l, NR, med(1), med(2) / 1000, med(3), med(4), med(5) }'
		done
	} >"$OUT/summary.md"
}

# ---- main ----------------------------------------------------------------------------

# parse_args ARG...: the settings (REPEAT, DURATION, THREADS, PORT, SEED,
# OUT_ARG, CLEANUP); exit 2 on a bad one.
parse_args() {
	REPEAT=5 DURATION=10 THREADS=2 PORT=80 CONNECTIONS=100 SEED='' OUT_ARG='' CLEANUP=0
	while (($#)); do
		case $1 in
		--repeat) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--repeat needs a whole number"; REPEAT=$2; shift ;;
		--duration) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--duration needs whole seconds"; DURATION=$2; shift ;;
		--threads) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage_error "--threads needs a whole number"; THREADS=$2; shift ;;
		--port) [[ ${2:-} =~ ^[1-9][0-9]{0,4}$ && $2 -lt 65536 ]] || usage_error "--port needs a port number (1-65535)"; PORT=$2; shift ;;
		--seed) [[ ${2:-} =~ ^[0-9]+$ ]] || usage_error "--seed needs a number"; SEED=$2; shift ;;
		--out) [[ -n ${2:-} ]] || usage_error "--out needs a directory"; OUT_ARG=$2; shift ;;
		--cleanup) CLEANUP=1 ;;
		-h | --help) usage; exit 0 ;;
		*) usage_error "unknown argument '$1'" ;;
		esac
		shift
	done
	((THREADS <= CONNECTIONS)) || usage_error "--threads: at most $CONNECTIONS (wrk needs a connection a thread)"
}

# cleanup_only: --cleanup. A sockredir of ours outlives a run killed with
# SIGKILL (it runs in a session of its own): the one of this port goes too.
cleanup_only() {
	local p
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/exe" 2>/dev/null) == "$SOCKREDIR" &&
			$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) == "$SOCKREDIR --port $PORT " ]] || continue
		BYPASS_PID=${p#/proc/}
		stop_bypass
	done
	teardown
	say "nothing of seed003.sh is left (namespaces $NS_PREFIX-*, their processes, echolab-bypass-$PORT)"
}

# preflight: what the experiment needs, each missing part with its remedy.
preflight() {
	command -v nginx >/dev/null || die "nginx is not installed: run 'sudo make deps' (Debian: nginx)"
	command -v wrk >/dev/null || die "wrk is not installed: run 'sudo make deps' (Debian: wrk)"
	command -v nsenter >/dev/null || die "nsenter is not installed: run 'sudo make deps' (Debian: util-linux)"
	[[ -x $SOCKREDIR ]] || die "the bypass is not built: run 'make all' (or make -C sockredir)"
	[[ -x $JUDGE ]] || die "analysis/judge is not built: run 'make all'"
	[[ -n $(cgroup2_mount) ]] || die "no cgroup v2 mount: the bypass attaches to a cgroup v2 directory"
	[[ -z $(our_namespaces) ]] ||
		die "namespaces $NS_PREFIX-* exist: another seed003.sh runs, or one was killed ('sudo ./cmd/seed003.sh --cleanup' removes what it left)"
	[[ ! -d $(cgroup2_mount)/echolab-bypass-$PORT ]] ||
		die "the bypass's cgroup echolab-bypass-$PORT exists: a bypass runs on port $PORT ('pgrep -a sockredir'; './run.sh stop')"
}

write_meta() {
	{
		echo "command=$CMDLINE"
		echo "seed=$SEED"
		echo "repeat=$REPEAT"
		echo "duration_s=$DURATION"
		echo "threads=$THREADS"
		echo "connections=$CONNECTIONS"
		echo "port=$PORT"
		echo "kernel=$(uname -r)"
		echo "cpus=$(nproc)"
		echo "nginx=$(nginx -v 2>&1 | sed 's/^nginx version: //')"
		echo "wrk=$(wrk -v 2>&1 | head -n 1)"
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} >"$OUT/meta.txt"
}

main() {
	local k order l p
	CMDLINE="sudo ./cmd/seed003.sh $*"
	parse_args "$@"
	need_root "${0##*/}"
	if ((CLEANUP)); then
		cleanup_only
		exit 0
	fi
	preflight
	OUT=${OUT_ARG:-$root/results/$(date +%Y%m%d)-seed003}
	SEED=${SEED:-$RANDOM}
	RANDOM=$SEED
	TOTAL_RUNS=$((2 * REPEAT)) DONE_RUNS=0 FINISHED=0
	PIDS='' BYPASS_PID='' CG=''
	trap on_exit EXIT
	trap 'exit 130' INT TERM HUP
	TMP=$(mktemp -d)
	mkdir -p "$OUT"
	printf '%s\n' "$WRK_LUA" >"$TMP/seed003.lua"
	write_meta
	say "results: $OUT"
	setup_net
	for p in web1 web2 lb; do nginx_conf "$p"; done
	for ((k = 1; k <= REPEAT; k++)); do
		order=(nginx nginx-bypass)
		((RANDOM % 2 == 0)) || order=(nginx-bypass nginx)
		echo "order=$k ${order[*]}" >>"$OUT/meta.txt"
		for l in "${order[@]}"; do
			say "run $((DONE_RUNS + 1)) of $TOTAL_RUNS: $l, pair $k"
			one_run "$l" "$k"
			DONE_RUNS=$((DONE_RUNS + 1))
		done
	done
	FINISHED=1
	echo "status=done" >>"$OUT/meta.txt"
	write_summary
	say "summary: $OUT/summary.md"
	cat "$OUT/summary.md"
}

main "$@"
