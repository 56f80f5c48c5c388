#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A lossy, slow network between client and server: run.sh compare --vm
# --netem, in the qemu guest (the host kernel has no sch_netem): the client
# in a namespace of its own, the server in the root one, tc netem on both
# ends of the veth between them. Every declared variant and each of the
# proxy's paths echoes every byte of 1 MiB, and every variant 50 clients x
# 4 rounds of 64 B, with 0 failures, on a network
# that loses, delays, jitters, reorders and duplicates at once: one netem
# spec with all five, so each variant is started half as often as with
# loss and delay apart. (100 x 10 until 2026-11-26, then 50 x 4 under each
# of two specs, 523-573 s; CI's budget went to the proxy's contract.)
#
# The delay is short, 2 ms (1 ms jitter), and the sizes one round per
# client: what is tested is that loss, reordering and duplicates reach
# every server, and netem reorders whenever a packet goes out within the
# delay of the one before. The round trip only sets how long the bytes
# take: TCP's rate under loss is about MSS / RTT x 1.22 / sqrt(p), so
# with 10 ms (20 ms a round trip) a 1 MiB echo took seconds, and the
# sizes case 254 s of the file's 346 (2026-11-26); at 2 ms the file took
# 265 s, and 267 with one round as well (CI's rehearsal): the rest is
# not the bytes' time. The size is 1 MiB: a 1 MiB echo's first 64 KiB are
# a 64 KiB echo's bytes, under the same loss (64 KiB as well until
# 2026-11-28), and a small echo is 50x4's, 200 of 64 B a variant (1 B as
# well until 2026-12-07: two echoes a variant, each a server start, 83 s
# of CI's budget). The proxy's paths relay 1 MiB: its small echoes under
# loss are the kernel's retransmissions, not its relay's partial reads
# and writes (and with them in 50x4, 149 s where it is 86).
#
# The bound the loss justifies: bench's timeout (-T) must outlast the
# retransmissions a loss rate makes likely. A handshake attempt fails when
# its SYN or SYN-ACK is lost (about 10% at 5% loss each way); its timer
# doubles from 1 s, so five failures in a row take 1+2+4+8+16 = 31 s, and
# a sixth (p = 1e-6 a connection, 2e-4 for a run's 200) would need 63 s.
# -T 70000 allows six. (It was 40000, five: one CI run's uring connection
# took 41.7 s to come up, 2026-11-26, and failed the 100 x 10.) The delay
# adds 4-6 ms a round trip, nothing beside those seconds.
#
# No exception, the sockmap paths included. The kernel's verdict-only
# path hands an skb that overlaps bytes already taken on whole, and an sk_skb
# verdict used to echo (ebpf) or relay (the proxy's sockmap path) those
# bytes twice: under this spec 5-12% of 1 MiB echoes, 6.1 and 6.12 alike.
# common/exact.bpf.h cuts the old bytes off; the exact case holds both
# paths to 0 over 128 echoes of 1 MiB, and checks that the network did
# overlap (the verdicts' exact_cut_skbs above 0), so that the 0 means
# something (ebpf-echo/README.md, "A network that reorders").
#
# Cases:
#   native   natively (no sch_netem on this kernel): refused, --vm named
#   sizes    1 MiB echoed by every variant, and through each of the
#            proxy's paths (user behind it), but exact's two
#   50x4     50 clients x 4 rounds, none failed
#   exact    ebpf and the proxy's sockmap path: 16 clients x 8 rounds of
#            1 MiB, none failed, and old bytes were cut off on the way
#   same-path-sizes, same-path-50x4   the two for user-w2 and kecho-bound
#            (below: make vm-check runs them, check-all does not)
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="native sizes 50x4 exact same-path-sizes same-path-50x4"
select_cases "$@"
root_or_bail_out

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; ip netns del echolab-cli 2>/dev/null; ip link del echolab-srv0 2>/dev/null' EXIT
export ECHOLAB_TW_MAX=1000000	# function, not timing
NETEM_OUT=	# the last netem_run's compare output
NETEM="loss 5% delay 2ms 1ms reorder 25% 50% duplicate 1%"
# Two variants whose bytes take another's path have cases of their own,
# same-path-sizes and same-path-50x4, which make vm-check runs and
# check-all does not: user-w2 is user's loop with a second listener
# (SO_REUSEPORT), kecho-bound kecho-unbound's work items on a per-CPU
# workqueue. What netem does reaches a server through its reads and
# writes, and theirs are the code of user and kecho-unbound, which sizes
# and 50x4 run (moved 2026-11-28, CI's budget).
same_path_labels="user-w2 kecho-bound"
variant_labels=$(variants | cut -d' ' -f1 | grep -vxF -e "${same_path_labels// /$'\n'}" | tr '\n' ' ')
same_path_labels=$(variants | cut -d' ' -f1 | grep -xF -e "${same_path_labels// /$'\n'}" | tr '\n' ' ')
# The proxy's paths, user behind each: its own, not the deployed relays
# (HAProxy and nginx are not in the guest), nor skmsg, whose bypass joins
# sockets of one stack and so goes around the veth that netem shapes.
# shellcheck disable=SC2119 # no --deployed: the suite's own paths
proxy_labels=$(proxy_variants | while read -r label _; do
	[[ $label != user-proxy-* || $(variant_get "$label" one_stack) == 1 ]] || echo "$label"
done | tr '\n' ' ')

