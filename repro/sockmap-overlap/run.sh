#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# repro/sockmap-overlap/run.sh - a verdict-only sockmap echo repeats bytes
# when TCP reorders (issue 48). Two network namespaces joined by a veth,
# netem on both ends; overlap-echo (overlap.bpf.c: sk_skb verdict, redirect
# to the same socket's egress) in one, checked-client in the other, which
# checks every byte of every echo and tells each first mismatch.
#
# Usage: run.sh [-n NETEM] [-s BYTES] [-t THREADS] [-r ROUNDS] [-T SECONDS]
#   -n NETEM    the netem spec on both ends of the veth
#               (default: 'loss 5% delay 2ms 1ms reorder 25% 50% duplicate 1%';
#               '' for none: a check that the echo works where netem is absent)
#   -s BYTES    message size (default 1048576)
#   -t THREADS  client threads, a connection each at a time (default 16)
#   -r ROUNDS   echoes per thread (default 8)
#   -T SECONDS  the whole client run's limit (default 600); an echo's is 120
#   -h, --help  this text
# Needs root, sch_netem and a BPF-capable kernel: in this repository, run it
# in the guest: vm/run-vm.sh --kernel 6.1 -- repro/sockmap-overlap/run.sh
# (build first, on the host: make -C repro/sockmap-overlap).
# Prints a line per echo that failed, the verdict's counts (and, where
# overlap-trace can attach its kprobe, how many skbs it handed on carried
# old bytes: trace.bpf.c, each with its client port and old length; then
# for each mismatch whether the first old skb of its connection has the
# repeat's length, "check repeats= matched= old_conns= ..."), then:
# echoes= ok= mismatches= repeats= failed=.
# Exit status: 0 when every echo matched, 1 when any did not, 2 usage or setup.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
netem='loss 5% delay 2ms 1ms reorder 25% 50% duplicate 1%'
size=1048576 threads=16 rounds=8 limit=600
readonly ns_echo=ovl-echo ns_cli=ovl-cli port=7007

usage() {
	sed -n '/^# Usage:/,/^# Exit status/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

[[ ${1:-} != --help ]] || usage 0
while getopts n:s:t:r:T:h opt; do
	case $opt in
	n) netem=$OPTARG ;;
	s) size=$OPTARG ;;
	t) threads=$OPTARG ;;
	r) rounds=$OPTARG ;;
	T) limit=$OPTARG ;;
	h) usage 0 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
(($# == 0)) || usage 2
for v in "$size" "$threads" "$rounds" "$limit"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || usage 2
done
for b in overlap-echo checked-client; do
	[[ -x $here/$b ]] || { echo "run.sh: $b not built: make -C repro/sockmap-overlap" >&2; exit 2; }
done
[[ $(id -u) == 0 ]] || { echo "run.sh: needs root" >&2; exit 2; }

echo_pid=
cleanup() {
	[[ -z $echo_pid ]] || kill "$echo_pid" 2>/dev/null || true
	[[ -z $echo_pid ]] || wait "$echo_pid" 2>/dev/null || true
	[[ -z ${trace_pid:-} ]] || kill "$trace_pid" 2>/dev/null || true
	ip netns del "$ns_echo" 2>/dev/null || true
	ip netns del "$ns_cli" 2>/dev/null || true
}
trap cleanup EXIT

cleanup
ip netns add "$ns_echo"
ip netns add "$ns_cli"
ip link add ovl0 netns "$ns_echo" type veth peer name ovl1 netns "$ns_cli"
ip -n "$ns_echo" addr add 10.77.0.1/24 dev ovl0
ip -n "$ns_cli" addr add 10.77.0.2/24 dev ovl1
for ns in "$ns_echo" "$ns_cli"; do
	ip -n "$ns" link set lo up
done
ip -n "$ns_echo" link set ovl0 up
ip -n "$ns_cli" link set ovl1 up
if [[ -n $netem ]]; then
	# shellcheck disable=SC2086 # the spec is words for tc
	ip netns exec "$ns_echo" tc qdisc add dev ovl0 root netem $netem
	# shellcheck disable=SC2086
	ip netns exec "$ns_cli" tc qdisc add dev ovl1 root netem $netem
fi

echo "# kernel=$(uname -r) netem=$netem (both ends) size=$size threads=$threads rounds=$rounds"
ip netns exec "$ns_echo" "$here/overlap-echo" "$port" "$((limit + 30))" 2>"${TMPDIR:-/tmp}/overlap-echo.log" &
echo_pid=$!
for _ in $(seq 50); do
	grep -q listening "${TMPDIR:-/tmp}/overlap-echo.log" 2>/dev/null && break
	kill -0 "$echo_pid" 2>/dev/null || { cat "${TMPDIR:-/tmp}/overlap-echo.log" >&2; exit 2; }
	sleep 0.2
done

# The kprobe where the kernel has kprobes (the guest): what the verdict got.
trace_pid=
tlog=${TMPDIR:-/tmp}/overlap-trace.out
if [[ -x $here/overlap-trace ]]; then
	"$here/overlap-trace" "$((limit + 30))" >"$tlog" 2>&1 &
	trace_pid=$!
	sleep 2
fi

# The path, not the name: busybox's timeout (the guest's) runs its own
# applet for a bare "ip", and that ip has no netns.
lines=$(timeout "$limit" "$(command -v ip)" netns exec "$ns_cli" "$here/checked-client" 10.77.0.1 "$port" \
	"$size" "$threads" "$rounds" 120 || true)
printf '%s\n' "$lines" | grep -v ' ok$' || true
kill "$echo_pid" 2>/dev/null || true
wait "$echo_pid" 2>/dev/null || true
echo_pid=
grep ' end ' "${TMPDIR:-/tmp}/overlap-echo.log" || true
if [[ -n $trace_pid ]]; then
	kill "$trace_pid" 2>/dev/null || true
	wait "$trace_pid" 2>/dev/null || true
	cat "$tlog"
	# Each repeat the client saw against the first old skb the verdict got
	# on that connection (its port): the same length, or not.
	{ grep '^trace old port=' "$tlog" || true; printf '%s\n' "$lines"; } | awk '
		/^trace old port=/ {
			split($3, p, "="); split($4, l, "=")
			if (!(p[2] in first)) { first[p[2]] = l[2]; conns++ }
			next
		}
		/ mismatch / {
			port = ""; len = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^port=/) port = substr($i, 6)
				if ($i ~ /^repeat_len=/) len = substr($i, 12)
			}
			mism[port] = 1; n++
			if (!(port in first)) { v = "no_old_skb" }
			else if (len != "" && first[port] == len) { v = "same_length"; m++ }
			else { v = "old_skb_len=" first[port] }
			printf "pair port=%s repeat_len=%s trace=%s\n", port, (len == "" ? "none" : len), v
		}
		END {
			for (q in first) if (!(q in mism)) quiet++
			printf "check repeats=%d matched=%d old_conns=%d old_conns_without_mismatch=%d\n", n, m, conns, quiet
		}'
fi

count() { grep -c -- "$1" <<<"$lines" || true; }
echoes=$(count '^echo ')
ok=$(count ' ok$')
mism=$(count ' mismatch ')
rep=$(count ' repeat_len=')
failed=$(count ' failed ')
echo "echoes=$echoes ok=$ok mismatches=$mism repeats=$rep failed=$failed"
[[ $ok == "$((threads * rounds))" ]]
