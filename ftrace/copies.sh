#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# copies.sh - copies per echo, per server: the bytes TCP copied between a
# socket and memory, counted, over the bytes echoed.
#
#   sudo ./ftrace/copies.sh [--vm] [--out DIR] [SERVER|VARIANT...] [-- BENCH-ARGS...]
#
# For each SERVER (default: every one this kernel can run), or VARIANT of
# one (compare's labels: user-splice, kecho-bound...), it starts the server
# and, during one bench run (default -t 1 -r 1 -m 2000 -s 16384:
# 16 KiB ping-pong), counts with funclat -c (fexit) the bytes every process
# copied: each TCP receive into memory (skb_copy_datagram_iter: a user
# buffer, io_uring's, kecho's) and each send from memory (tcp_sendmsg_locked,
# less the sends that hand pages over: splice, MSG_ZEROCOPY). A splice or a
# sockmap redirect moves pages by reference and counts nothing; copies the
# kernel makes with memcpy (skb_copy_bits, a linear head copied into a page)
# are not counted either.
#
# bench is the yardstick: each of its echoes is one send and one receive of
# the same bytes, so its own counts must agree both ways within 1%, or the
# row is refused. Then the server's copies per echo are what every other
# process copied, over what bench received: 2.00 for a server that reads
# each message into memory and writes it back. Needs fentry (this host's
# kernel refuses it: --vm runs the count in the qemu guest). Writes
# copies.tsv (one row per server) and copies-SERVER.txt (who copied: the
# processes by name) into DIR (default: the newest results dir).
set -euo pipefail
# shellcheck source=lib/tracefs.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tracefs.sh"

usage() {
	sed -n '/^#   sudo/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"
}

# measure LABEL: one row of copies.tsv; who copied into copies-LABEL.txt
measure() {
	local label=$1 server pid bpid rc=0 ok
	local -a start_args
	server=$(variant_get "$label" server)
	read -ra start_args <<<"$(variant_get "$label" args)"
	(server_start "$server" "${start_args[@]}") >&2 || die "cannot start $label (see above)"
	SERVER_STARTED=1
	pid=$(state pid)
	funclat_start -c
	"$BENCH" -q -o /dev/null "${bench_args[@]}" >"$tmp/bench.out" &
	bpid=$!
	BENCH_PID=$bpid
	wait "$bpid" || rc=$?
	BENCH_PID=
	funclat_stop
	trace_stop
	summary=$(cat "$tmp/bench.out")
	((rc == 0)) || die "$label: bench exited $rc: $summary"
	ok=$(field "$summary" ok)
	[[ $ok =~ ^[1-9][0-9]*$ ]] || die "$label: bench echoed no message: $summary"
	# funclat -c: direction tgid comm calls bytes
	awk -F'\t' -v s="$label" -v ok="$ok" -v bench="$bpid" -v srv="${pid:-0}" \
		-v out="$out/copies-$label.txt" '
	NR == 1 { next }
	{
		dir = $1 == "recv" ? "to" : "from"
		who = $2 == bench ? "bench" : $2 == srv ? "server" : "other"
		b[who, dir] += $5
		if (who != "bench") {
			name = $3
			sub(/\/.*/, "", name)		# kworker/u4:0
			sub(/-[0-9]+$/, "", name)	# iou-wrk-42
			by[name, dir] += $5
			names[name] = 1
		}
	}
	END {
		bt = b["bench", "to"]; bf = b["bench", "from"]
		if (bt <= 0 || bf <= 0) {
			printf "refused: %s: bench copied nothing (to %d, from %d bytes): the copy routines were not counted\n", s, bt, bf > "/dev/stderr"
			exit 1
		}
		if (bt / bf < 0.99 || bt / bf > 1.01) {
			printf "refused: %s: bench received %d bytes and sent %d: an echo is one send and one receive of the same bytes, so a count was lost\n", s, bt, bf > "/dev/stderr"
			exit 1
		}
		printf "# %s: bytes copied per echoed byte, by process name (bench: %d bytes each way)\n", s, bt > out
		printf "name\tto\tfrom\n" > out
		for (n in names)
			printf "%s\t%.3f\t%.3f\n", n, by[n, "to"] / bt, by[n, "from"] / bf > out
		st = (b["server", "to"] + b["other", "to"]) / bt
		sf = (b["server", "from"] + b["other", "from"]) / bf
		printf "%s\t%d\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", s, ok, bt / ok,
			b["server", "to"] / bt, b["server", "from"] / bf,
			b["other", "to"] / bt, b["other", "from"] / bf, st + sf
	}' "$tmp/funclat"
}

main() {
	local servers=() s args=("$@") vm=0
	out=
	bench_args=()
	while (($#)); do
		case $1 in
		--vm) vm=1 ;;
		--out) out=${2:?--out needs a directory}; shift ;;
		-h | --help) usage; exit 0 ;;
		--) shift; bench_args=("$@"); break ;;
		*)
			[[ " ${VARIANTS[*]} " == *" $1 "* ]] || is_server "$1" || {
				echo "copies.sh: unknown argument '$1' (servers: ${SERVERS[*]}; variants: ${VARIANTS[*]})" >&2
				usage >&2
				exit 2
			}
			servers+=("$1")
			;;
		esac
		shift
	done
	((${#bench_args[@]})) || bench_args=(-t 1 -r 1 -m 2000 -s 16384)
	need_root "${0##*/}"
	[[ -n $out ]] || out=$(results_dir)
	mkdir -p "$out"
	if ((vm)); then
		rerun_in_guest "$out" "${args[@]}"
		exit
	fi
	[[ -x $FUNCLAT ]] || die "ftrace/funclat is not built: run 'make ftrace'"
	if ((${#servers[@]} == 0)); then
		for s in "${SERVERS[@]}"; do
			[[ -n $(server_unavailable "$s") ]] || servers+=("$s")
		done
	fi
	ftrace_traps
	make_tmp
	# fentry first, with no server up: a kernel that refuses it says so here
	if ! "$FUNCLAT" -c -d 1 >/dev/null 2>"$tmp/probe.err"; then
		die "refused: this kernel does not let funclat count TCP's copies ($(tail -n 1 "$tmp/probe.err"));" \
			"a kernel that allows fentry is needed: run it in the guest with --vm"
	fi
	{
		echo "# kernel=$(uname -r) bench=${bench_args[*]} where=${ECHOLAB_WHERE:-native} method=funclat-c (fexit: skb_copy_datagram_iter, tcp_sendmsg_locked)"
		echo "# per echoed byte: bytes copied socket->memory (to) and memory->socket (from) by the server's process and by every other but bench (kworkers, kecho's threads); copies: their sum"
		printf 'server\tmessages\tbytes_per_echo\tserver_to\tserver_from\tother_to\tother_from\tcopies\n'
		for s in "${servers[@]}"; do
			say "$s" >&2
			measure "$s"
		done
	} >"$tmp/copies.tsv"
	cp "$tmp/copies.tsv" "$out/copies.tsv"
	grep '^#' "$out/copies.tsv"
	grep -v '^#' "$out/copies.tsv" | column -t -s $'\t' 2>/dev/null ||
		grep -v '^#' "$out/copies.tsv"
	echo "results: $out/copies.tsv"
}

main "$@"
