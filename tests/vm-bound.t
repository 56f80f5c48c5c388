#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The server-bound placement: run.sh compare --server-bound, the server in
# the qemu guest on the server's CPUs, bench natively on the others,
# joined by a tap and virtio-net (cmd/compare-bound.sh). Every server and
# every kecho mode echoes there, byte for byte (bench checks every byte),
# 1 B and 1 MiB, and the placement is recorded; nothing is left behind:
# bench's namespace, the tap, qemu, the guest's requests.
#
# Cases:
#   usage     what does not go with it is refused, exit 2, saying why
#   contract  every variant, 1 B and 1 MiB, 4 clients x 2 rounds, none
#             failed; meta.txt and every raw file say server-bound, the
#             guest's kernel and the host CPUs the server's time is from;
#             nothing left
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="usage contract"
select_cases "$@"
root_or_bail_out

# shellcheck source=tests/lib-servers.sh
source "$ROOT/tests/lib-servers.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export ECHOLAB_TW_MAX=1000000	# function, not timing
(($(nproc) >= 2)) || skip_all "the placement needs two CPUs (the guest's, bench's); this machine has $(nproc)"
need_guest

# The variants the guest runs: every server's, kecho's three modes among
# them; user-w2's bytes take user's path (vm-netem.t), and are left out.
bound_labels=$(variants | cut -d' ' -f1 | grep -vx user-w2 | tr '\n' ' ')

# leftovers_bound: what the placement could leave on the host.
leftovers_bound() {
	ip netns list | grep -o '^echolab-svm' || true
	ip -o link show 2>/dev/null | grep -o 'echolab-tap[0-9]*' || true
	pgrep -f 'qemu-system.*echolab-tap' || true
	[[ ! -d $1/.bench ]] || echo "$1/.bench"
}

test_usage() {
	local out rc
	out=$("$RUN" compare --server-bound --vm -t 1 -r 1 --out "$TMP/u1" 2>&1)
	rc=$?
	is "$rc" 2 "--server-bound --vm: exit 2"
	like "$out" "already runs the server in the guest" "--server-bound --vm: says why"
	out=$("$RUN" compare --server-bound --cpus none -t 1 -r 1 --out "$TMP/u2" 2>&1)
	rc=$?
	is "$rc" 2 "--server-bound --cpus none: exit 2"
	like "$out" "needs --cpus auto or a list" "--server-bound --cpus none: says why"
	out=$("$RUN" compare --server-bound --bypass -t 1 -r 1 --out "$TMP/u3" 2>&1)
	rc=$?
	is "$rc" 2 "--server-bound --bypass: exit 2"
	like "$out" "one stack" "--server-bound --bypass: says why"
}

# shellcheck disable=SC2317 # called through guest_run
bound_compare() {
	local dir=$1
	shift
	rm -rf "$dir"
	VM_TIMEOUT=1800 "$RUN" compare --server-bound --repeat 1 --out "$dir" "$@"
}

test_contract() {
	local dir=$TMP/contract out servers want rows bad before f n sc cc
	before=$(leftovers_or_why)
	servers=$(tr ' ' '\n' <<<"$bound_labels" | grep . | paste -sd, -)
	out=$(guest_run bound_compare "$dir" --servers "$servers" --sweep size=1,1048576 -t 4 -r 2)
	ok $? "compare --server-bound --servers $servers exits 0" || diag "$(tail -n 30 <<<"$out")"
	grep -q '^placement=server-bound: the server in the qemu guest' "$dir/meta.txt" 2>/dev/null
	ok $? "meta.txt records the placement"
	n=0
	for f in "$dir"/*.tsv; do
		[[ -e $f ]] || continue
		sc=$(sed -n 's/^# server_cpus=//p' "$f")
		cc=$(sed -n 's/^# client_cpus=//p' "$f")
		if grep -q '^# placement=server-bound$' "$f" && grep -q '^# server_kernel=' "$f" &&
			[[ -n $sc && -n $cc && $sc != "$cc" ]]; then
			n=$((n + 1))
		else
			diag "$f does not record the placement"
			n=-1
			break
		fi
	done
	((n > 0))
	ok $? "every raw file records the placement, the guest's kernel and the CPUs ($n files)"
	want=$(summary_rows "$dir/summary.md" | awk '{ print $1 }' | sort -u | tr '\n' ' ')
	is "$want" "$(tr ' ' '\n' <<<"$bound_labels" | grep . | sort | tr '\n' ' ')" "every variant measured"
	rows=$(summary_rows "$dir/summary.md" 2>/dev/null)
	bad=$(awk '$2 != 8 || $3 != 0' <<<"$rows")
	[[ -n $rows && -z $bad ]]
	ok $? "every variant, 1 B and 1 MiB: 8 echoes, 0 failed"
	[[ -z $bad ]] || diag "rows: $bad"
	is "$(leftovers_bound "$dir")" "" "no namespace, tap, qemu or request left"
	nothing_left_since "server-bound" "$before"
}

run_tests
plan_at_end
