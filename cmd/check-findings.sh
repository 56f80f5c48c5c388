#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# check-findings.sh [--all] PAGE... - is every ratio, interval and verdict
# a page quotes what analysis/judge says for the directory it links?
#
# A page is read a unit at a time: a table row, a list item or a
# paragraph, its lines joined (a heading alone; code blocks and `code`
# skipped). A quoted figure is a ratio with its interval as judge writes
# it, 'R [L, H]' (0.886 [0.883, 0.907]), an interval alone, '[L, H]', or
# a bare ratio of three decimals, 'R' (a number with its unit after it is
# none: 16.688 us, 2.000 x, 2.000 copies, 0.003 calls, 1.690 per echo).
# A verdict beside it, after it (past a coverage such as 93.8%, a '**'
# or a comma) or before it as 'cheaper (0.886)', is one of cheaper,
# costlier, faster, slower, equivalent, inconclusive, or 'no difference
# detected' (judge's words before 2026-11-25, which it no longer gives).
# The unit's results directories are those it links
# ([text](DIR/summary.md) from results/README.md, results/DIR/... from
# elsewhere) or names (results/DIR, in `code` too). Each figure must be
# one that cmd/findings.sh gives for one of them, for any size, load,
# server, figure and baseline (--every-baseline: a page may quote
# uring-minwait against uring): R [L, H] a row's ratio, lo and hi; [L, H]
# its lo and hi; R its ratio; with a verdict, that row's verdict too. A
# unit that quotes a figure and links no results directory fails: link
# the directory it comes from.
#
# Out: a line per quoted figure that fails, 'PAGE:LINE: FIGURE: why',
# and what judge says (the rows that match but for the verdict, else the
# row nearest in ratio); then a count on stderr. --all: a line for each
# figure that holds too, 'PAGE:LINE: FIGURE: ok'. Nothing is run; the
# raw files are read.
#
# Exit status: 0 when every quoted figure holds; 1 when one does not or
# a PAGE cannot be read; 2 for bad usage.
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
prog_name check-findings.sh
FINDINGS=$ECHOLAB_ROOT/cmd/findings.sh

