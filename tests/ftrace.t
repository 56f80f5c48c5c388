#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# ftrace/ on this kernel: trace.sh, percall.sh, copies.sh, wq-latency.sh and funclat
# name what they were meant to see, and leave tracefs as they found it.
# Cases:
#   funclat      bad usage; one function timed, or refused with the
#                kernel's own errno where it refuses fentry
#   trace        trace.sh ebpf and user: the verdict's and tcp_sendmsg's
#                times (or user's refusal); tracefs as found
#   percall      percall.sh: syscalls, receives and sends per message;
#                counts perf did not take whole, and a server killed
#                mid-run, give no figure
#   copies       copies.sh: bad usage; user copies each byte twice, or the
#                script refuses with a pointer to --vm where the kernel
#                refuses fentry (the guest's case counts every server)
#   profile      profile.sh: the CPU split by process and kind, flame
#                graphs; too few samples refused; usage; --running
#   wq-latency   wq-latency.sh ebpf: sk_psock_backlog's queue times, a plot
#   interrupted  trace.sh killed mid-run leaves tracefs as found, no server
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="funclat trace percall copies profile wq-latency interrupted"
select_cases "$@"
root_or_bail_out

FT=$ECHOLAB_ROOT/ftrace
OUT=$(mktemp -d)
trap '"$RUN" stop >/dev/null 2>&1; rm -rf "$OUT"' EXIT

before=$(tracefs_state)

test_funclat() {
	local out refused errno_msg rc
	# funclat: bad usage, then one function. Its refusal is accepted only
	# where the kernel refuses fentry programs (the fact no-fentry:
	# tests/build/fentry-probe loads and attaches the smallest one with bpf()
	# alone), and only with the kernel's own errno: funclat's message is the
	# same for any load failure, so a bug of its own must not pass as the
	# kernel's refusal.
	bounded 10 "$FT/funclat" >/dev/null 2>&1
	is $? 2 "funclat/usage: no function exits 2"
	out=$(bounded 20 "$FT/funclat" -d 1 do_nanosleep no_such_function_xyz 2>&1)
	if fact no-btf >/dev/null; then
		skip "funclat/missing: an unknown function is named" no-btf
	else
		like "$out" "no_such_function_xyz: no such function" "funclat/missing: an unknown function is named"
	fi
	if refused=$(fact no-fentry); then
		errno_msg=$(_fentry_probe | sed -n 's/^fentry: .* refused: \(.*\) (errno [0-9]*).*/\1/p')
		[[ -n $errno_msg && $out == *"funclat: cannot "@(load the BPF programs|attach)": $errno_msg"* ]]
		rc=$?
		ok "$rc" "funclat/table: refused with the kernel's errno (fact no-fentry)"
		diag "funclat/table: the kernel's errno: ${errno_msg:-none}; $refused"
		((rc == 0)) || diag "$out"
	else
		like "$out" "(^|"$'\n'")do_nanosleep"$'\t'"[0-9]+" "funclat/table: a row for do_nanosleep"
	fi
}

test_trace() {
	local out
	# trace.sh ebpf: the verdict program's run time per request, at least
	out=$(bounded 60 "$FT/trace.sh" ebpf --out "$OUT" -- -t 4 -r 5 -m 20 2>&1)
	ok $? "trace/ebpf: exits 0"
	like "$(cat "$OUT/ftrace-ebpf-digest.txt" 2>/dev/null)" "method=[a-z_+]+.*bpf_prog:echo_verdict +[1-9]" \
		"trace/ebpf: the digest names its method and echo_verdict"
	is "$(tracefs_state)" "$before" "trace/ebpf: tracefs and bpf_stats_enabled as found"

	# trace.sh user: function timing; its refusal (and --vm) only where the
	# kernel has neither the function_graph tracer nor fentry, both detected
	# here.
	out=$(bounded 60 "$FT/trace.sh" user --out "$OUT" -- -t 4 -r 5 -m 20 2>&1)
	if fact no-function-graph >/dev/null && fact no-fentry >/dev/null; then
		like "$out" "allows no function timing.*--vm" \
			"trace/user: refused, --vm suggested (facts no-function-graph and no-fentry)"
	else
		like "$out" "(tcp_sendmsg|sock_sendmsg) +[0-9]+" "trace/user: tcp_sendmsg timed"
	fi
	is "$(tracefs_state)" "$before" "trace/user: tracefs as found"
}

