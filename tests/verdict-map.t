#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# cmd/verdict-map.sh on the kept directories results/verdict-map.txt names,
# drawn into a scratch directory: the maps cannot drift from judge. No
# root, no server (gnuplot and analysis/judge). Its cases:
#   help       --help answers and names its flags
#   pictures   each picture the list names is drawn, a PNG under 300 KB
#   cells      each table holds one row per server, size and load the
#              directories hold (a later line's replacing an earlier's):
#              no cell missing, none made up, none twice
#   judge      each row's ratio and verdict are judge's own, run here on
#              that group's raw files against the row's baseline
#   committed  the committed tables (results/*.tsv) are what the kept
#              directories give today: make plots and commit them if not
#   bad-list   a list line without five fields, or naming no directory:
#              a failure that says why, nothing drawn
set -uo pipefail

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="help pictures cells judge committed bad-list"
select_cases "$@"

MAP=$ROOT/cmd/verdict-map.sh
LIST=$ROOT/results/verdict-map.txt
JUDGE=$ROOT/analysis/judge
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The maps, drawn once into $tmp/out for the cases that read them.
drawn() {
	[[ ! -e $tmp/drawn ]] || return "$(cat "$tmp/drawn")"
	mkdir -p "$tmp/out"
	"$MAP" --out "$tmp/out" >"$tmp/draw.log" 2>&1
	echo $? >"$tmp/drawn"
	return "$(cat "$tmp/drawn")"
}

# pictures: the PNG names the list gives, once each.
pictures() { awk '!/^#/ && NF { print $1 }' "$LIST" | awk '!seen[$0]++'; }

test_help() {
	local out
	out=$("$MAP" --help)
	ok $? "exit 0"
	like "$out" "--list FILE.*--out DIR" "names its flags"
}

test_pictures() {
	local p size
	drawn
	ok $? "draws the kept directories into a scratch directory" || { diag "$(cat "$tmp/draw.log")"; return; }
	for p in $(pictures); do
		is "$(head -c 8 "$tmp/out/$p.png" | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a "$p.png is a PNG"
		size=$(stat -c %s "$tmp/out/$p.png")
		((size < 300000))
		ok $? "$p.png: $size bytes, under 300 KB"
	done
}

# expected PNG: the cells the list's directories hold for that picture,
# found here from the raw files' names: ROW SERVER SIZE OFFERED, sorted.
expected() {
	local png=$1 p row dir base servers group size f name label rate
	while read -r p row dir base servers _; do
		[[ $p == "$png" ]] || continue
		for group in "$ROOT/$dir"/size-* "$ROOT/$dir"; do
			[[ -d $group ]] || continue
			[[ $group == */size-* ]] && size=${group##*/size-} ||
				size=$(sed -n 's/^size=//p' "$group/meta.txt")
			[[ $group == */size-* || ! -d $ROOT/$dir/size-${size} ]] || continue
			for f in "$group"/*-rate*-*.tsv*; do
				name=${f##*/}
				[[ $name =~ ^(.+)-rate([0-9]+)-[0-9]+\.tsv ]] || continue
				label=${BASH_REMATCH[1]} rate=${BASH_REMATCH[2]}
				[[ $label != "$base" ]] || continue
				[[ $servers == '*' || ",$servers," == *",$label,"* ]] || continue
				printf '%s\t%s\t%s\t%s\n' "$row" "$label" "$size" "$rate"
			done
		done
	done < <(awk '!/^#/ && NF' "$LIST") | sort -u
}

test_cells() {
	local p want got
	drawn || { ok 1 "the maps are drawn"; diag "$(cat "$tmp/draw.log")"; return; }
	for p in $(pictures); do
		want=$(expected "$p")
		got=$(awk -F'\t' -v OFS='\t' 'NR > 1 { print $1, $2, $4, $5 }' "$tmp/out/$p.tsv" | sort)
		[[ -n $want ]]
		ok $? "$p: the list's directories hold cells ($(wc -l <<<"$want"))"
		is "$got" "$want" "$p.tsv: one row per server, size and load the directories hold"
		is "$(awk -F'\t' 'NR > 1' "$tmp/out/$p.tsv" | cut -f1,2,4,5 | sort | uniq -d)" "" \
			"$p.tsv: no cell twice"
	done
}

# judge_line GROUP RATE BASELINE SERVER: judge's cpu line for one cell.
judge_line() {
	local files=("$ROOT/$1"/*-rate"$2"-*.tsv*)
	"$JUDGE" --baseline "$3" "${files[@]}" 2>/dev/null |
		grep "^judge label=$4 figure=cpu "
}

test_judge() {
	local p row server base size offered ratio lo hi verdict group line bad n
	drawn || { ok 1 "the maps are drawn"; diag "$(cat "$tmp/draw.log")"; return; }
	for p in $(pictures); do
		bad=() n=0
		while IFS=$'\t' read -r row server base size offered _ ratio lo hi verdict _ group; do
			n=$((n + 1))
			line=$(judge_line "$group" "$offered" "$base" "$server")
			[[ $line == *" ratio=$ratio ratio_lo=$lo ratio_hi=$hi "* &&
				${line#* verdict=} == "$verdict" ]] ||
				bad+=("$row $server $size B $offered msg/s: the map says $ratio [$lo, $hi] $verdict; judge: ${line#judge }")
		done < <(awk 'NR > 1' "$tmp/out/$p.tsv")
		((n > 0 && ${#bad[@]} == 0))
		ok $? "$p.tsv: each of $n cells' ratio, interval and verdict are judge's"
		((${#bad[@]} == 0)) || diag "$(printf '%s\n' "${bad[@]}")"
	done
}

test_committed() {
	local p
	drawn || { ok 1 "the maps are drawn"; diag "$(cat "$tmp/draw.log")"; return; }
	for p in $(pictures); do
		diff "$ROOT/results/$p.tsv" "$tmp/out/$p.tsv" >"$tmp/diff" 2>&1
		ok $? "results/$p.tsv is what the kept directories give today" ||
			diag "$(head -20 "$tmp/diff")" "(make plots draws them again; commit results/$p.*)"
		[[ -s $ROOT/results/$p.png ]]
		ok $? "results/$p.png is committed"
	done
}

test_bad_list() {
	local out
	mkdir -p "$tmp/bad"
	printf 'verdict-map\tnative\tresults/20261127-sizes-native\tuser\n' >"$tmp/bad/four.txt"
	out=$("$MAP" --list "$tmp/bad/four.txt" --out "$tmp/bad" 2>&1)
	is $? 1 "a line of four fields: exit 1"
	like "$out" "four.txt:1: five fields, not 4" "says which line, and why"
	printf 'verdict-map\tnative\tresults/no-such-dir\tuser\t*\n' >"$tmp/bad/nodir.txt"
	out=$("$MAP" --list "$tmp/bad/nodir.txt" --out "$tmp/bad" 2>&1)
	is $? 1 "a directory that is not there: exit 1"
	like "$out" "results/no-such-dir is not a directory" "names it"
	[[ -z $(compgen -G "$tmp/bad/*.png") ]]
	ok $? "nothing drawn"
}

run_tests
plan_at_end