usage() { sed -n '/^# check-findings.sh/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }

# A page's quoted figures, one a line: LINE<TAB>FIGURE<TAB>R<TAB>L<TAB>H
# <TAB>VERDICT<TAB>TARGETS<TAB>SECTION (L, H and VERDICT '-' where there
# are none; TARGETS the unit's links and names, resolved, space-separated;
# SECTION those of the units before it under its heading, for the hint).
# shellcheck disable=SC2016 # an awk program, not shell
QUOTED_AWK='
function flush(   i) {
	if (text != "")
		figures(text)
	for (i = 1; i <= nf; i++)
		printf "%s\t%s\t%s\n", fig[i], targets == "" ? "-" : substr(targets, 2),
			section == "" ? "-" : substr(section, 2)
	nf = 0; nl = 0; text = ""; section = section targets; targets = ""
}
function add(s) {
	sub(/^[ \t]*(>[ \t]*)*/, "", s); sub(/[ \t]+$/, "", s)
	if (text != "") text = text " "
	at[++nl] = length(text) + 1; ln[nl] = FNR
	text = text s
}
function line_at(p,   i) {
	for (i = nl; i > 1 && at[i] > p; i--)
		;
	return ln[i]
}
function norm(p,   n, part, out, i, k, st) {
	n = split(p, part, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (part[i] == "" || part[i] == ".") continue
		if (part[i] == ".." && k > 0 && st[k] != "..") { k--; continue }
		st[++k] = part[i]
	}
	out = substr(p, 1, 1) == "/" ? "" : "."
	for (i = 1; i <= k; i++) out = out "/" st[i]
	return out
}
function link_targets(s,   t) {
	while (match(s, /\]\([^) \t]+\)/)) {
		t = substr(s, RSTART + 2, RLENGTH - 3); s = substr(s, RSTART + RLENGTH)
		sub(/#.*/, "", t)
		if (t == "" || t ~ /^[a-z]+:/) continue
		targets = targets " " norm(t ~ /^\// ? t : pagedir "/" t)
	}
}
function named_targets(s,   t, top) {
	top = pagedir; sub(/\/results$/, "", top)
	while (match(s, /results\/[0-9]+-[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*/)) {
		t = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
		targets = targets " " norm(top "/" t) "|" norm(root "/" t)
	}
}
function figures(s,   pre, f, p, after, r, l, h, v, m) {
	pre = ""
	while (match(s, NUM "( \\[" NUM ", " NUM "\\])?|\\[" NUM ", " NUM "\\]")) {
		f = substr(s, RSTART, RLENGTH); after = substr(s, RSTART + RLENGTH)
		p = length(pre) + RSTART; pre = pre substr(s, 1, RSTART - 1); s = after
		if (pre ~ /[0-9.]$/ || after ~ /^\.?[0-9]/ ||
		    (f !~ /\[/ && (after ~ /^ ?(us|ms|ns|s|MB|MiB|KiB|GB|GHz|x|copies|calls|per)([^A-Za-z]|$)/ || after ~ /^%/))) {
			pre = pre f
			continue
		}
		r = f; sub(/ .*/, "", r); l = h = "-"
		if (f ~ /^\[/) r = "-"
		if (f ~ /\[/) { m = f; sub(/.*\[/, "", m); sub(/\]/, "", m); l = m; sub(/,.*/, "", l); h = m; sub(/.*, /, "", h) }
		v = "-"
		m = after; sub(/^ [0-9.]+%/, "", m); sub(/^\*\*/, "", m); sub(/^\)/, "", m); sub(/^,/, "", m)
		if (match(m, "^ (\\*\\*)?(" VERDICTS ")")) { v = substr(m, RSTART, RLENGTH); sub(/^ (\*\*)?/, "", v) }
		else if (match(pre, "(" VERDICTS ")(\\*\\*)? \\($")) { v = substr(pre, RSTART, RLENGTH); sub(/(\*\*)? \($/, "", v) }
		fig[++nf] = line_at(p) "\t" f "\t" r "\t" l "\t" h "\t" v
		pre = pre f
	}
}
BEGIN {
	VERDICTS = "cheaper|costlier|faster|slower|equivalent|inconclusive|no difference detected"
	NUM = "[0-9]+\\.[0-9][0-9][0-9]"
}
/^[ \t]*(```|~~~)/ { flush(); fence = !fence; next }
fence { next }
/^[ \t]*$/ { flush(); blank = 1; code = 0; next }
(blank || code) && /^(    |\t)/ { flush(); code = 1; next }
{ blank = 0; code = 0 }
/^[ \t]*\|/ || /^#/ || /^[ \t]*([-*+]|[0-9]+\.) / { flush() }
/^#/ { section = "" }
{
	line = $0
	link_targets(line); named_targets(line)
	gsub(/`[^`]*`/, "", line)
	add(line)
}
/^[ \t]*\|/ || /^#/ { flush() }
END { flush() }
'

# quoted PAGE: its quoted figures (QUOTED_AWK's lines).
quoted() {
	local pagedir
	pagedir=$(cd "$(dirname "$1")" && pwd)
	awk -v pagedir="$pagedir" -v root="$ECHOLAB_ROOT" "$QUOTED_AWK" "$1"
}

# resolve TARGET...: REPLY, the results directories among them, space-
# separated ('-' for none): each target's nearest directory, where a
# directory named results holds it. A target named in the text is
# 'BESIDE|ROOT': results/DIR beside the page's own results/, else in
# this checkout. Builtins only: it runs per figure.
resolve() {
	local t
	REPLY=
	for t in "$@"; do
		[[ $t != *'|'* || -e ${t%|*} ]] && t=${t%|*} || t=${t#*|}
		while [[ $t == */* && ! -d $t ]]; do t=${t%/*}; done
		[[ -d $t && $t == */results/?* && " $REPLY " != *" $t "* ]] || continue
		REPLY+=${REPLY:+ }$t
		[[ -n ${ROWS[$t]:-} ]] || made_rows "$t"
	done
	REPLY=${REPLY:--}
}

# made_rows DIR: findings.sh's rows for DIR, each of its servers in turn
# the baseline, into a file of CACHE, listed in CACHE/index.
made_rows() {
	ROWS[$1]=$CACHE/${#ROWS[@]}.tsv
	{ "$FINDINGS" --every-baseline "$1" 2>/dev/null || true; } | tail -n +2 >"${ROWS[$1]}"
	printf '%s\t%s\n' "$1" "${ROWS[$1]}" >>"$CACHE/index"
}

# The figures (LINE FIGURE R L H VERDICT DIRS SECTION-DIRS) against the
# rows of their directories (CACHE/index names each one's file): a line
# per figure that fails, saying why and what judge says instead (the
# rows that match but for the verdict, else the row nearest in ratio).
# shellcheck disable=SC2016 # an awk program, not shell
CHECK_AWK='
function load(d,   f, row, n) {
	if (d in nrows) return
	f = file[d]; n = 0
	while ((getline row < f) > 0) rows[d, ++n] = row
	close(f); nrows[d] = n
}
function say(c,   where) {
	where = index(c[1], root) == 1 ? substr(c[1], length(root) + 1) : c[1]
	where = where (c[2] == "-" ? "" : ", " c[2] " B") ", offered " c[3] ": " c[4] " against " c[5] ", " c[6]
	return where " " c[10] (c[11] == "-" ? "" : " [" c[11] ", " c[12] "]") " " c[15]
}
function judged(ds,   nd, dl, i, k, c, wrong, nw, best, near, dd) {
	nd = split(ds, dl, " "); wrong = ""; nw = 0; best = -1; near = ""
	for (i = 1; i <= nd; i++) {
		load(dl[i])
		for (k = 1; k <= nrows[dl[i]]; k++) {
			if (split(rows[dl[i], k], c, "\t") < 15) continue
			if ((r == "-" || c[10] == r) && (l == "-" || (c[11] == l && c[12] == h))) {
				if (v == "-" || c[15] == v) return "ok"
				if (++nw <= 3) wrong = wrong (wrong == "" ? "" : "; ") say(c)
				continue
			}
			if (c[r == "-" ? 11 : 10] == "-") continue
			dd = r == "-" ? c[11] - l : c[10] - r; dd = dd < 0 ? -dd : dd
			if (best < 0 || dd < best) { best = dd; near = say(c) }
		}
	}
	if (wrong != "") return "judge\x27s verdict is another: " wrong (nw > 3 ? "; and " nw - 3 " more" : "")
	if (near != "") return "judge gives no such " (l == "-" ? "ratio" : r == "-" ? "interval" : "ratio and interval") "; the nearest: " near
	return "judge gives no ratio for the directories it links"
}
BEGIN { FS = "\t" }
FILENAME == indexfile { file[$1] = $2; next }
{
	r = $3; l = $4; h = $5; v = $6; fig = $2 (v == "-" ? "" : " " v)
	if ($7 != "-") {
		why = judged($7)
		if (why != "ok" || all) print page ":" $1 ": " fig ": " why
		next
	}
	why = "its paragraph, list item or row links no results directory: link the directory it comes from"
	if ($8 != "-") {
		w = judged($8)
		why = why " (of those its section linked before it: " (w == "ok" ? "they give it" : w) ")"
	}
	print page ":" $1 ": " fig ": " why
}
'

# check_page PAGE: a line per quoted figure that fails; counts CHECKED,
# FAILED and UNLINKED. An unlinked figure's line says what the
# directories linked above it in its section give, to help its writer.
check_page() {
	local page=$1 line fig r l h v targets section dirs out
	local recs=()
	while IFS=$'\t' read -r line fig r l h v targets section; do
		# shellcheck disable=SC2086 # space-separated paths
		resolve $targets
		dirs=$REPLY
		# shellcheck disable=SC2086 # space-separated paths
		resolve $section
		recs+=("$line"$'\t'"$fig"$'\t'"$r"$'\t'"$l"$'\t'"$h"$'\t'"$v"$'\t'"$dirs"$'\t'"$REPLY")
	done < <(quoted "$page")
	CHECKED=$((CHECKED + ${#recs[@]}))
	((${#recs[@]})) || return 0
	touch "$CACHE/index"
	out=$(printf '%s\n' "${recs[@]}" | awk -v page="$page" -v root="$ECHOLAB_ROOT/" \
		-v indexfile="$CACHE/index" -v all="$ALL" "$CHECK_AWK" "$CACHE/index" -)
	[[ -n $out ]] || return 0
	echo "$out"
	FAILED=$((FAILED + $(grep -vc ': ok$' <<<"$out" || true)))
	UNLINKED=$((UNLINKED + $(grep -c ': its paragraph, list item or row links no results directory' <<<"$out" || true)))
}

main() {
	local page pages=()
	ALL=0
	while (($#)); do
		case $1 in
		-h | --help) usage; exit 0 ;;
		--all) ALL=1; shift ;;
		-*) warn "unknown option '$1'"; usage >&2; exit 2 ;;
		*) pages+=("$1"); shift ;;
		esac
	done
	((${#pages[@]})) || { warn "give the pages to check (README.md, results/README.md)"; usage >&2; exit 2; }
	for page in "${pages[@]}"; do
		[[ -f $page && -r $page ]] || die "cannot read the page '$page'"
	done
	CACHE=$(mktemp -d)
	trap 'rm -rf "$CACHE"' EXIT
	declare -gA ROWS=()
	FAILED=0 CHECKED=0 UNLINKED=0
	for page in "${pages[@]}"; do
		check_page "$page"
	done
	warn "$FAILED of $CHECKED quoted figures fail: $((FAILED - UNLINKED)) are not what judge says for the directories their text links, $UNLINKED link none"
	((FAILED == 0))
}

main "$@"
