#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs inside the qemu guest (tests/vm-ftrace.t boots it): ftrace/ with
# function_graph, fentry and kecho. Results go to $OUT (the host's --out).
# TAP. Cases (TESTS=ftrace.sh:CASE,... picks some; vm-ftrace.t passes its
# own on so):
#   funclat     fentry/fexit time do_nanosleep
#   trace       trace.sh kecho, user and ebpf: function_graph times each
#               one's functions; tracefs as found after the three
#   wq-latency  wq-latency.sh kecho: work items queued and run in each
#               mode, data files left in $OUT for the host; tracefs as found
#   percall     percall.sh: kecho has no syscall of its own, ebpf never
#               sends; tracefs as found
#   copies      copies.sh: user and kecho copy each byte twice (in, out),
#               user --splice and ebpf never; tracefs as found
# On a guest kernel the host cannot build kecho.ko for (7.2), kecho's
# parts skip for the fact no-module-build; the other servers' run.
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/../lib.sh"
ALL_TESTS="funclat trace wq-latency percall copies"
select_cases "$@"

FT=$ECHOLAB_ROOT/ftrace
OUT=${OUT:-/tmp/ftrace-out}
mkdir -p "$OUT"
trap '"$RUN" stop >/dev/null 2>&1' EXIT

before=$(tracefs_state)
load=(-t 4 -r 5 -m 10)
# kecho, or nothing where there is no kecho.ko for this kernel (7.2).
kecho=kecho
fact no-module-build >/dev/null && kecho=
# kecho_skip NAME: skips NAME, kecho's part of a case, where kecho is not.
kecho_skip() {
	[[ -z $kecho ]] || return 1
	skip "$1" no-module-build
}

# funclat: fentry/fexit work on this kernel
test_funclat() {
	local out
	out=$(
		bounded 30 "$FT/funclat" -d 5 do_nanosleep 2>&1 &
		for _ in 1 2 3 4 5 6; do sleep 0.5; done
		wait
	)
	like "$out" "do_nanosleep"$'\t'"[1-9]" "funclat/guest: do_nanosleep timed"
}

test_trace() {
	local out digest
	test_trace_kecho

	bounded 240 "$FT/trace.sh" user --out "$OUT" -- "${load[@]}" >/dev/null 2>&1
	like "$(cat "$OUT/ftrace-user-digest.txt" 2>/dev/null)" $'\n'"tcp_sendmsg +[1-9]" \
		"trace/user: tcp_sendmsg timed"

	bounded 240 "$FT/trace.sh" ebpf --out "$OUT" -- "${load[@]}" >/dev/null 2>&1
	digest=$(cat "$OUT/ftrace-ebpf-digest.txt" 2>/dev/null)
	like "$digest" $'\n'"(sk_psock_backlog|sk_psock_verdict_recv) +[1-9]" "trace/ebpf: psock paths timed"
	like "$digest" "bpf_prog:echo_verdict +[1-9]" "trace/ebpf: echo_verdict run time"
	is "$(tracefs_state)" "$before" "trace: tracefs as found after three servers"
}

test_trace_kecho() {
	local out digest
	kecho_skip trace/kecho && return
	out=$(bounded 240 "$FT/trace.sh" kecho --out "$OUT" -- "${load[@]}" 2>&1)
	digest=$(cat "$OUT/ftrace-kecho-digest.txt" 2>/dev/null)
	like "$digest" "method=function_graph" "trace/kecho: function_graph"
	like "$digest" $'\n'"kecho_work +[1-9]" "trace/kecho: kecho_work timed"
	like "$digest" $'\n'"kernel_recvmsg +[1-9].*"$'\n'".*|"$'\n'"kernel_sendmsg +[1-9]" \
		"trace/kecho: kernel_recvmsg and kernel_sendmsg timed"
	[[ -n ${VERBOSE:-} ]] && diag "$out"
}

# CMWQ vs kthreads
test_wq_latency() {
	local sum
	kecho_skip wq-latency && return
	bounded 400 "$FT/wq-latency.sh" kecho --out "$OUT" -- -t 4 -r 5 -m 5 >/dev/null 2>&1
	sum=$(cat "$OUT/wq-kecho-summary.tsv" 2>/dev/null)
	like "$sum" $'\n'"unbound	queue	[1-9]" "wq-latency/unbound: kecho_work items queued and started"
	like "$sum" $'\n'"bound	exec	[1-9]" "wq-latency/bound: kecho_work run times"
	like "$sum" $'\n'"kthread	kthread	[1-9]" "wq-latency/kthread: kthreads created and run"
	[[ -s $OUT/wq-kecho-unbound-queue.dat ]]
	ok $? "wq-latency: data files in \$OUT for the host to plot"
	is "$(tracefs_state)" "$before" "wq-latency: tracefs as found"
}

# Per message: kecho has no process, ebpf's never sends
test_percall() {
	local tsv
	# shellcheck disable=SC2086 # kecho: one word or none
	bounded 400 "$FT/percall.sh" --out "$OUT" user ebpf $kecho -- -t 4 -r 2 -m 50 >/dev/null 2>&1
	tsv=$(cat "$OUT/percall.tsv" 2>/dev/null)
	kecho_skip percall/kecho ||
		like "$tsv" $'\n'"kecho	[1-9][0-9]*	0.000	0.000	" "percall/kecho: no syscall of its own"
	like "$tsv" $'\n'"ebpf	[1-9][0-9]*	[0-9.]+	0.000	" "percall/ebpf: no send per message"
	is "$(tracefs_state)" "$before" "percall: tracefs as found"
}

# copies: the count is exact, so each server's figure is exact too: a
# receive and a send of every byte, or none
test_copies() {
	local tsv label want got
	# shellcheck disable=SC2086 # kecho: one word or none
	bounded 300 "$FT/copies.sh" --out "$OUT" user user-splice ebpf $kecho -- -t 2 -r 1 -m 100 -s 16384 \
		>/dev/null 2>"$OUT/copies.err"
	ok $? "copies: exits 0" || diag "$(tail -n 5 "$OUT/copies.err")"
	tsv=$(cat "$OUT/copies.tsv" 2>/dev/null)
	for label in user:2 user-splice:0 ebpf:0 kecho:2; do
		want=${label#*:}
		label=${label%:*}
		[[ $label != kecho ]] || ! kecho_skip copies/kecho || continue
		got=$(awk -v l="$label" '$1 == l { print $8 }' <<<"$tsv")
		is "$got" "$want.000" "copies/$label: $want copies per echo"
		[[ -n $got ]] || diag "$tsv"
	done
	is "$(tracefs_state)" "$before" "copies: tracefs as found"
}

run_tests
plan_at_end