test_copies() {
	local out rc base
	base=$(leftovers_or_why)
	out=$(bounded 10 "$FT/copies.sh" no-such-server 2>&1)
	is $? 2 "copies/usage: an unknown server exits 2"
	like "$out" "unknown argument 'no-such-server'" "copies/usage: says which argument"
	out=$(bounded 120 "$FT/copies.sh" --out "$OUT" user -- -t 2 -r 1 -m 100 -s 4096 2>&1)
	rc=$?
	if fact no-fentry >/dev/null; then
		is "$rc" 1 "copies: refused where fentry is (fact no-fentry)"
		like "$out" "refused: .*run it in the guest with --vm" "copies: the refusal says to use --vm"
	else
		is "$rc" 0 "copies: exits 0"
		is "$(awk '$1 == "user" { print $8 }' "$OUT/copies.tsv" 2>/dev/null)" 2.000 \
			"copies/user: 2 copies per echo"
	fi
	nothing_left_since copies "$base"
}

test_percall() {
	local out user_sys user_snd user_rcv ebpf_snd lossy rc pc spid state
	# percall.sh: perf stat's counters, which cannot overflow. A closed loop
	# receives every message at least once; the ebpf server's process does
	# (almost) no per-message work.
	out=$(bounded 120 "$FT/percall.sh" --out "$OUT" user ebpf -- -t 10 -r 2 -m 100 2>&1)
	ok $? "percall: exits 0"
	user_sys=$(awk '$1 == "user" { print $3 }' "$OUT/percall.tsv" 2>/dev/null)
	user_snd=$(awk '$1 == "user" { print $4 }' "$OUT/percall.tsv" 2>/dev/null)
	user_rcv=$(awk '$1 == "user" { print $9 }' "$OUT/percall.tsv" 2>/dev/null)
	ebpf_snd=$(awk '$1 == "ebpf" { print $4 }' "$OUT/percall.tsv" 2>/dev/null)
	awk -v u="${user_sys:-0}" 'BEGIN { exit !(u >= 2 && u <= 5) }'
	ok $? "percall/user: 2 to 5 syscalls per message"
	# 1 receive per message, a few more where a message came in two parts
	awk -v u="${user_rcv:-0}" 'BEGIN { exit !(u >= 1 && u <= 1.5) }'
	ok $? "percall/user: 1 to 1.5 receives per message"
	diag "percall: user ${user_sys:-none} syscalls, ${user_rcv:-none} receives per message, sends: user ${user_snd:-none}, ebpf ${ebpf_snd:-none}"
	# The ebpf server's process is woken per message on 6.x (epoll_wait + an
	# empty recv) but never sends: the echo is the kernel's.
	awk -v u="${user_snd:-0}" -v e="${ebpf_snd:-99}" 'BEGIN { exit !(u >= 0.9 && e < 0.01) }'
	ok $? "percall/ebpf: no send syscall per message"
	like "$(head -n 3 "$OUT/percall-user-syscalls.txt" 2>/dev/null)" "(^|"$'\n'")45 recvfrom [1-9]" \
		"percall/user: recvfrom among its syscalls, by number"
	is "$(tracefs_state)" "$before" "percall: tracefs as found"

	# Counts perf did not take whole are refused: perf itself, its output
	# then edited as perf prints a multiplexed or an unscheduled counter.
	mkdir -p "$OUT/lossy"
	# (perl: a bash started in the background could not catch SIGINT)
	cat >"$OUT/perf-lossy" <<-'EOF'
	#!/usr/bin/perl
	# perf, whose output file then says what PERF_LOSSY_SED makes it say
	my ($o) = map { $ARGV[$_ + 1] } grep { $ARGV[$_] eq '-o' } 0 .. $#ARGV;
	my $pid = fork() // die "fork: $!";
	exec('perf', @ARGV) or die "perf: $!" if $pid == 0;
	$SIG{INT} = sub { kill 'INT', $pid };
	1 while waitpid($pid, 0) != $pid;
	my $rc = $?;
	system('sed', '-i', $ENV{PERF_LOSSY_SED}, $o) if defined $o;
	exit($rc & 127 ? 128 + ($rc & 127) : $rc >> 8);
	EOF
	chmod +x "$OUT/perf-lossy"
	for lossy in multiplexed:'s/\(,sched:sched_switch,[0-9]*\),100\.00,/\1,62.50,/' \
		'not counted':'0,/,raw_syscalls:sys_enter,/s/^[0-9]*,/<not counted>,/'; do
		rm -f "$OUT/lossy/percall.tsv"
		out=$(PERF=$OUT/perf-lossy PERF_LOSSY_SED=${lossy#*:} \
			bounded 120 "$FT/percall.sh" --out "$OUT/lossy" user -- -t 10 -r 2 -m 100 2>&1)
		rc=$?
		[[ $rc == 1 && $out == *"refused: "*"${lossy%%:*}"* && ! -e $OUT/lossy/percall.tsv ]]
		ok $? "percall/refused: a ${lossy%%:*} count gives no figure, exit 1"
		diag "percall/refused: status $rc: $(grep refused <<<"$out")"
	done

	# The server killed while it is counted: a real loss
	rm -f "$OUT/lossy/percall.tsv"
	"$FT/percall.sh" --out "$OUT/lossy" user -- -t 4 -d 4 >"$OUT/killed.txt" 2>&1 &
	pc=$!
	wait_until 10 grep -q 'user running: pid' "$OUT/killed.txt"
	sleep 1
	spid=$(sed -n 's/.*user running: pid \([0-9]*\),.*/\1/p' "$OUT/killed.txt")
	[[ -n $spid ]] && kill -KILL "$spid"
	wait_until 60 pid_gone "$pc"
	kill -0 "$pc" 2>/dev/null && { diag "percall.sh still running 60 s on: SIGTERM"; kill -TERM "$pc"; }
	wait "$pc"
	rc=$?
	out=$(cat "$OUT/killed.txt")
	[[ $rc == 1 && $out == *"refused: the user server (pid $spid) exited during the run"* &&
		! -e $OUT/lossy/percall.tsv ]]
	ok $? "percall/refused: a server that exited mid-run gives no figure, exit 1"
	diag "percall/refused: status $rc: $(grep refused <<<"$out")"
	state=$(tracefs_state)$'\n'$("$RUN" status 2>&1)
	is "$state" "$before"$'\n'"no server is running" "percall/refused: tracefs as found, no server"
}

# profile.sh: a sampling profile of the server's CPU in the default
# placement (user and ebpf, 2 s each, into $OUT/prof), then its refusals
# and --running.
test_profile() {
	local out tsv rc try taken
	tsv=$OUT/prof/profile.tsv
	# Other processes on the server's CPU (a busy box) take samples from
	# every share alike, and their kinds are other's: a run where they
	# took over 10% is left out and made again, twice at most, and the
	# process shares checked are of what they left (mine, below). So is
	# a run refused for too few samples: the host stole the CPU
	# (PLATFORM.md). (Here, beside other agents' lints, 91.8% and 97.8%
	# of CPU 0 were taken in first runs; a second run of the latter
	# still had user's kinds 44.5% other.)
	for try in 1 2 3; do
		rm -rf "$OUT/prof"
		out=$(bounded 180 "$FT/profile.sh" --seconds 2 --out "$OUT/prof" user ebpf 2>&1)
		rc=$?
		taken=$(awk -F'\t' '$2 == "process" && ($3 == "other" || $3 == "client") { o[$1] += $4 }
			END { for (s in o) if (o[s] > m) m = o[s]; printf "%.1f", m }' "$tsv" 2>/dev/null)
		if ((try < 3 && rc == 1)) && [[ $out == *"'s profile holds "* ]]; then
			diag "profile: left out, run again: $(grep refused <<<"$out")"
		elif ((try < 3 && rc == 0)) && awk -v t="${taken:-0}" 'BEGIN { exit !(t > 10) }'; then
			diag "profile: other processes took ${taken}% of a server's CPU: left out, run again"
		else
			break
		fi
	done
	ok "$rc" "profile: exits 0"
	profile_processes
	profile_kinds
	profile_refused
	profile_running
}

# profile_processes: tsv's process split (exclusive, sums to 100%) and
# paths: user's echo is syscalls, ebpf's the psock backlog in kworkers.
profile_processes() {
	local s sum
	for s in user ebpf; do
		sum=$(awk -F'\t' -v s="$s" '$1 == s && $2 == "process" { t += $4 } END { printf "%.1f", t }' "$tsv" 2>/dev/null)
		awk -v t="${sum:-0}" 'BEGIN { exit !(t >= 99 && t <= 101) }'
		ok $? "profile/$s: the process shares sum to 100%"
		diag "profile/$s: the process shares sum to ${sum:-none}%"
	done
	# mine SERVER ROW: ROW's share of the samples that other processes
	# left on the server's CPU (one run here beside a lint: shellcheck
	# 92% of CPU 0, ebpf's sk_psock_backlog 4.6% of all samples, 89% of
	# what was left)
	mine() {
		awk -F'\t' -v s="$1" -v w="$2" '$1 == s && $2 == "process" && ($3 == "other" || $3 == "client") { o += $4 }
			$1 == s && index($3, w) == 1 { v = $4 }
			END { if (v != "" && o < 95) printf "%.1f", 100 * v / (100 - o) }' "$tsv" 2>/dev/null
	}
	# ebpf's syscalls are its accept() loop's, one a connection: bench's
	# connections here make them a share of their own (17.9% against
	# user's 64.9% in a CI rehearsal, 2026-11-29, when the bound was a
	# quarter); its echo is the kworkers', checked below.
	awk -v u="$(mine user syscalls)" -v e="$(mine ebpf syscalls)" 'BEGIN { exit !(u > 20 && e < u / 2) }'
	ok $? "profile: user's CPU is in syscalls, ebpf's under half as much"
	diag "profile: syscalls (of what other processes left): user $(mine user syscalls)%, ebpf $(mine ebpf syscalls)%"
	# ebpf's echo is sent by sk_psock_backlog, a work item and nothing
	# else: every sample with it on the stack is a kworker's, so the
	# kworkers' share (exclusive, by thread) holds the backlog's
	# (inclusive), to rounding. Once (CI rehearsal, 2026-11-27) it read
	# kworkers 7.7% beside a backlog of 36.4%: a kworker born during the
	# sample, which perf names after kthreadd or not at all, counted as
	# other (ftrace/README.md, "Threads born during the sample").
	share() { awk -F'\t' -v s="$1" -v w="$2" '$1 == s && index($3, w) == 1 { print $4 }' "$tsv" 2>/dev/null; }
	awk -v k="$(mine ebpf kworkers)" -v b="$(mine ebpf psock-backlog)" -v u="$(mine user psock-backlog)" \
		-v ka="$(share ebpf kworkers)" -v ba="$(share ebpf psock-backlog)" \
		'BEGIN { exit !(k > 20 && b > 20 && ka != "" && ka + 0.2 >= ba && u == 0) }'
	ok $? "profile: ebpf's echo runs in kworkers, in sk_psock_backlog (within their share), user's never there" ||
		diag "profile: ebpf's process split: $(awk -F'\t' '$1 == "ebpf" && $2 == "process" { printf "%s %s%% ", $3, $4 }' "$tsv" 2>/dev/null)"
	diag "profile: of what other processes left: ebpf: kworkers $(mine ebpf kworkers)%, sk_psock_backlog $(mine ebpf psock-backlog)%; user: sk_psock_backlog $(mine user psock-backlog)%"
	[[ -s $OUT/prof/user-profile.txt && ! -e $OUT/prof/user.perf.data ]]
	ok $? "profile: perf's report kept, its data file not"
}

# profile_kinds: tsv's kinds and parts, the flame graphs.
profile_kinds() {
	local s sum
	# The kinds: exclusive, of the busy samples; each server's echo is in
	# kinds of its own, little is left to other.
	kind() { awk -F'\t' -v s="$1" -v w="$2" '$1 == s && $2 == "kind" && $3 == w { print $4 }' "$tsv" 2>/dev/null; }
	for s in user ebpf; do
		sum=$(awk -F'\t' -v s="$s" '$1 == s && $2 == "kind" { t += $4; n++ } END { if (n == 11) printf "%.1f", t }' "$tsv" 2>/dev/null)
		awk -v t="${sum:-0}" 'BEGIN { exit !(t >= 99.5 && t <= 100.5) }'
		ok $? "profile/$s: eleven kinds, their shares sum to 100%"
		diag "profile/$s: the kinds sum to ${sum:-none}%"
		awk -v o="$(kind "$s" other)" 'BEGIN { exit !(o != "" && o < 35) }'
		ok $? "profile/$s: under 35% of its busy samples left to other"
		diag "profile/$s: other $(kind "$s" other)%"
		# The parts regroup the kinds: four, summing to 100%, each the
		# sum of its own kinds' shares (to their rounding).
		awk -F'\t' -v s="$s" '$1 == s && $2 == "kind" { k[$3] = $4 } $1 == s && $2 == "part" { p[$3] = $4; n++; t += $4 }
			END {
				want["handoff"] = k["interrupts"]
				want["tcp"] = k["tcp-receive"] + k["tcp-send"] + k["copies"]
				want["own-path"] = k["syscall"] + k["epoll"] + k["io_uring"] + k["sockmap-kworkers"] + k["scheduler"] + k["server-code"]
				want["other"] = k["other"]
				if (n != 4 || t < 99.5 || t > 100.5) exit 1
				for (w in want) if (!(w in p) || p[w] - want[w] > 0.35 || want[w] - p[w] > 0.35) exit 1
			}' "$tsv" 2>/dev/null
		ok $? "profile/$s: four parts (handoff, tcp, own-path, other), each its kinds' sum, 100% in all"
		diag "profile/$s: parts $(awk -F'\t' -v s="$s" '$1 == s && $2 == "part" { printf "%s %s%% ", $3, $4 }' "$tsv" 2>/dev/null)"
		grep -q '<svg' "$OUT/prof/$s-flame.svg" 2>/dev/null && grep -q 'tcp_' "$OUT/prof/$s-flame.svg"
		ok $? "profile/$s: a flame graph, in SVG, with TCP's functions in it"
	done
	# user's echo enters by system calls and epoll, ebpf's by the psock
	# backlog's work items (the kinds are exclusive: TCP under either is
	# TCP's, so these are the entries themselves).
	awk -v u="$(kind user syscall)" -v ue="$(kind user epoll)" -v e="$(kind ebpf syscall)" -v ee="$(kind ebpf epoll)" \
		-v k="$(kind ebpf sockmap-kworkers)" -v uk="$(kind user sockmap-kworkers)" \
		'BEGIN { exit !(u + ue > e + ee && k > 2 && uk < 1) }'
	ok $? "profile/kinds: user's syscall+epoll above ebpf's; sockmap-kworkers ebpf's, not user's"
	diag "profile/kinds: syscall+epoll: user $(kind user syscall)+$(kind user epoll)%, ebpf $(kind ebpf syscall)+$(kind ebpf epoll)%; sockmap-kworkers: ebpf $(kind ebpf sockmap-kworkers)%, user $(kind user sockmap-kworkers)%"
	is "$("$RUN" status 2>&1)" "no server is running" "profile: no server left"
}

# profile_refused: too few samples, bad usage, no perf.
profile_refused() {
	local out rc
	# A profile short of samples is refused: a perf that records at a tenth
	# of the rate asked
	cat >"$OUT/perf-slow" <<-'EOF'
	#!/bin/sh
	[ "$1" = record ] || exec perf "$@"
	shift
	for a; do shift; [ "$a" = 997 ] && a=99; set -- "$@" "$a"; done
	exec perf record "$@"
	EOF
	chmod +x "$OUT/perf-slow"
	out=$(PERF=$OUT/perf-slow bounded 120 "$FT/profile.sh" --seconds 2 --out "$OUT/slow" user 2>&1)
	rc=$?
	[[ $rc == 1 && $out == *"refused: user's profile holds "* && ! -e $OUT/slow/profile.tsv &&
		! -e $OUT/slow/user.perf.data ]]
	ok $? "profile/refused: too few samples gives no figure (nor perf's data), exit 1"
	diag "profile/refused: status $rc: $(grep refused <<<"$out")"
	out=$(bounded 10 "$FT/profile.sh" --seconds x 2>&1)
	is $? 2 "profile/usage: --seconds x exits 2"
	out=$(bounded 10 "$FT/profile.sh" --bench "-c 300 -d 5" 2>&1)
	[[ $? == 2 && $out == *"the duration is profile.sh's"* ]]
	ok $? "profile/usage: --bench with its own -d exits 2 and says why"
	out=$(bounded 10 "$FT/profile.sh" --out "$OUT/none" kecho-bound 2>&1)
	[[ $? == 2 && $out == *"kecho-bound is a module"*"with --vm"* ]]
	ok $? "profile/usage: a module named here (not in the guest) exits 2 and points at --vm"
	out=$(PERF=/nonexistent/perf bounded 10 "$FT/profile.sh" --out "$OUT/none" user 2>&1)
	[[ $? == 1 && $out == *"not installed"* ]]
	ok $? "profile: no perf: says so, exit 1"
}

# profile_running: --running, with and without a server run.sh has running.
profile_running() {
	local out sum
	# --running: the server run.sh has running, or a clear refusal.
	out=$(bounded 30 "$FT/profile.sh" --running --seconds 2 --out "$OUT/none" 2>&1)
	[[ $? == 1 && $out == *"no server is running"* && ! -e $OUT/none/profile.tsv ]]
	ok $? "profile/running: with no server running, refused with the reason, exit 1"
	diag "profile/running: $(tail -n 1 <<<"$out")"
	out=$(bounded 10 "$FT/profile.sh" --running user 2>&1)
	is $? 2 "profile/running: --running with a server named is a usage error"
	"$RUN" user >/dev/null
	out=$(bounded 60 "$FT/profile.sh" --running --seconds 2 --bench "-c 20" --out "$OUT/running" 2>&1)
	ok $? "profile/running: the running user server profiled, exit 0"
	sum=$(awk -F'\t' '$1 == "user" && $2 == "kind" { t += $4 } END { printf "%.1f", t }' "$OUT/running/profile.tsv" 2>/dev/null)
	awk -v t="${sum:-0}" 'BEGIN { exit !(t >= 99.5 && t <= 100.5) }'
	ok $? "profile/running: its kinds sum to 100%"
	diag "profile/running: the kinds sum to ${sum:-none}%"
	"$RUN" status >/dev/null 2>&1
	ok $? "profile/running: the server still runs after it"
	"$RUN" stop >/dev/null
}

test_wq_latency() {
	local out
	# wq-latency.sh ebpf: sk_psock_backlog work items, a CDF plot
	out=$(bounded 60 "$FT/wq-latency.sh" ebpf --out "$OUT" -- -t 4 -r 5 -m 20 2>&1)
	like "$(cat "$OUT/wq-ebpf-summary.tsv" 2>/dev/null)" "sk_psock_backlog.*"$'\n'".*default	queue	[1-9]" \
		"wq-latency/ebpf: queue-to-start of sk_psock_backlog items"
	[[ $(head -c 4 "$OUT/wq-ebpf-cdf.png" 2>/dev/null | od -An -c | tr -d ' ') == 211PNG ]]
	ok $? "wq-latency/ebpf: wq-ebpf-cdf.png is a PNG"
}

test_interrupted() {
	local pid state
	# Killed in the middle of a run (SIGTERM: a background job ignores SIGINT)
	"$FT/trace.sh" ebpf --out "$OUT" -- -t 4 -d 5 >/dev/null 2>&1 &
	pid=$!
	sleep 3
	stop_bounded "$pid" 30	# trace.sh restores tracefs before it exits
	state=$(tracefs_state)$'\n'$("$RUN" status 2>&1)
	is "$state" "$before"$'\n'"no server is running" "tracefs as found, no server"
}

run_tests
plan_at_end
