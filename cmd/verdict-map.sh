#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# verdict-map.sh [--list FILE] [--out DIR] - the verdict maps: every kept
# comparison's CPU verdicts in one picture each, drawn from the raw files.
#
# FILE (default results/verdict-map.txt) names the kept directories, the
# picture each goes into, its row (one machine) and its baseline. Per
# picture, one panel per server against the baseline: message size across,
# offered load up (low, mid, high: each size's equal loads, their msg/s in
# the cells); colour the server's CPU per echo as a ratio to the
# baseline's (blue cheaper, red costlier), the mark judge's verdict: a
# triangle down cheaper, up costlier (framed: a difference declared), an
# approximately-equal sign equivalent, a question mark inconclusive;
# grey where judge gives no ratio. The verdicts are cmd/findings.sh's
# (analysis/judge's, figure cpu). Writes into DIR (default results/) for
# each picture NAME.png and NAME.tsv, the table it draws, a cell a line:
#   row server baseline size offered level ratio lo hi verdict pairs group
# (level: the load's rank in its size, 1 the lowest; group: the directory
# of the cell's raw files). Nothing is run.
set -euo pipefail

# shellcheck source=lib/registry.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/registry.sh"
# shellcheck source=lib/plots.sh
source "$ECHOLAB_ROOT/lib/plots.sh"
prog_name verdict-map.sh
FINDINGS=$ECHOLAB_ROOT/cmd/findings.sh

usage() { sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; }

# entries FILE: the list's lines, PNG ROW DIR BASELINE SERVERS NOTE,
# tab-separated (NOTE: the rest of the line, maybe nothing).
entries() {
	awk 'NF && $1 !~ /^#/ {
		if (NF < 5) { print FILENAME ":" NR ": five fields, not " NF > "/dev/stderr"; exit 1 }
		note = $0
		for (i = 1; i <= 5; i++) sub(/^[ \t]*[^ \t]+/, "", note)
		sub(/^[ \t]+/, "", note)
		print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" note }' "$1"
}

# row_note PNG ROW: the notes the list gives a row, one line.
row_note() {
	entries "$list" | awk -F'\t' -v png="$1" -v row="$2" '$1 == png && $2 == row && $6 != "" { print $6 }' |
		paste -sd' ' -
}

# cells PNG: the cells of one picture, unsorted, each as LINE ROW SERVER
# BASELINE SIZE OFFERED RATIO LO HI VERDICT PAIRS GROUP (LINE: its list
# line's number; table lets a later line's cell replace an earlier one's).
cells() {
	local png=$1 p row dir base servers line=0
	while IFS=$'\t' read -r p row dir base servers _; do
		line=$((line + 1))
		[[ $p == "$png" ]] || continue
		[[ -d $ECHOLAB_ROOT/$dir ]] || die "$list: $dir is not a directory"
		(cd "$ECHOLAB_ROOT" && "$FINDINGS" --baseline "$base" --figure cpu "$dir") |
			awk -F'\t' -v OFS='\t' -v row="$row" -v line="$line" -v keep=",$servers," \
				-v root="$ECHOLAB_ROOT" '
			NR > 1 && (keep == ",*," || index(keep, "," $4 ",")) {
				g = $1 "/size-" $2	# the group: a size directory, else DIR
				if (!(g in isdir)) isdir[g] = system("test -d \"" root "/" g "\"") == 0
				print line, row, $4, $5, $2, $3, $10, $11, $12, $15, $14, isdir[g] ? g : $1
			}'
	done < <(entries "$list")
}

# table PNG: the picture's table with a header, a row per cell, by row
# (the list's order), server (the declared plot order), size and load;
# level is the load's rank among the loads of its size in that row.
table() {
	local png=$1 s orders=
	while read -r s; do
		orders+="$s $(variant_get "$s" order) "
	done < <(cells "$png" | cut -f3 | sort -u)
	printf 'row\tserver\tbaseline\tsize\toffered\tlevel\tratio\tlo\thi\tverdict\tpairs\tgroup\n'
	cells "$png" | awk -F'\t' -v OFS='\t' -v orders="$orders" '
		BEGIN { n = split(orders, o, " "); for (i = 1; i < n; i += 2) order[o[i]] = o[i + 1] }
		{
			if (!($2 in first)) first[$2] = $1
			key = $2 SUBSEP $3 SUBSEP $5 SUBSEP $6
			cell[key] = $0	# a later line replaces an earlier one
			load[$2 SUBSEP $5 SUBSEP $6] = 1
		}
		END {
			for (k in cell) {
				split(cell[k], f, "\t")
				level = 1
				for (l in load) {
					split(l, g, SUBSEP)
					if (g[1] == f[2] && g[2] == f[5] && g[3] + 0 < f[6] + 0) level++
				}
				print first[f[2]], order[f[3]] + 0, f[2], f[3], f[4], f[5], f[6], level,
					f[7], f[8], f[9], f[10], f[11], f[12]
			}
		}' | sort -t$'\t' -k1,1n -k2,2n -k4,4 -k6,6n -k7,7n | cut -f3-
}