# netem_compare DIR SPEC BENCH-ARGS...: compare --vm --netem SPEC into DIR
# (a fresh one: guest_run may run it twice).
# shellcheck disable=SC2317 # called through guest_run
netem_compare() {
	local dir=$1 spec=$2
	shift 2
	rm -rf "$dir"
	VM_TIMEOUT=1800 "$RUN" compare --vm --netem "$spec" --repeat 1 -T 70000 --out "$dir" "$@"
}

# netem_run SPEC ROWS-EACH NAMES BENCH-ARGS...: compare --vm --netem SPEC
# of the variants NAMES (space-separated); each one's rows (sizes, if
# swept) with ROWS-EACH samples, 0 failed.
netem_run() {
	local spec=$1 each=$2 names=$3 out dir want rows bad servers
	shift 3
	dir=$(mktemp -u -p "$TMP")
	servers=$(tr ' ' '\n' <<<"$names" | grep . | paste -sd, -)
	out=$(guest_run netem_compare "$dir" "$spec" --servers "$servers" "$@")
	NETEM_OUT=$out
	ok $? "compare --vm --netem '$spec' $* exits 0"
	grep -qx "netem=$spec (tc netem, on both ends of the veth)" "$dir/meta.txt" 2>/dev/null &&
		grep -q "^# netem=$spec\$" "$dir"/*.tsv
	ok $? "meta.txt and every raw file record the netem"
	want=$(summary_rows "$dir/summary.md" | awk '{ print $1 }' | sort -u | tr '\n' ' ')
	is "$want" "$(tr ' ' '\n' <<<"$names" | grep . | sort | tr '\n' ' ')" "every variant named measured"
	rows=$(summary_rows "$dir/summary.md" 2>/dev/null)
	bad=$(awk -v n="$each" '$2 != n || $3 != 0' <<<"$rows")
	[[ -n $rows && -z $bad ]]
	ok $? "every variant, every row: $each samples, 0 failed"
	[[ -z $bad ]] || diag "rows: $bad"
	mismatches_told "$dir"
	# The failed samples themselves (bench's raw rows: the status says why).
	for f in "$dir"/*.tsv; do
		awk -v f="${f##*/}" '!/^#/ && $NF != "ok" { print "# failed in " f ": " $0 }' "$f"
	done 2>/dev/null | head -n 10
	[[ $out == *"netem ($spec) each way"* ]] || diag "$(tail -n 20 <<<"$out")"
}

# mismatches_told DIR: every raw file in DIR with a mismatch says what its
# first was (bench's first_mismatch: a repeat, a loss or foreign bytes).
mismatches_told() {
	local f said=0 told=0
	for f in "$1"/*.tsv; do
		awk '!/^#/ && $NF == "mismatch" { m = 1 } END { exit !m }' "$f" 2>/dev/null || continue
		said=$((said + 1))
		grep -q '^# first_mismatch=thread [0-9]*: ' "$f" && told=$((told + 1))
	done
	((told == said))
	ok $? "every raw file with a mismatch tells its first ($told of $said)"
	grep -h '^# first_mismatch=' "$1"/*.tsv 2>/dev/null | head -n 3
}

# cut_off WHAT PATTERN: the last netem_run's compare output has WHAT's
# verdict counters at its stops (lines matching PATTERN), and their
# exact_cut_skbs sum above 0: the network overlapped segments, and the
# old bytes were cut off.
cut_off() {
	local lines n cut
	lines=$(grep -E "$2.*exact_cut_skbs=" <<<"$NETEM_OUT")
	n=$(grep -c . <<<"$lines")
	cut=$(grep -o 'exact_cut_skbs=[0-9]*' <<<"$lines" | awk -F= '{ s += $2 } END { print s + 0 }')
	((n > 0 && cut > 0))
	ok $? "$1: its verdict cut old bytes off ($cut skbs, over $n runs' counters)"
}

# Natively: refused, and said where it works.
test_native() {
	local out rc
	out=$("$RUN" compare --netem "loss 1%" -t 1 -r 1 --repeat 1 --out "$TMP/native" 2>&1)
	rc=$?
	if fact no-modules >/dev/null; then
		is "$rc" 1 "compare fails (no sch_netem here)"
		like "$out" "no sch_netem; run it in the qemu guest" "says to use --vm"
	else
		skip "native: compare fails (no sch_netem here)" modules
		skip "native: says to use --vm" modules
	fi
}

# sizes leaves exact's two out: it echoes their 1 MiB 128 times.
test_sizes() {
	local names
	names=$(tr ' ' '\n' <<<"$variant_labels $proxy_labels" | grep -vxF -e ebpf -e user-proxy-sockmap | tr '\n' ' ')
	netem_run "$NETEM" 2 "$names" --sweep size=1048576 -t 2 -r 1
}
test_50x4() { netem_run "$NETEM" 200 "$variant_labels" -t 50 -r 4; }
test_exact() {
	netem_run "$NETEM" 128 "ebpf user-proxy-sockmap" --sweep size=1048576 -t 16 -r 8
	cut_off ebpf ' ebpf: kernel: '
	cut_off "the proxy's sockmap path" ' proxy: stopped; sockmap: '
}
test_same_path_sizes() { netem_run "$NETEM" 2 "$same_path_labels" --sweep size=1048576 -t 2 -r 1; }
test_same_path_50x4() { netem_run "$NETEM" 200 "$same_path_labels" -t 50 -r 4; }

run_tests
plan_at_end
