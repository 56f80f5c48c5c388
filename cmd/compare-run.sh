# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# cmd/compare-run.sh - compare's runs: the client's namespace and veth
# pair, one run (a fresh start of the server, a warm-up, bench, a stop),
# the repetitions and when to stop repeating, the capacity probes, and
# what a refusal or an interrupt ends. Sourced by cmd/compare.sh only.

# TIME_WAIT sockets we accept before a measured run on loopback. connect()
# scans past them for a free port with bottom halves off, which slows the
# client and every echo: with 10,000 of them, 1000 x 10 had p99 476 ms
# instead of 56 ms. The two-machine placement needs no wait: each run gets a
# fresh client namespace, and the old one's sockets go with it.
# Loopback runs wait until TIME_WAIT sockets are below this (tests raise
# it: they check function, not timing; so may a long sweep of connection
# crowds, saying so). --vm passes it on to the guest.
TW_MAX=${ECHOLAB_TW_MAX:-2000}
TW_WAIT_S=75		# they expire after 60 s
# The two-machine placement: the server in the root namespace (where run.sh
# starts every server, and the only one kecho's listener knows), bench in a
# namespace of its own, joined by a veth pair.
NS_CLI=echolab-cli
VETH_SRV=echolab-srv0
VETH_CLI=echolab-cli0
NS_SRV_IP=10.213.0.1
NS_CLI_IP=10.213.0.2

# Set while running, for the interrupt handler.
RUNNING=
NETNS_UP=

# ---- places -------------------------------------------------------------

# in_cli CMD...: CMD in the client's namespace (two machines), else here.
in_cli() {
	if two_machine; then
		nsenter --net="/run/netns/$NS_CLI" "$@"
	else
		"$@"
	fi
}

# The client also joins the server's fronts (the bypass's cgroup).
in_client() {
	if server_bound; then
		host_bench "$@"
	elif two_machine; then
		in_cli "$@"
	else
		front_enter "$@"
	fi
}

server_host() {
	if server_bound; then
		echo "$BOUND_GUEST_IP"
	elif two_machine; then
		echo "$NS_SRV_IP"
	else
		echo 127.0.0.1
	fi
}

# rps_set NETNS DEV CPUS: DEV's receive processing on CPUS (RPS), seen from
# NETNS's own sysfs ('' for the root namespace: ip netns exec mounts one).
rps_set() {
	local ns=$1 dev=$2 mask
	mask=$(cpu_mask "$3")
	if [[ -z $ns ]]; then
		echo "$mask" >"/sys/class/net/$dev/queues/rx-0/rps_cpus"
	else
		ip netns exec "$ns" sh -c "echo $mask >/sys/class/net/$dev/queues/rx-0/rps_cpus"
	fi
}

# netns_up: a fresh client namespace and veth pair for one run, so that no
# run inherits another's TIME_WAIT sockets. The server's end stays in the
# root namespace, where every server (kecho's listener too) lives.
netns_up() {
	netns_down
	ip netns add "$NS_CLI"
	NETNS_UP=1
	ip link add "$VETH_SRV" type veth peer name "$VETH_CLI"
	ip link set "$VETH_CLI" netns "$NS_CLI"
	ip addr add "$NS_SRV_IP/30" dev "$VETH_SRV"
	ip -n "$NS_CLI" addr add "$NS_CLI_IP/30" dev "$VETH_CLI"
	ip -n "$NS_CLI" link set lo up
	ip link set "$VETH_SRV" up
	ip -n "$NS_CLI" link set "$VETH_CLI" up
	# Off loopback, TIME_WAIT reuse is off by default; a connection per
	# request for seconds would run out of ports. This namespace is ours.
	in_cli sysctl -qw net.ipv4.tcp_tw_reuse=1
	# Not with netem: the 6.12 guest panicked (NULL dereference in an
	# interrupt) under 'loss 5%' with RPS on both veth ends; netem's runs
	# keep the placement that passed before, receive work unsteered.
	if [[ -n $SERVER_CPUS && -z $NETEM ]]; then
		# What arrives at each end is received on that end's CPUs: the
		# echo's receive work on the client's, as on another machine.
		rps_set '' "$VETH_SRV" "$SERVER_CPUS"
		rps_set "$NS_CLI" "$VETH_CLI" "$CLIENT_CPUS"
	fi
	[[ -z $NETEM ]] || netem_up
}