# row_title ROW TSV: the machine, kernel, date and directories of a row,
# from its first directory's meta.txt.
row_title() {
	local row=$1 tsv=$2 group dirs meta place kernel cpu cores date
	group=$(awk -F'\t' -v row="$row" 'NR > 1 && $1 == row { print $12; exit }' "$tsv")
	dirs=$(awk -F'\t' -v row="$row" 'NR > 1 && $1 == row { sub(/\/size-[0-9]+$/, "", $12); sub(/^results\//, "", $12); print $12 }' "$tsv" |
		awk '!seen[$0]++' | paste -sd, - | sed 's/,/, /g')
	meta=$ECHOLAB_ROOT/$group/meta.txt
	[[ -f $meta ]] || { echo "results/$dirs (no meta.txt: machine unknown)"; return; }
	place=$(sed -n 's/^place=//p' "$meta")
	kernel=$(sed -n 's/^kernel=//p' "$meta")
	cpu=$(sed -n 's/^cpu=//p' "$meta" | sed 's/(R)//g; s/ Processor$//')
	cores=$(sed -n 's/^cores=//p' "$meta")
	date=$(sed -n 's/^date=//p' "$meta" | cut -c1-10)
	case $place in
	vm) place="qemu guest (TCG, compare ratios only), Linux ${kernel%%-*}, $cores vCPUs" ;;
	*) place="native, Linux ${kernel%%-*} on $cores CPUs of an $cpu" ;;
	esac
	echo "$place, $date (results/$dirs)"
}

