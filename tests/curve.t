#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh compare --curve: latency against offered load. Cases:
#   usage    its usage errors: exit 2 and why (seconds)
#   curve    a small curve of two servers: the capacity probe, open-loop
#            points, every run on file, curve.tsv, curve.png, the knees in
#            summary.md and --summarize giving them again; no point at 20%
#            of capacity is client-limited; nothing left listening
#   hogged   the client-limited mark: a CPU hog on bench's CPUs must set
#            it on every point, and no knee is claimed; nothing left
#            listening
set -uo pipefail
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="usage curve hogged"
select_cases "$@"
root_or_bail_out

out_dir=$(mktemp -d)
HOGS=()
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	((${#HOGS[@]} == 0)) || kill "${HOGS[@]}" 2>/dev/null
	stop_all
	rm -rf "$out_dir"
}
trap cleanup EXIT

# expect_usage NAME WHY ARGS...: compare refuses with exit 2 and says why.
expect_usage() {
	local name=$1 why=$2 out rc
	shift 2
	out=$(bounded 30 "$RUN" compare "$@" 2>&1 >/dev/null)
	rc=$?
	is "$rc" 2 "usage/$name: exit 2"
	like "$out" "$why" "usage/$name: says why"
}

# knee_rows SUMMARY.MD: 'server knee each-repetition' of its knees table.
knee_rows() {
	awk -F'|' '/^## Latency against load: the knees/ { on = 1; next } /^## / { on = 0 }
		on && /^\| / && !/^\| server / { gsub(/ /, ""); print $2, $3, $5 }' "$1"
}

# column FILE NAME: a column of curve.tsv, by its header.
column() {
	awk -F'\t' -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) k = i; next } { print $k }' "$1"
}


# nothing_listens: compare stopped every server it started.
nothing_listens() {
	is "$(listeners "$PORT")" "" "nothing left listening on the port"
}

test_usage() {
	expect_usage with-sweep "--curve sweeps the offered rate itself" --curve --sweep threads=1,2
	expect_usage with-rate "--curve chooses the rates: drop -R" --curve -c 10 -d 1 -R 100
	expect_usage without-event-engine "--curve needs bench's event engine" --curve -t 10 -d 1
	expect_usage bad-bound "--bound needs the p99 bound" --curve --bound soon
	expect_usage bad-points "--points takes fractions" --curve --points 0.5,x
}

# A small curve: user and uring, 3 points, 2 repetitions.
test_curve() {
	local dir=$out_dir/curve out rc capacity rates n s r k bad
	out=$(bounded 400 "$RUN" compare --curve --servers user,uring --points 0.2,0.6,1.3 --repeat 2 \
		--cpus 0 --out "$dir" -c 100 -d 1 --warmup 1 2>&1)
	rc=$?
	is "$rc" 0 "compare --curve exits 0"
	((rc == 0)) || diag "$(tail -n 20 <<<"$out")"
	capacity=$(sed -n 's/^capacity=//p' "$dir/meta.txt")
	like "$capacity" '^[0-9]+$' "meta.txt records the capacity probed"
	rates=$(sed -n 's/^sweep=rate=//p' "$dir/meta.txt")
	is "$rates" "$(awk -v c="$capacity" 'BEGIN { printf "%d,%d,%d", int(c * 0.2 / 100 + 0.5) * 100, int(c * 0.6 / 100 + 0.5) * 100, int(c * 1.3 / 100 + 0.5) * 100 }')" \
		"the offered rates are the points' fractions of the capacity"
	n=0
	for s in user uring; do
		for r in ${rates//,/ }; do
			for k in 1 2; do
				[[ -e $dir/$s-rate$r-$k.tsv || -e $dir/$s-rate$r-$k.tsv.gz ]] && n=$((n + 1))
			done
		done
	done
	is "$n" 12 "a raw file per server, rate and repetition (2 x 3 x 2)"
	is "$(sed -n 's/^# rate=//p' "$dir/user-rate${rates%%,*}-1.tsv")" "${rates%%,*}" \
		"each run is offered its rate (bench -R)"
	is "$(sed -n 's/^# arrivals=//p' "$dir/user-rate${rates%%,*}-1.tsv")" poisson "Poisson arrivals"
	is "$(($(wc -l <"$dir/curve.tsv") - 1))" 12 "curve.tsv has a row per run"
	[[ -s $dir/curve.png ]]
	ok $? "curve.png drawn"
	like "$(knee_rows "$dir/summary.md" | tr '\n' ';')" "^user [0-9]+ [0-9+,]+;uring [0-9]+ [0-9+,]+;$" \
		"summary.md gives each server's knee, in compare's order"
	# The low point: the client is free, the point counts.
	is "$(awk -F'\t' -v r="${rates%%,*}" 'NR > 1 && $2 == r { print $11 }' "$dir/curve.tsv" | sort -u)" 0 \
		"no point at 20% of capacity is client-limited"
	# Every knee is one of its server's achieved loads or 0 (none under the bound).
	bad=$(awk -F'\t' 'NR > 1 { a[$1 " " $4] = 1 } END { for (k in a) print k }' "$dir/curve.tsv" >"$out_dir/ach"
		knee_rows "$dir/summary.md" | while read -r s k _; do
			[[ $k == 0 ]] || grep -qx "$s $k" "$out_dir/ach" || echo "$s:$k"
		done)
	is "$bad" "" "each knee is a load its server achieved (or 0)"
	# The summary can be written again from the files alone.
	cp "$dir/summary.md" "$out_dir/summary.before"
	"$RUN" compare --summarize "$dir" >/dev/null
	ok $? "compare --summarize rewrites it"
	is "$(grep -A4 'the knees' "$dir/summary.md" | head -n 3)" "$(grep -A4 'the knees' "$out_dir/summary.before" | head -n 3)" \
		"with the same knees section"
	nothing_listens
}

# The client-limited mark. Something else keeps bench's CPUs (all but 0)
# busy: bench runs at SCHED_IDLE there and gets next to nothing of them.
# Every point must be marked.
test_hogged() {
	local dir=$out_dir/hogged out c
	for ((c = 1; c < $(nproc); c++)); do
		taskset -c "$c" bash -c 'while :; do :; done' &
		HOGS+=($!)
	done
	out=$(bounded 400 "$RUN" compare --curve --servers user --points 0.5,1.0 --repeat 1 \
		--cpus 0 --out "$dir" -c 50 -d 1 -T 1000 2>&1)
	kill "${HOGS[@]}"
	wait "${HOGS[@]}" 2>/dev/null
	HOGS=()
	[[ -s $dir/curve.tsv ]]
	ok $? "curve.tsv written"
	[[ -s $dir/curve.tsv ]] || diag "$(tail -n 20 <<<"$out")"
	is "$(column "$dir/curve.tsv" client_limited | sort -u | tr '\n' ' ')" "1 " \
		"every point is client-limited"
	diag "hogged: client busy $(column "$dir/curve.tsv" client_busy | tr '\n' ' ')"
	like "$(knee_rows "$dir/summary.md")" '^user 0 0\+$' \
		"no knee for user, and the + says the client ended the search"
	[[ -s $dir/curve.png ]]
	ok $? "curve.png drawn (open circles)"
	nothing_listens
}

run_tests
plan_at_end