# netem_up: NETEM on both ends' egress, so that each direction gets it.
netem_up() {
	local err
	# shellcheck disable=SC2086 # NETEM: tc's words
	if ! err=$(tc qdisc add dev "$VETH_SRV" root netem $NETEM 2>&1) ||
		! err=$(in_cli tc qdisc add dev "$VETH_CLI" root netem $NETEM 2>&1); then
		if [[ $err == *"qdisc kind is unknown"* ]]; then
			die "netem: this kernel ($(uname -r)) has no sch_netem; run it in the qemu guest: sudo ./run.sh compare --vm --netem '$NETEM'"
		fi
		die "netem '$NETEM': tc refused it: $err"
	fi
}

netns_down() {
	ip netns del "$NS_CLI" 2>/dev/null || true
	ip link del "$VETH_SRV" 2>/dev/null || true
	NETNS_UP=
}

# ---- one run ----------------------------------------------------------------

# Waits until the client side has room for another full run of connections
# (loopback only: two machines get a fresh client namespace every run).
# shellcheck disable=SC2016 # an awk program, not shell
time_wait() {
	awk '/^TCP:/ { for (i = 2; i < NF; i++) if ($i == "tw") print $(i + 1) }' /proc/net/sockstat
}

drain_time_wait() {
	local n i
	for ((i = 0; i < TW_WAIT_S; i++)); do
		n=$(time_wait)
		((n <= TW_MAX)) && return 0
		((i % 15)) || say "waiting for $n TIME_WAIT sockets to expire (below $TW_MAX: a clean run)"
		sleep 1
	done
	say "warning: still $n TIME_WAIT sockets after ${TW_WAIT_S}s; going on"
}

# The CPUs whose busy time is the server's (bench --server-cpus): its own,
# or every CPU for a variant whose work runs anywhere (kecho's unbound
# workqueue: there the figure includes the client's CPUs, and says so).
server_cpu_scope() {
	if [[ $(variant_get "$1" cpu_scope) == all || -z $SERVER_CPUS ]]; then
		echo "0-$(($(nproc) - 1))"
	else
		echo "$SERVER_CPUS"
	fi
}

# bench_run LABEL FILE EXTRA-ARGS...: one measured run, summary to stdout.
bench_run() {
	local label=$1 file=$2 place_meta=() args
	shift 2
	args=$(variant_get "${label%-again}" args)
	[[ $(variant_get "${label%-again}" proxy) != 1 ]] ||
		place_meta=(--meta "proxy=${args#--proxy }: $(proxy_text "${args#--proxy }")")
	# Server-bound: bench runs on the host; the server's kernel is ours.
	! server_bound || place_meta+=(--meta "server_kernel=$(uname -r)")
	in_client "$BENCH" -H "$(server_host)" -p "$PORT" -l "$label" -o "$file" \
		--server-cpus "$(server_cpu_scope "${label%-again}")" \
		--meta "where=$WHERE" --meta "placement=$PLACEMENT" \
		--meta "workload=${WORKLOAD:-custom}" \
		${NETEM:+--meta "netem=$NETEM"} "${place_meta[@]}" \
		"${CLIENT_PLACE[@]}" "${BENCH_ARGS[@]}" "$@" ||
		# Exit 2: bench refused the arguments (the sweep's with the
		# user's: -c N -R RATE without -d only fails here). Every run
		# would fail alike; run_one ends the comparison on the mark.
		{ (($? != 2)) || : >"$OUT/.bench-refused"; }
}

# bypass_counts: the sk_msg bypass's counters, when one runs (user-bypass,
# the proxy's skmsg path), as sockredir's map has them; else nothing.
bypass_counts() { bpf_counters "$(state bypass.pid)" redir_counters; }

# bypass_record FILE BEFORE: what the bypass did during the run, its
# counters less BEFORE, at the end of the raw file (# bypass_NAME=N), and
# a warning when it moved under 90% of the bytes (the rest took TCP/IP:
# ends that sent before their peers joined stay there, sockredir.bpf.c).
bypass_record() {
	local file=$1 before=$2
	[[ -n $before && -s $file ]] || return 0
	bypass_counts | awk -v before="$before" -v file="$file" '
		BEGIN { n = split(before, b, " "); for (i = 1; i <= n; i++) { split(b[i], kv, "="); was[kv[1]] = kv[2] } }
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); d = kv[2] - was[kv[1]]; c[kv[1]] = d
			printf "# bypass_%s=%.0f\n", kv[1], d >> file } }
		END { moved = c["bytes_redirected"]; all = moved + c["bytes_passed"]
			if (all > 0 && moved < 0.9 * all)
				printf "warning: the bypass moved %.0f of the run'"'"'s %.0f bytes; the rest took TCP/IP\n", moved, all }'
}