# panels TSV: one file per panel in $tmp (panel-N.dat: x, y, ratio, grey,
# framed, the cell's three lines, x and y tic labels, text colour), and
# per panel a line: N ROW SERVER BASELINE SIZES LOADS (its row's counts).
panels() {
	awk -F'\t' -v OFS='\t' -v dir="$tmp" '
	function size_label(b) { return b % 1024 ? b " B" : b / 1024 " KiB" }
	function commas(v,   tail) {
		tail = ""
		while (length(v) > 3) { tail = "," substr(v, length(v) - 2) tail; v = substr(v, 1, length(v) - 3) }
		return v tail
	}
	NR == 1 { next }
	{
		if (!(($1, $2) in panel)) { panel[$1, $2] = ++n; what[n] = $1 OFS $2 OFS $3; rowof[n] = $1 }
		if (!(($1, $4) in sizes)) { sizes[$1, $4] = 1; nsizes[$1]++ }
		if ($6 > nloads[$1]) nloads[$1] = $6
		cell[++cells] = $0
	}
	END {
		for (i = 1; i <= cells; i++) {
			split(cell[i], f, "\t")
			x = 1
			for (k in sizes) { split(k, g, SUBSEP); if (g[1] == f[1] && g[2] + 0 < f[4] + 0) x++ }
			v = f[10]; grey = 0; framed = 0; ratio = f[7]
			if (v == "cheaper") { mark = "\342\226\274"; framed = 1 }
			else if (v == "costlier") { mark = "\342\226\262"; framed = 1 }
			else if (v == "equivalent") mark = "\342\211\210"
			else if (v == "inconclusive") mark = "?"
			else {
				grey = 1; mark = "\303\227"
				if (v ~ /^not comparable/) v = "other CPUs"
				else if (v ~ /^not judged \(rates differ/) v = "rates differ"
				else if (v == "too few runs") mark = "\342\200\223"
			}
			line1 = grey || ratio == "-" ? mark : mark " " ratio
			r = ratio + 0
			tc = !grey && (r < 0.807 || r > 1.239) ? "0xffffff" : "0x000000"
			print x, f[6], grey ? "-" : ratio, grey, framed, line1, v,
				(f[5] ~ /^[0-9]+$/ ? commas(f[5]) " msg/s" : f[5]), size_label(f[4]),
				(f[6] == 1 ? "low" : f[6] == 2 ? "mid" : f[6] == 3 ? "high" : "load " f[6]),
				tc > (dir "/panel-" panel[f[1], f[2]] ".dat")
		}
		for (i = 1; i <= n; i++) print i, what[i], nsizes[rowof[i]], nloads[rowof[i]]
	}' "$1"
}

# draw TSV PNG: the picture of a table. Laid out here, in pixels: a row
# of panels per machine under its title, wrapped where it would be wider
# than 1500; every cell 88 x 66.
draw() {
	local tsv=$1 png=$2 n row server base sizes loads last='' baseline=''
	local x=20 y=80 w h line=0 width=1000 height
	local pl=() pr=() pt=() pb=() ptitle=() rtitle=() rnote=() ry=()
	rm -f "$tmp"/panel-*.dat
	while IFS=$'\t' read -r n row server base sizes loads; do
		w=$((sizes * 88))
		h=$((loads * 66))
		if [[ $row != "$last" ]]; then
			((n == 1)) || y=$((y + line))
			rtitle+=("$(row_title "$row" "$tsv")")
			rnote+=("$(row_note "$(basename "$png" .png)" "$row")")
			ry+=("$y")
			x=20 y=$((y + 34)) line=0 last=$row
			[[ -z ${rnote[-1]} ]] || y=$((y + 16))
		elif ((x + w + 80 > 1500)); then
			x=20 y=$((y + line)) line=0
		fi
		pl+=($((x + 55))) pr+=($((x + 55 + w))) pt+=($((y + 30))) pb+=($((y + 30 + h)))
		baseline=${baseline:-$base}
		# the proxy's paths by their names: splice vs copy
		[[ $server != user-proxy-* || $base != user-proxy-* ]] ||
			{ server=${server#user-proxy-} base=${base#user-proxy-}; }
		ptitle+=("$server vs $base")
		((line >= h + 70)) || line=$((h + 70))
		x=$((x + w + 80))
		((width >= x)) || width=$x
	done < <(panels "$tsv")
	((${#pl[@]})) || die "no cells for ${png##*/}: what does the list name?"
	height=$((y + line + 150))
	gp_plot verdict-map out="$png" width="$width" height="$height" \
		data="$tmp" n="${#pl[@]}" baseline="$baseline" \
		pl="$(gp_list "${pl[@]}")" pr="$(gp_list "${pr[@]}")" \
		pt="$(gp_list "${pt[@]}")" pb="$(gp_list "${pb[@]}")" \
		ptitle="$(gp_list "${ptitle[@]}")" rtitle="$(gp_list "${rtitle[@]}")" ry="$(gp_list "${ry[@]}")" \
		rnote="$(gp_list "${rnote[@]}")"
}

main() {
	local out=$ECHOLAB_ROOT/results png
	list=$ECHOLAB_ROOT/results/verdict-map.txt	# global: cells reads it
	while (($#)); do
		case $1 in
		-h | --help) usage; exit 0 ;;
		--list) (($# >= 2)) || usage_error "--list needs a file"; list=$2; shift ;;
		--out) (($# >= 2)) || usage_error "--out needs a directory"; out=$2; shift ;;
		*) usage_error "unknown argument '$1': verdict-map.sh [--list FILE] [--out DIR]" ;;
		esac
		shift
	done
	[[ -f $list ]] || usage_error "no list '$list'"
	[[ -d $out ]] || usage_error "'$out' is not a directory"
	command -v gnuplot >/dev/null ||
		die "gnuplot not found: install gnuplot-nox (make deps as root, or sudo make deps)"
	[[ -x $ECHOLAB_ROOT/analysis/judge ]] || die "analysis/judge is not built: run 'make analysis'"
	list=$(cd "$(dirname "$list")" && pwd)/${list##*/}
	entries "$list" >/dev/null || exit 1	# says which line is wrong
	tmp=$(mktemp -d)	# global: draw writes the panels there
	trap 'rm -rf "$tmp"' EXIT
	for png in $(entries "$list" | cut -f1 | awk '!seen[$0]++'); do
		table "$png" >"$out/$png.tsv"
		draw "$out/$png.tsv" "$out/$png.png"
		echo "verdict map: $out/$png.png, $(($(wc -l <"$out/$png.tsv") - 1)) cells ($out/$png.tsv)"
	done
}

main "$@"
