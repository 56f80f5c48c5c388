#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# cmd/seed003.sh, seed 003's experiment (nginx balancing two web servers,
# wrk as the client, each party in a namespace of its own, without and
# with the sk_msg bypass), run briefly: what it keeps, what the bypass's
# counters say, and that nothing of it stays.
# Cases:
#   usage        --help, bad flags (exit 2, nothing made)
#   no-wrk       wrk or nginx not in PATH: exit 1, says 'make deps',
#                nothing made
#   run          --repeat 1 --duration 1: exit 0; per run wrk's report,
#                a raw file with a row per request wrk counted that judge
#                reads (its req/s is wrk's), the machine's CPU per
#                request, the three nginx's error logs in the run's log
#                and the balancer's errors counted; the bypass run's
#                counters: both legs
#                redirected (at least 3 messages a request, under 1%
#                through TCP), the other run's: no socket joined, nothing
#                redirected; summary.md and meta.txt; nothing left
#   interrupted  SIGINT to its process group in the middle of a run,
#                beside a CPU hog on every CPU: exit 130 within 10 s,
#                the finished run's files and the cut run's wrk report
#                kept, meta.txt says it stopped, nothing left
#   leftover     a namespace of an earlier run: refused, naming
#                --cleanup; --cleanup removes it
#
# Nothing left: no echolab-seed003-* namespace, no nginx, wrk or
# sockredir process, no redir_* program, no attachment or cgroup
# echolab-bypass-PORT (the lib's leftovers, before against after).
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="usage no-wrk run interrupted leftover"
select_cases "$@"
root_or_bail_out

SEED003=$ECHOLAB_ROOT/cmd/seed003.sh
SPORT=80	# seed003.sh's default port (the seed's)
TMP=$(mktemp -d)

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	kill_hogs
	bash "$SEED003" --cleanup >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

fact no-btf >/dev/null && skip_all no-btf
fact no-cgroup2 >/dev/null && skip_all no-cgroup2
if [[ ! -x $ECHOLAB_ROOT/sockredir/sockredir || ! -x $ECHOLAB_ROOT/analysis/judge ]]; then
	echo "Bail out! sockredir/sockredir or analysis/judge is not built: run 'make all'"
	exit 1
fi

# seed_namespaces: the experiment's namespaces (a lister: fails when ip
# does).
# shellcheck disable=SC2317 # called through absent
seed_namespaces() {
	local ns
	ns=$(ip netns list) || { echo "ip netns list failed" >&2; return 1; }
	awk '$1 ~ /^echolab-seed003-/ { print $1 }' <<<"$ns"
}

# seed_cgroup: the bypass's cgroup for seed003.sh's port (a lister).
# shellcheck disable=SC2317 # called through absent
seed_cgroup() {
	local cg
	cg=$(cgroup2_mount)
	[[ -z $cg ]] || find "$cg" -maxdepth 1 -name "echolab-bypass-$SPORT"
}

BASELINE=$(leftovers_or_why) || {
	echo "Bail out! cannot list what is there before the tests: $BASELINE"
	exit 1
}
# The machine's own nginx (Debian starts its service on install) is not
# ours: only processes that were not there before count.
BEFORE_PIDS=" $(processes '^(nginx: |wrk )' | awk '{ printf "%s ", $1 }') "

# new_processes PATTERN: processes matching PATTERN that were not there
# before the tests (a lister: fails when processes does).
# shellcheck disable=SC2317 # called through absent
new_processes() {
	local items
	items=$(processes "$1") || return 1
	[[ -z $items ]] || awk -v before="$BEFORE_PIDS" 'index(before, " " $1 " ") == 0' <<<"$items"
}

# nothing_of_it_left: no namespace, process, program, attachment or
# cgroup of the experiment.
nothing_of_it_left() {
	absent "no echolab-seed003-* namespace left" . seed_namespaces
	absent "no echolab-bypass-$SPORT cgroup left" . seed_cgroup
	absent "no attachment to echolab-bypass-$SPORT left" "/echolab-bypass-$SPORT " bpf_attachments
	absent "no redir_* program left" ' redir_(sockops|msg)$' bpf_progs
	absent "no nginx process left" . new_processes '^nginx: '
	absent "no wrk process left" . new_processes '^wrk '
	absent "no sockredir process left" . processes "sockredir/sockredir --port $SPORT"
	nothing_left_since "nothing else left" "$BASELINE"
}

# meta FILE KEY: a '# KEY=' metadata value of a gzipped raw file.
meta() { zcat "$1" 2>/dev/null | sed -n "s/^# $2=//p" | head -n 1; }