# run_one LABEL SERVER REP TAG [BENCH-ARGS... --] [START-OPTIONS...]: a
# fresh start of the server, a warm-up, one measured run (REP 0: not
# recorded), a stop. Fails (after saying why) when the server does not
# start.
run_one() {
	local label=$1 server=$2 rep=$3 tag=$4 extra=() place=() before
	shift 4
	while (($#)) && [[ $1 != -- ]]; do extra+=("$1"); shift; done
	shift
	[[ -z $SERVER_CPUS ]] || place+=(--cpus "$SERVER_CPUS")
	# Two machines: the server listens on its veth end, as a server
	# machine would on its interface (on loopback by default).
	! two_machine || place+=(--addr "$NS_SRV_IP")
	# Server-bound: the guest's card; bench's namespace is the host's.
	! server_bound || place+=(--addr "$BOUND_GUEST_IP")
	if two_machine; then netns_up; elif ! server_bound; then drain_time_wait; fi
	# Behind the proxy, the server is its backend: on the client's side of
	# the veth, so that the proxy's end receives both hops' packets.
	if two_machine && [[ " $* " == *" --proxy "* ]]; then
		place+=(--netns "$NS_CLI" --backend-addr "$NS_CLI_IP")
	fi
	# A subshell: a server that cannot start ends it, not the comparison.
	# RUNNING before the start: Ctrl-C ends the subshell half-way, and
	# the interrupt handler must stop what it had started.
	RUNNING=$server
	(server_start "$server" --port "$PORT" "${place[@]}" "$@") 2>&1 | sed 's/^/    /'
	((PIPESTATUS[0] == 0)) || { RUNNING=; netns_down; return 1; }
	# Warm-up: caches, BPF JIT, the accept queue; not recorded. The
	# measured run has a warm-up of its own too (--warmup).
	in_client "$BENCH" -H "$(server_host)" -p "$PORT" "${CLIENT_PLACE[@]}" -t 10 -r 10 -q \
		-o /dev/null >/dev/null || say "warning: the warm-up against $label had failures"
	if ((rep == 0)); then
		bench_run "$label" /dev/null "${extra[@]}" -q >/dev/null
	elif ((rep < 0)); then	# --curve's capacity probe: closed loop
		bench_run "$label" /dev/null "${extra[@]}" -q | tee -a "$OUT/capacity.txt" | sed 's/^/    /'
	else
		before=$(bypass_counts)
		bench_run "$label" "$OUT/$label$tag-$rep.tsv" --meta "repeat=$rep" "${extra[@]}" -q |
			tee -a "$OUT/summaries.txt" | sed 's/^/    /'
		bypass_record "$OUT/$label$tag-$rep.tsv" "$before"
		# bench marks a run that a signal stopped. Ctrl-C reaches us
		# too, but now and then our trap did not run and the
		# comparison went on, to exit 0 in 2 s (2 of the 10 runs of
		# compare.t's interrupted on record here): the mark ends it
		# as the trap does.
		! grep -q '^# interrupted=1' "$OUT/$label$tag-$rep.tsv" 2>/dev/null ||
			compare_interrupted
	fi
	(server_stop) 2>&1 | sed 's/^/    /'
	RUNNING=
	[[ -z $NETNS_UP ]] || netns_down
	if [[ -e $OUT/.bench-refused ]]; then
		rm -f "$OUT/.bench-refused"
		usage_error "bench refused its arguments (its message is above): nothing more is measured. bench arguments: ${BENCH_ARGS[*]} ${extra[*]}"
	fi
}


# measure_all: REPEAT rounds over the servers, each round in an order of
# its own, drawn at random from ORDER_SEED and recorded in meta.txt: no
# server always runs first, or always after the same one (as a rotation
# ABCD, BCDA... would have it), and a drift over the comparison hits every
# server alike.
measure_all() {
	local entries=() ok=() e label server args why v n total done_runs=0 upto=
	declare -A failed=()
	mapfile -t entries < <(plan)
	for e in "${entries[@]}"; do
		read -r label server args <<<"$e"
		# shellcheck disable=SC2086 # args: zero or more start options
		why=$(server_unavailable "$server" $args)
		if [[ -n $why ]]; then
			say "$label: not measured here: $why"
			SKIPPED+=("\`$label\`: $why")
		else
			ok+=("$e")
		fi
	done
	n=${#ok[@]}
	((n)) || return 0
	if ((CURVE)); then
		probe_capacity max "$CURVE_POINTS" "${ok[@]}"
	elif ((EQUAL)) && [[ -z $RATES_SET ]]; then
		probe_capacity min "$EQUAL_POINTS" "${ok[@]}"
	fi
	total=$((n * REPEAT_MAX * ${#SWEEP_VALUES[@]}))
	((total)) || total=$((n * REPEAT_MAX))
	((REPEAT_MAX == REPEAT)) || upto="up to "
	for v in "${SWEEP_VALUES[@]:-}"; do
		measure_value "$v"
	done
	for e in "${ok[@]}"; do
		read -r label _ <<<"$e"
		[[ -n ${failed[$label]:-} ]] || MEASURED+=("$label")
	done
}

# measure_value SWEEP-VALUE: measure_all's repetitions at one value of the
# sweep (or the one run of no sweep), REPEAT to REPEAT_MAX of them. It
# reads and counts in measure_all's locals: ok, n, failed, done_runs,
# total and upto.
measure_value() {
	local v=$1 sweep_args=() tag='' label server args why rep why_stop="as asked"
	if [[ -n $SWEEP_KEY ]]; then
		sweep_args=("--$SWEEP_KEY" "$v" --meta "sweep=$SWEEP_KEY" --meta "sweep_value=$v")
		tag=-$SWEEP_KEY$v
	fi
	# The first run after a quiet spell is slower than the rest (the
	# issue's runs: user's first of three was its slowest in every
	# directory): one unrecorded run of the whole workload first.
	# Timed workloads only: a run of rounds is a burst, and may be long.
	if [[ " ${BENCH_ARGS[*]} " == *" -d "* || " ${BENCH_ARGS[*]} " == *" --duration "* ]]; then
		read -r label server args <<<"${ok[0]}"
		say "warm-up: one unrecorded run of $label${tag:+ ($SWEEP_KEY=$v)}"
		# shellcheck disable=SC2086 # args: zero or more start options
		run_one "$label" "$server" 0 "$tag" "${sweep_args[@]}" -- $args || true
	fi
	for ((rep = 1; rep <= REPEAT_MAX; rep++)); do
		if ((rep > REPEAT)); then
			if why=$(precise_enough "$v" "${ok[@]}"); then
				why_stop=$why
				rep=$((rep - 1))
				break
			fi
			say "after $((rep - 1)) repetitions: $why: one more"
		fi
		measure_round "$v" "$rep" "$tag" "${sweep_args[@]}"
	done
	if ((rep > REPEAT_MAX)); then
		rep=$REPEAT_MAX
		if ((REPEAT_MAX > REPEAT)); then
			why=$(precise_enough "$v" "${ok[@]}") || true
			why_stop="the most, $REPEAT_MAX: $why"
		fi
	fi
	ROUNDS+=("${tag:+$SWEEP_KEY=$v: }$rep ($why_stop)")
	say "${tag:+$SWEEP_KEY=$v: }$rep repetitions: $why_stop"
}

# measure_round SWEEP-VALUE REP TAG [SWEEP-ARGS...]: repetition REP, every
# server once, in an order shuffled for it and written to meta.txt. A
# server that does not start is left out from here on (measure_all's
# failed).
measure_round() {
	local v=$1 rep=$2 tag=$3 i j k l label server args
	shift 3
	shuffle "$n"
	for ((k = 0; k < n; k++)); do
		i=${ORDER[k]}
		read -r label server args <<<"${ok[i]}"
		((k)) || echo "order=${tag:+$SWEEP_KEY=$v }repetition $rep: $(for j in "${ORDER[@]}"; do
			read -r l _ <<<"${ok[j]}"; printf '%s ' "$l"; done)" >>"$OUT/meta.txt"
		done_runs=$((done_runs + 1))
		[[ -z ${failed[$label]:-} ]] || continue
		say "run $done_runs of $upto$total: $label${tag:+ ($SWEEP_KEY=$v)}, repetition $rep of $upto$REPEAT_MAX"
		# shellcheck disable=SC2086 # args: zero or more start options
		if ! run_undisturbed "$label" "$server" "$rep" "$tag" "$@" -- $args; then
			say "$label: did not start (its message is above); left out from here on"
			failed[$label]=1
			SKIPPED+=("\`$label\`: did not start here; \`sudo ./run.sh $server\` shows why")
		fi
	done
}

# How many times one repetition of a server is measured again in place
# of a run the host disturbed (analysis/disturbed.h: steal over 3% of a
# side's window, busy time below zero, CPU per echo no echo costs). A
# host that steals that much, that often, is not fit to measure on, and
# more runs would not make it so: judge leaves the last one out.
DISTURBED_MAX=2

# disturbed_why FILE: why the host disturbed the run in FILE (judge's
# reasons), or nothing.
disturbed_why() {
	"$JUDGE" "$1" 2>/dev/null | sed -n 's/^disturbed .* reason=//p'
}

# fault_steal LABEL REP TRY: the ticks of steal the test knob
# COMPARE_FAULT_DISTURB="LABEL:REP[:TIMES]" puts on this run (bench's
# ECHOLAB_FAULT_STEAL_TICKS): 60 on its first TIMES (default 1)
# attempts, so a test can watch a run replaced; else nothing.
fault_steal() {
	local l r times
	IFS=: read -r l r times <<<"${COMPARE_FAULT_DISTURB:-}"
	[[ $l == "$1" && $r == "$2" ]] && (($3 <= ${times:-1})) && echo 60
}

# run_undisturbed LABEL SERVER REP TAG ARGS...: run_one, then again in
# place of a run the host disturbed, up to DISTURBED_MAX times: the
# disturbed file moves to disturbed/ (kept, never judged) and meta.txt
# says which run was replaced and why. The last one stays where it is
# when it is disturbed too: judge leaves it out, and meta.txt says so.
run_undisturbed() {
	local label=$1 rep=$3 tag=$4 try why file
	file=$OUT/$label$tag-$rep.tsv
	for ((try = 1; ; try++)); do
		ECHOLAB_FAULT_STEAL_TICKS=$(fault_steal "$label" "$rep" "$try") run_one "$@" || return 1
		why=$(disturbed_why "$file")
		[[ -n $why ]] || return 0
		if ((try > DISTURBED_MAX)); then
			echo "disturbed=$label${tag:+ ${tag#-}} repetition $rep: still disturbed after $DISTURBED_MAX more runs, left to judge to leave out: $why" >>"$OUT/meta.txt"
			say "$label: the host disturbed this run too ($why); judge leaves it out"
			return 0
		fi
		mkdir -p "$OUT/disturbed"
		mv "$file" "$OUT/disturbed/$label$tag-$rep-try$try.tsv"
		echo "replaced=$label${tag:+ ${tag#-}} repetition $rep, run $try: $why" >>"$OUT/meta.txt"
		say "$label: the host disturbed the run ($why): measuring it again (disturbed/, meta.txt)"
	done
}

# probe_capacity max|min POINTS ENTRY...: each server's capacity, a
# closed-loop run of bench's arguments (no -R), then the offered rates:
# POINTS (fractions) of the highest (--curve: one scale for every server,
# so the curves share their points) or of the lowest (equal load: every
# server carries every point), rounded to 100 msg/s. meta.txt gets the
# sweep it became.
probe_capacity() {
	local pick=$1 points=$2 e label server args best
	shift 2
	: >"$OUT/capacity.txt"
	for e in "$@"; do
		read -r label server args <<<"$e"
		say "capacity: a closed-loop run of $label"
		# shellcheck disable=SC2086 # args: zero or more start options
		run_one "$label" "$server" -1 "" -- $args || true
	done
	best=$(awk -v pick="$pick" '{ for (i = 1; i <= NF; i++) if ($i ~ /^rps=/) { v = substr($i, 5) + 0
			if (!n++ || (pick == "max" ? v > m : v < m)) m = v } }
		END { print int(m) }' "$OUT/capacity.txt")
	((best > 0)) || die "capacity: a server carried no load in its closed-loop run ($OUT/capacity.txt): see its lines there"
	SWEEP_KEY=rate
	mapfile -t SWEEP_VALUES < <(awk -v c="$best" -v pts="$points" 'BEGIN {
		n = split(pts, p, " ")
		for (i = 1; i <= n; i++) { r = int(c * p[i] / 100 + 0.5) * 100; print (r < 100 ? 100 : r) } }')
	say "capacity: the $([[ $pick == max ]] && echo most || echo least), $best msg/s; offered loads: ${SWEEP_VALUES[*]} msg/s"
	{
		echo "capacity=$best"
		echo "capacity_of=the $([[ $pick == max ]] && echo highest || echo lowest) of the servers' closed-loop runs (capacity.txt)"
		echo "sweep=rate=$(IFS=,; echo "${SWEEP_VALUES[*]}")"
		((CURVE == 0)) || echo "curve=bound=$BOUND"
	} >>"$OUT/meta.txt"
}

# precise_enough SWEEP-VALUE ENTRY...: whether every server's CPU per echo
# is known within +-PRECISION % (the half-width of its median's 95%
# interval, from analysis/judge, over the runs so far); says why, either way.
# The rule looks at the precision only, never at a difference between
# servers, so stopping on it does not favour any verdict.
precise_enough() {
	local v=$1 e label files=() base='' out
	shift
	for e in "$@"; do
		read -r label _ <<<"$e"
		mapfile -t -O "${#files[@]}" files < <(run_files "$label" "$v")
		# The baseline: the first server with runs (one that did not
		# start has none).
		[[ -n $base || ${#files[@]} == 0 ]] || base=$label
	done
	((${#files[@]})) || return 1
	out=$("$JUDGE" --baseline "$base" "${files[@]}" 2>/dev/null) || return 1
	awk -v want="$PRECISION" '
	/^judge / && / figure=cpu / {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); m[kv[1]] = kv[2] }
		if (m["median"] + 0 <= 0 || m["lo"] == "-" || m["hi"] == "-") next
		w = 100 * (m["hi"] - m["lo"]) / 2 / m["median"]
		# One run the host did not disturb is an interval of no width,
		# not a precise one: never within the target.
		if (m["n"] - m["disturbed"] < 2) w = 100
		if (who == "" || w > worst) { worst = w; who = m["label"] }
	}
	END {
		if (who == "") { print "no CPU per echo to judge"; exit 1 }
		if (worst <= want) {
			printf "every CPU per echo within +-%.1f%%, the target +-%s%%\n", worst, want
			exit 0
		}
		printf "%s CPU per echo within +-%.1f%%, over the target +-%s%%\n", who, worst, want
		exit 1
	}' <<<"$out"
}

# Stops what we started: the server, the namespaces. Safe to call twice.
compare_cleanup() {
	[[ -z $RUNNING ]] || (server_stop) >/dev/null 2>&1 || true
	RUNNING=
	[[ -z $NETNS_UP ]] || netns_down
}

compare_interrupted() {
	trap - INT TERM
	echo
	say "interrupted: stopping ${RUNNING:-nothing}; the raw files written so far stay in $OUT"
	compare_cleanup
	echo "results: $OUT"
	exit 130
}
