#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# cmd/compare.sh - every server this place can run, measured alike: the
# command behind `sudo ./run.sh compare`. It learns which servers there are
# from lib/registry.sh, starts and stops them with lib/lifecycle.sh, and
# runs itself again in the guest through lib/guest.sh. Its parts, one role
# a file, sourced below: cmd/compare-args.sh (usage and options),
# cmd/compare-plan.sh (what will run), cmd/compare-run.sh (the runs) and
# cmd/compare-summary.sh (the verdicts and summary.md). This file holds
# the flow: main, and the comparisons made of other compares (--vm in the
# guest, --sizes one per size).
set -euo pipefail

# shellcheck source=lib/lifecycle.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/lifecycle.sh"
# shellcheck source=lib/guest.sh
source "$ECHOLAB_ROOT/lib/guest.sh"
prog_name compare "./run.sh compare --help"
ROOT=$ECHOLAB_ROOT
# shellcheck source=cmd/compare-args.sh
source "$ROOT/cmd/compare-args.sh"
# shellcheck source=cmd/compare-plan.sh
source "$ROOT/cmd/compare-plan.sh"
# shellcheck source=cmd/compare-run.sh
source "$ROOT/cmd/compare-run.sh"
# shellcheck source=cmd/compare-summary.sh
source "$ROOT/cmd/compare-summary.sh"
# shellcheck source=cmd/compare-bound.sh
source "$ROOT/cmd/compare-bound.sh"

# guest_compare [NAME=VALUE...]: the same comparison, run by the guest's
# own run.sh into our OUT, with NAME=VALUE in its environment too; its
# status.
guest_compare() {
	local rev
	rev=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
	in_guest "$OUT" "${VM_TIMEOUT:-5000}" env ECHOLAB_GIT="$rev" ECHOLAB_TW_MAX="$TW_MAX" "$@" \
		./run.sh compare --out /out "${GUEST_ARGS[@]}"
}

# guest_results STATUS: the guest has no gnuplot: the host draws, from
# the raw files alone; then exits with the guest's STATUS.
guest_results() {
	if compgen -G "$OUT/*.tsv" >/dev/null; then
		"$ROOT/cmd/plot.sh" "$OUT" | sed 's/^/  /'
	fi
	echo "results: $OUT"
	exit "$1"
}

# --vm: everything in the guest.
compare_in_guest() {
	local rc=0
	say "booting the qemu guest; everything below runs inside it"
	guest_compare || rc=$?
	guest_results "$rc"
}

# --sizes: the comparison once per size, each by a compare of its own in
# OUT/size-S (its rates probed for that size), then the size table.
compare_sizes() {
	local s args=() a skip='' rc=0
	for a in "${GUEST_ARGS[@]}"; do	# the command line minus --vm, --out
		if [[ -n $skip ]]; then skip=''; continue; fi
		if [[ $a == --sizes || $a == --seed ]]; then skip=1; continue; fi
		args+=("$a")
	done
	{
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "sizes=$(IFS=,; echo "${SIZES[*]}")"
		echo "order_seed=$ORDER_SEED"
		echo "args=${args[*]}"
	} >"$OUT/meta.txt"
	# Each size's compare runs in the background, so that a SIGINT or
	# SIGTERM sent to this process alone (kill PID, not Ctrl-C to the
	# group) reaches it too (sizes_interrupted): in the foreground it went
	# on measuring, this one's trap deferred until it ended.
	SIZE_CHILD=
	trap 'sizes_interrupted' INT TERM
	for s in "${SIZES[@]}"; do
		say "size $s bytes: a comparison of its own in $OUT/size-$s"
		"$0" "${args[@]}" --size "$s" --seed "$ORDER_SEED" --out "$OUT/size-$s" &
		SIZE_CHILD=$!
		wait "$SIZE_CHILD" || rc=$?
		SIZE_CHILD=
		((rc != 130)) || { echo "results: $OUT"; exit 130; }
		((rc == 0)) || die "size $s: the comparison failed (exit $rc); the sizes before it are in $OUT"
	done
	trap - INT TERM
	"$ROOT/cmd/sizes.sh" "$OUT" >"$OUT/summary.md"
	cat "$OUT/summary.md"
	echo "results: $OUT"
	exit 0
}

# A signal during --sizes: the size being measured stops as compare does
# when interrupted; the sizes done stay in OUT.
# The child's own trap runs once its foreground command, bench, has
# ended, so bench is stopped too (it writes what it has); a background
# child starts with SIGINT ignored, so it is sent TERM.
sizes_interrupted() {
	local p
	trap - INT TERM
	if [[ -n $SIZE_CHILD ]]; then
		kill -TERM "$SIZE_CHILD" 2>/dev/null
		for p in $(descendants "$SIZE_CHILD"); do
			[[ $(cat "/proc/$p/comm" 2>/dev/null) != bench ]] ||
				kill -TERM "$p" 2>/dev/null
		done
		wait "$SIZE_CHILD"
	fi
	echo "results: $OUT"
	exit 130
}


main() {
	[[ -x $BENCH && -x $JUDGE && -x $SUMMARIZE ]] ||
		make -C "$ROOT" --no-print-directory bench analysis >/dev/null
	if [[ ${1:-} == --summarize ]]; then
		compare_resummarize "${2:-}"
		return
	fi
	compare_parse_args "$@"
	need_root compare
	WHERE=${ECHOLAB_WHERE:-native}
	# The guest resolves its own; server-bound's has the server's alone.
	((VM)) || { server_bound && [[ $WHERE == vm ]]; } || resolve_cpus
	# The guest's kernel in the name when one was picked (run.sh --kernel).
	local where_to=$PLACEMENT
	((VM)) && where_to=vm
	OUT=${OUT:-$ROOT/results/$(date +%Y%m%d-%H%M%S)-$where_to${ECHOLAB_KERNEL:+-$ECHOLAB_KERNEL}}
	((VM == 0)) || compare_in_guest
	mkdir -p "$OUT"
	((${#SIZES[@]} == 0)) || compare_sizes
	! server_bound || [[ $WHERE == vm ]] || compare_bound
	: >"$OUT/summaries.txt"
	trap compare_interrupted INT TERM
	trap compare_cleanup EXIT	# an error must not leave a server or a namespace
	write_meta
	say "placement: $(placement_text)"

	MEASURED=()
	SKIPPED=()
	measure_all
	trap - INT TERM
	compare_cleanup
	local r
	for r in "${ROUNDS[@]}"; do echo "runs=$r" >>"$OUT/meta.txt"; done

	write_summary
	# In the guest (no gnuplot) the host draws once the guest is done.
	if ((${#MEASURED[@]})) && [[ $WHERE != vm ]]; then
		"$ROOT/cmd/plot.sh" "$OUT" | sed 's/^/  /'
	fi
	cat "$OUT/summary.md"
	[[ $WHERE == vm ]] || echo "results: $OUT"	# the host says it, after plotting
}

main "$@"