test_usage() {
	local out
	out=$(bash "$SEED003" --help)
	ok $? "--help: exit 0"
	like "$out" "--repeat N" "--help prints the usage"
	fails_with "--repeat x" 2 "^seed003.sh: --repeat needs a whole number" bash "$SEED003" --repeat x
	fails_with "--duration 0" 2 "^seed003.sh: --duration needs whole seconds" bash "$SEED003" --duration 0
	fails_with "--port 70000" 2 "^seed003.sh: --port needs a port number" bash "$SEED003" --port 70000
	fails_with "--threads 101" 2 "^seed003.sh: --threads: at most 100" bash "$SEED003" --threads 101
	fails_with "an unknown flag" 2 "^seed003.sh: unknown argument '--bogus'" bash "$SEED003" --bogus
	absent "usage: no namespace made" . seed_namespaces
}

# path_without CMD...: a directory of links to every program of PATH but
# CMD..., for a PATH where those are not installed.
path_without() {
	local dir=$TMP/path-$RANDOM d f
	mkdir -p "$dir"
	for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
		for f in "$d"/*; do
			[[ -x $f && ! -e $dir/${f##*/} ]] || continue
			[[ " $* " != *" ${f##*/} "* ]] || continue
			ln -s "$f" "$dir/${f##*/}"
		done
	done
	echo "$dir"
}

test_no_wrk() {
	local p
	p=$(path_without wrk)
	fails_with "no wrk" 1 "wrk is not installed: run 'sudo make deps'" \
		env PATH="$p" bash "$SEED003" --repeat 1 --duration 1 --out "$TMP/no-wrk"
	[[ ! -e $TMP/no-wrk ]]
	ok $? "no wrk: no results directory"
	p=$(path_without nginx)
	fails_with "no nginx" 1 "nginx is not installed: run 'sudo make deps'" \
		env PATH="$p" bash "$SEED003" --repeat 1 --duration 1 --out "$TMP/no-nginx"
	nothing_of_it_left
}

# judge_rps LABEL FILE: judge's median req/s of the one run FILE holds,
# in JUDGED. A 1 s run can lose more than judge's bound to the host's
# steal (3% of the window is 6 ticks on two CPUs); judge then rightly
# leaves it out (disturbed=1), which says nothing of how it reads the
# file. Such a run is judged again from a copy without its steal
# figures, and the reason is said, so that the check stays one of the
# file's format.
judge_rps() {
	local l=$1 f=$2 out why
	out=$("$ECHOLAB_ROOT/analysis/judge" --baseline "$l" "$f" 2>&1)
	why=$(sed -n 's/^disturbed .* reason=//p' <<<"$out")
	if [[ -n $why ]]; then
		diag "$l: judge says the host disturbed the run ($why); judged again without its steal figures"
		zcat "$f" | grep -v '^# [a-z]*_steal_s=' | gzip >"$TMP/undisturbed-$l-1.tsv.gz"
		out=$("$ECHOLAB_ROOT/analysis/judge" --baseline "$l" "$TMP/undisturbed-$l-1.tsv.gz" 2>&1)
	fi
	JUDGED=$(awk '/ figure=rps / { for (i = 1; i <= NF; i++) if ($i ~ /^median=/) print substr($i, 8) }' <<<"$out")
}

test_run() {
	local out dir=$TMP/run f rows reqs rps judged red passed added l JUDGED
	out=$(bounded 120 "$SEED003" --repeat 1 --duration 1 --seed 3 --out "$dir" 2>&1)
	ok $? "--repeat 1 --duration 1: exit 0" || diag "$(tail -n 5 <<<"$out")"
	for l in nginx nginx-bypass; do
		f=$dir/$l-1.tsv.gz
		grep -q '^Requests/sec:' "$dir/$l-1.wrk.txt" 2>/dev/null
		ok $? "$l: wrk's report kept"
		rows=$(zcat "$f" 2>/dev/null | grep -vc '^#')
		reqs=$(meta "$f" wrk_requests)
		[[ $reqs =~ ^[0-9]+$ ]] && ((reqs > 100 && rows == reqs))
		ok $? "$l: a row per request wrk counted"
		diag "$l: $rows rows, wrk counted ${reqs:-none} requests, $(meta "$f" wrk_corrected_samples) made-up samples of its correction left out"
		# judge's req/s (rows over the window) is wrk's Requests/sec.
		judge_rps "$l" "$f"
		judged=$JUDGED
		rps=$(sed -n 's/^Requests\/sec: *//p' "$dir/$l-1.wrk.txt" 2>/dev/null)
		[[ -n $judged && -n $rps ]] && awk -v j="$judged" -v r="$rps" 'BEGIN { exit !(j > 0 && (j - r) ^ 2 < 1) }'
		ok $? "$l: judge reads the raw file; its req/s is wrk's"
		diag "$l: judge ${judged:-nothing}, wrk ${rps:-nothing} req/s"
		awk -v c="$(meta "$f" server_cpu_us_per_echo)" 'BEGIN { exit !(c > 1) }'
		ok $? "$l: the machine's CPU per request recorded"
		[[ $(meta "$f" nginx_upstream_errors) =~ ^[0-9]+$ ]] &&
			grep -q '^== lb: error.log' "$dir/$l-1.log" 2>/dev/null &&
			grep -q '^== web1: error.log' "$dir/$l-1.log" && grep -q '^== web2: error.log' "$dir/$l-1.log"
		ok $? "$l: the three nginx's error logs kept, the balancer's errors counted" ||
			diag "$l: nginx_upstream_errors=$(meta "$f" nginx_upstream_errors); $(grep -c '^== ' "$dir/$l-1.log" 2>/dev/null) logs"
	done
	f=$dir/nginx-bypass-1.tsv.gz
	red=$(meta "$f" bypass_wrk_msgs_redirected)
	passed=$(meta "$f" bypass_wrk_msgs_passed)
	reqs=$(meta "$f" wrk_requests)
	[[ $red =~ ^[0-9]+$ && $passed =~ ^[0-9]+$ && $reqs =~ ^[0-9]+$ ]] &&
		((red >= 3 * reqs && passed * 100 <= red))
	ok $? "bypass run: both legs redirected (>= 3 messages a request, < 1% through TCP)"
	diag "bypass run: ${red:-?} messages redirected, ${passed:-?} through TCP, ${reqs:-?} requests"
	f=$dir/nginx-1.tsv.gz
	red=$(meta "$f" bypass_total_msgs_redirected)
	added=$(meta "$f" bypass_total_socks_added)
	[[ $red == 0 && $added == 0 ]]
	ok $? "run without the bypass: its counters show no socket joined, nothing redirected"
	diag "without: ${added:-?} sockets joined, ${red:-?} messages redirected"
	grep -q '^| nginx-bypass | 1 |' "$dir/summary.md" 2>/dev/null && grep -q '^| nginx | 1 |' "$dir/summary.md"
	ok $? "summary.md: both labels in judge's table"
	grep -qE '^order=1 nginx(-bypass)? nginx' "$dir/meta.txt" 2>/dev/null && grep -qx 'status=done' "$dir/meta.txt"
	ok $? "meta.txt: the pair's order, done"
	nothing_of_it_left
}

# files_in GLOB: how many files match it.
files_in() { compgen -G "$1" | wc -l; }

# second_wrk_runs DIR: the first run of DIR's experiment is done and wrk
# of the second runs, in the client's namespace.
second_wrk_runs() {
	local p comm
	(($(files_in "$1/*.tsv.gz") == 1 && $(files_in "$1/*.wrk.txt") == 2)) || return 1
	for p in $(ip netns pids echolab-seed003-client 2>/dev/null); do
		comm=$(cat "/proc/$p/comm" 2>/dev/null)
		[[ $comm != wrk ]] || return 0
	done
	return 1
}

test_interrupted() {
	local dir=$TMP/int pid n
	set -m
	# 10 s runs: the SIGINT comes 1 s into the second, and the hogs may
	# take up to 5 s to spin; it must land while wrk runs. SIGINT as a
	# terminal's Ctrl-C sends it: a test run in the background (CI's,
	# nohup ... &) starts with SIGINT ignored, which no bash can trap.
	env --default-signal=INT "$SEED003" --repeat 2 --duration 10 --seed 5 --out "$dir" >"$TMP/int.log" 2>&1 &
	pid=$!
	set +m
	if ! wait_until 60 second_wrk_runs "$dir"; then
		ok 1 "wrk's second run started within 60 s"
		diag "$(tail -n 5 "$TMP/int.log")"
	fi
	sleep 1
	interrupt_beside_hogs "$pid" 20 0.05
	is "$INT_RC" 130 "exit 130" ||
		diag "$(tail -n 8 "$TMP/int.log"; grep '^status=' "$dir/meta.txt"; ls "$dir")"
	((INT_MS < 10000))
	ok $? "exits within 10 s of SIGINT, a CPU hog on every CPU"
	diag "interrupted: exited ${INT_MS} ms after SIGINT"
	n=$(files_in "$dir/*.tsv.gz")
	((n == 1))
	ok $? "the finished run's raw file kept"
	n=$(files_in "$dir/*.wrk.txt")
	((n == 2))
	ok $? "both runs' wrk reports kept, the cut one's too"
	grep -q '^status=stopped (exit 130) after 1 of 4 runs' "$dir/meta.txt" 2>/dev/null
	ok $? "meta.txt says it stopped, and after how many runs"
	nothing_of_it_left
}

test_leftover() {
	local out
	ip netns add echolab-seed003-client
	ok $? "setup: a namespace as a killed run leaves it"
	fails_with "an earlier run's namespace" 1 "--cleanup" bash "$SEED003" --repeat 1 --duration 1 --out "$TMP/left"
	[[ ! -e $TMP/left ]]
	ok $? "refused before it made anything"
	out=$(bash "$SEED003" --cleanup 2>&1)
	ok $? "--cleanup: exit 0" || diag "$out"
	nothing_of_it_left
}

run_tests
plan_at_end
