#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The docs against the tree: every relative link in a *.md file points at a
# file that exists (and, into a .md file, at a heading that exists), and
# every --flag a doc names beside one of the suite's commands appears in
# that command's --help. No root, no server: only --help is run. Its cases:
#   help        each command whose flags the docs name answers --help
#               (bench, judge and summarize built first if they are not)
#   links       every relative link of each doc, one result a doc
#   flags       every --flag each doc names beside a command, one a doc
#   layout      results/ holds no script; no gnuplot program inline in a
#               shell script
#   self-check  links and flags on a doc of its own with mistakes: it
#               fails and names each one, and nothing that is right
#   tests-declare-cases  every tests/*.t declares ALL_TESTS and calls
#               select_cases before root_or_bail_out, one result a file
#   shell-size  no shell function over 80 lines and no shell file over
#               600 (*.sh, *.t, run.sh, .ci/run), no exceptions; and the
#               measure itself, on a scratch file, names what is too long
#
# DOCS_ROOT=DIR reads the *.md files under DIR instead of this checkout's
# (the commands are still this checkout's): that is how self-check proves
# that a doc naming a flag that does not exist fails.
set -uo pipefail

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"
ALL_TESTS="help links flags layout self-check tests-declare-cases shell-size"
select_cases "$@"

DOCS=${DOCS_ROOT:-$ECHOLAB_ROOT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The docs: tracked or new (not ignored) *.md files, relative to $DOCS.
docs() {
	if git -C "$DOCS" rev-parse --show-toplevel 2>/dev/null | grep -qxF "$(cd "$DOCS" && pwd -P)"; then
		git -C "$DOCS" ls-files --cached --others --exclude-standard -- '*.md'
	else
		(cd "$DOCS" && find . -name '*.md' -not -path './.git/*' | sed 's|^\./||')
	fi | sort -u
}

# ---- links ------------------------------------------------------------------

# links FILE: LINE<TAB>TARGET for each [text](target) outside code.
links() {
	awk '
		/^[ \t]*(```|~~~)/ { fence = !fence; next }
		fence { next }
		{
			line = $0
			gsub(/`[^`]*`/, "", line)
			while (match(line, /\]\([^) \t]+\)/)) {
				print NR "\t" substr(line, RSTART + 2, RLENGTH - 3)
				line = substr(line, RSTART + RLENGTH)
			}
		}' "$1"
}

# anchors FILE: the anchors GitHub makes of its headings, one a line.
anchors() {
	awk '
		/^[ \t]*(```|~~~)/ { fence = !fence; next }
		fence || !/^#+ / { next }
		{
			h = $0
			sub(/^#+ +/, "", h); sub(/ +#+ *$/, "", h)
			h = tolower(h)
			gsub(/\[|\]\([^)]*\)/, "", h)
			gsub(/[^a-z0-9 _-]/, "", h)
			gsub(/ /, "-", h)
			a = h
			if (h in seen) a = h "-" seen[h]
			seen[h]++
			print a
		}' "$1"
}

check_links() {
	local file=$1 dir lineno target path anchor bad=()
	dir=$(dirname "$file")
	while IFS=$'\t' read -r lineno target; do
		target=${target#<}
		target=${target%>}
		[[ $target =~ ^[a-z]+: ]] && continue	# http:, https:, mailto:
		path=${target%%#*}
		anchor=
		[[ $target == *'#'* ]] && anchor=${target#*#}
		if [[ -z $path ]]; then
			path=$file
		elif [[ $path == /* ]]; then
			path=${path#/}
		elif [[ $dir != . ]]; then
			path=$dir/$path
		fi
		if [[ ! -e $DOCS/$path ]]; then
			bad+=("$file:$lineno: $target: no such file")
		elif [[ -n $anchor && $path == *.md ]] &&
			! anchors "$DOCS/$path" | grep -qxF -- "$anchor"; then
			bad+=("$file:$lineno: $target: no heading '#$anchor' in $path")
		fi
	done < <(links "$DOCS/$file")
	((${#bad[@]} == 0))
	ok $? "$file"
	((${#bad[@]} == 0)) || diag "$(printf '%s\n' "${bad[@]}")"
}

test_links() {
	local f files
	mapfile -t files < <(docs)
	for f in "${files[@]}"; do
		check_links "$f"
	done
}

# ---- flags ------------------------------------------------------------------

# The commands whose --help the docs are read against, 'NAME CMD...' each.
HELPS=(
	"bench bench/bench --help"
	"judge analysis/judge --help"
	"summarize analysis/summarize --help"
	"run run.sh --help"
	"compare run.sh compare --help"
	"knee run.sh knee --help"
	"soak run.sh soak --help"
	"trace.sh ftrace/trace.sh --help"
	"percall.sh ftrace/percall.sh --help"
	"copies.sh ftrace/copies.sh --help"
	"wq-latency.sh ftrace/wq-latency.sh --help"
	"profile.sh ftrace/profile.sh --help"
	"run-vm.sh vm/run-vm.sh --help"
	"plot.sh cmd/plot.sh --help"
)

# built: bench, judge and summarize are there to ask for their --help.
built() {
	[[ -x $ECHOLAB_ROOT/bench/bench && -x $ECHOLAB_ROOT/analysis/judge &&
		-x $ECHOLAB_ROOT/analysis/summarize ]]
}

# help_texts: each command's --help in $tmp/help/NAME, the text a flag
# must appear in (made once; case help says whether each answered).
# BENCH-ARGS pass through run.sh bench, run.sh --vm, compare and the
# ftrace scripts after '--', so bench's flags count there too. compare's
# and soak's own --help leave out what run.sh's usage lines give them
# (--kernel with --vm). When bench, judge or summarize is not built, it
# is built first (make bench analysis), its output in $tmp/build.log.
help_texts() {
	local h=$tmp/help e name cmd
	[[ ! -d $h ]] || return 0
	mkdir -p "$h"
	built || make -C "$ECHOLAB_ROOT" bench analysis >"$tmp/build.log" 2>&1
	for e in "${HELPS[@]}"; do
		read -r name cmd <<<"$e"
		# shellcheck disable=SC2086 # cmd: the command and its words
		timeout 30 "$ECHOLAB_ROOT"/$cmd >"$h/$name" 2>&1 </dev/null
	done
	grep -E 'run\.sh compare' "$h/run" >>"$h/compare"
	grep -E 'run\.sh soak' "$h/run" >>"$h/soak"
	cat "$h/run" "$h/bench" >"$h/run+bench"
	cat "$h/bench" >>"$h/compare"
}

# Every help answers without root.
test_help() {
	local e name f
	help_texts
	if [[ -e $tmp/build.log ]]; then
		built
		ok $? "bench, judge and summarize build for their --help (make bench analysis)"
		built || diag "$(cat "$tmp/build.log")"
	fi
	for e in "${HELPS[@]}"; do
		name=${e%% *}
		f=$tmp/help/$name
		grep -q -- '--' "$f"
		ok $? "$name --help answers"
		grep -q -- '--' "$f" || diag "$(cat "$f")"
	done
}

# code FILE: LINE<TAB>COMMAND<TAB>FLAG for every --flag that follows one
# of the suite's commands in code (fenced or indented blocks, `spans`).
# The command is the nearest one before the flag on its line; a block
# line that names none continues the line above (a usage wrapped in two).
# After a lone '--', run.sh's words are the server's (not checked), the
# ftrace scripts' are bench's and run-vm.sh's are a command of its own.
code() {
	awk '
	function command(tok, rest,   k, w) {
		if (tok ~ /(^|\/)run\.sh$/) {
			w = "run"
			for (k = 1; k <= rest[0]; k++) {
				if (rest[k] == "--vm") w = "run+bench"
				if (rest[k] !~ /^-/ && !first) {
					first = 1
					if (rest[k] == "compare") return "compare"
					if (rest[k] == "soak") return "soak"
					if (rest[k] == "knee") return "knee"
					if (rest[k] == "bench") w = "run+bench"
				}
			}
			return w
		}
		if (tok ~ /(^|\/)bench\/bench$/) return "bench"
		if (tok ~ /(^|\/)analysis\/judge$/) return "judge"
		if (tok ~ /(^|\/)analysis\/summarize$/) return "summarize"
		if (tok == "bench" && rest[0] >= 1 && rest[1] ~ /^-/) return "bench"
		if (tok ~ /(^|\/)(trace|percall|copies|wq-latency|profile)\.sh$/) {
			sub(/.*\//, "", tok)
			return tok
		}
		if (tok ~ /(^|\/)run-vm\.sh$/) return "run-vm.sh"
		if (tok ~ /(^|\/)plot\.sh$/) return "plot.sh"
		return ""
	}
	function scan(text, lineno, carry,   t, nt, i, j, k, rest, c, cmd, dd, f) {
		nt = split(text, t, /[ \t]+/)
		cmd = carry; dd = 0
		for (i = 1; i <= nt; i++) {
			delete rest
			for (j = i + 1; j <= nt; j++) rest[j - i] = t[j]
			rest[0] = nt - i
			first = 0
			c = command(t[i], rest)
			if (c != "") { cmd = c; dd = 0; continue }
			if (t[i] ~ /^\[?--\]?$/) { dd = 1; continue }	# "--", "[--"
			if (cmd == "") continue
			f = t[i]
			while (match(f, /(^|[^A-Za-z0-9_-])--[a-z][a-z0-9-]*/)) {
				k = substr(f, RSTART, RLENGTH)
				sub(/^[^-]+/, "", k)
				f = substr(f, RSTART + RLENGTH)
				if (!dd) print lineno "\t" cmd "\t" k
				else if (cmd ~ /\.sh$/ && cmd != "run-vm.sh" && cmd != "plot.sh")
					print lineno "\t" "bench" "\t" k
			}
		}
		return cmd
	}
	/^[ \t]*(```|~~~)/ { fence = !fence; last = ""; prev_blank = 0; next }
	{
		block = fence || ((prev_blank || inblock) && /^(    |\t)/)
		inblock = block && !fence
		if (!fence && !/^(    |\t)/) inblock = 0
		if (block) {
			carry = ""
			if (last != "" && $0 ~ /^[ \t]+[[a-z-]/ && !/(run|bench|trace|percall|wq-latency|profile|run-vm|plot)(\.sh|\/bench)/) {
				indent = match($0, /[^ \t]/)
				if (indent > last_indent) carry = last
			}
			c = scan($0, NR, carry)
			if (c != "" && carry == "") { last = c; last_indent = match($0, /[^ \t]/) }
			else if (c == "") last = ""
		} else {
			last = ""
			line = $0
			while (match(line, /`[^`]+`/)) {
				span = substr(line, RSTART + 1, RLENGTH - 2)
				line = substr(line, RSTART + RLENGTH)
				scan(span, NR, "")	# scan moves RSTART: read it first
			}
		}
		prev_blank = ($0 ~ /^[ \t]*$/)
	}' "$1"
}

check_flags() {
	local file=$1 lineno cmd flag bad=()
	while IFS=$'\t' read -r lineno cmd flag; do
		[[ $flag == --help ]] && continue
		grep -qE -- "(^|[^a-z0-9-])$flag([^a-z0-9-]|\$)" "$tmp/help/$cmd" ||
			bad+=("$file:$lineno: $cmd has no $flag in its --help")
	done < <(code "$DOCS/$file")
	((${#bad[@]} == 0))
	ok $? "$file"
	((${#bad[@]} == 0)) || diag "$(printf '%s\n' "${bad[@]}")"
}

test_flags() {
	local f files
	help_texts
	mapfile -t files < <(docs)
	for f in "${files[@]}"; do
		check_flags "$f"
	done
}

# ---- layout -----------------------------------------------------------------

# What docs/contributing.md says goes where: results/ holds data (no
# executable, no *.sh, *.gp or *.awk tracked there), and a gnuplot program
# is a file in plots/, never written inline by a shell script (a
# 'gnuplot <<' heredoc, a pipe into gnuplot, a 'set terminal' in a *.sh).
test_layout() {
	local bad=()
	mapfile -t bad < <(git -C "$ECHOLAB_ROOT" ls-files -s -- results |
		awk -F'\t' '$1 ~ /^100755 / || $2 ~ /\.(sh|gp|awk)$/ { print $2 }')
	((${#bad[@]} == 0))
	ok $? "results/ holds no script"
	((${#bad[@]} == 0)) || diag "$(printf '%s: a script under results/: cmd/ is for commands\n' "${bad[@]}")"
	mapfile -t bad < <(cd "$ECHOLAB_ROOT" &&
		git ls-files --cached --others --exclude-standard -- '*.sh' ':!plots/' |
		xargs -r grep -snE 'gnuplot[[:space:]]*<<|\|[[:space:]]*gnuplot|set term(inal)? ')
	((${#bad[@]} == 0))
	ok $? "no gnuplot program inline in a shell script"
	((${#bad[@]} == 0)) || diag "$(printf '%s (a .gp file in plots/, run with gp_plot)\n' "${bad[@]}")"
}

# ---- the test of the test ---------------------------------------------------

# A doc with a flag that does not exist, one after run.sh's '--' (the
# server's: fine), a flag that exists and a link to nowhere: run the
# cases links and flags of this file on it alone and read what they say.
test_self_check() {
	local dir=$tmp/bad out status
	mkdir -p "$dir/docs"
	cat >"$dir/docs/bad.md" <<-'EOF'
		# A doc with mistakes

		    sudo ./run.sh compare --repeat 3 --no-such-flag
		    sudo ./run.sh uring -- --sqpoll

		Run `bench/bench --threads 10 --no-such-bench-flag` by hand,
		`analysis/judge --markdown --no-such-judge-flag` on its files, and see
		[nowhere](no-such-file.md) and [a heading](#no-such-heading).
	EOF
	out=$(TESTS=docs:links,flags DOCS_ROOT=$dir bash "$0" 2>&1)
	status=$?
	[[ $status != 0 ]]
	ok $? "a doc naming a missing flag fails the test"
	grep -q 'compare has no --no-such-flag' <<<"$out"
	ok $? "run.sh compare --no-such-flag is reported"
	grep -q 'bench has no --no-such-bench-flag' <<<"$out"
	ok $? "bench --no-such-bench-flag in a code span is reported"
	grep -q 'judge has no --no-such-judge-flag' <<<"$out"
	ok $? "analysis/judge --no-such-judge-flag is reported"
	grep -qE -- '--(repeat|threads|sqpoll|markdown)' <<<"$out"
	ok $(($? == 0)) "real flags and a server's own flags are not reported"
	grep -q 'no-such-file.md: no such file' <<<"$out" &&
		grep -q "no heading '#no-such-heading'" <<<"$out"
	ok $? "a link to a missing file or heading is reported"
	((_tap_failed == 0)) || diag "$out"
}

# ---- the test files -----------------------------------------------------------

# case_header FILE: what FILE lacks of a test file's start (tests/lib.sh,
# "cases by name"), one a line, nothing when it has it all: an ALL_TESTS=
# line, then a call of select_cases, before any root_or_bail_out.
# Comments do not count.
case_header() {
	awk '
		/^[ \t]*#/ { next }
		/^ALL_TESTS=/ && !all { all = NR }
		/^select_cases([ \t]|$)/ && !sel { sel = NR }
		/(^|[^A-Za-z0-9_])root_or_bail_out([^A-Za-z0-9_]|$)/ && !root { root = NR }
		END {
			if (!all) print "no ALL_TESTS= line"
			if (!sel) print "no select_cases call (at the start of a line)"
			else if (all && sel < all) print "select_cases (line " sel ") before ALL_TESTS= (line " all ")"
			if (root && (!sel || root < sel)) print "root_or_bail_out (line " root ") before select_cases"
		}' "$1"
}

# Every tests/*.t declares its cases and picks them before it checks for
# root: else TESTS=FILE:CASE cannot run one (prove.sh refuses it) or
# --list needs root.
test_tests_declare_cases() {
	local t why w
	for t in "$ECHOLAB_ROOT"/tests/*.t; do
		why=$(case_header "$t")
		[[ -z $why ]]
		ok $? "tests/${t##*/}"
		[[ -z $why ]] || while read -r w; do diag "tests/${t##*/}: $w"; done <<<"$why"
	done
}

# ---- the size of the shell code ------------------------------------------------

# What docs/contributing.md asks of shell code: a function reads at
# once, at most 80 lines from its 'name() {' to its '}' at column 0,
# and a file at most 600 lines (more: split it by role, as cmd/compare.sh
# is split into cmd/compare-*.sh).
FUNCTION_MAX=80
FILE_MAX=600
# shell_files: the shell files of the checkout, tracked or new.
shell_files() {
	git -C "$ECHOLAB_ROOT" ls-files --cached --others --exclude-standard -- \
		'*.sh' '*.t' run.sh .ci/run | sort -u
}

# shell_sizes FILE...: 'FILE FUNCTION LINES' for each function over
# FUNCTION_MAX lines (top-level ones: 'name() {' at column 0 to the
# next '}' at column 0), 'FILE - LINES' for a file over FILE_MAX.
shell_sizes() {
	awk -v fmax="$FUNCTION_MAX" -v lmax="$FILE_MAX" '
		function file_end() { if (file != "" && lines > lmax) print file, "-", lines }
		FNR == 1 { file_end(); file = FILENAME; open = 0 }
		{ lines = FNR }
		/^[A-Za-z_][A-Za-z0-9_:.-]*[ \t]*\(\)[ \t]*\{[ \t]*(#.*)?$/ {
			name = $0; sub(/[ \t]*\(\).*/, "", name); start = FNR; open = 1; next
		}
		open && /^\}/ {
			if (FNR - start + 1 > fmax) print FILENAME, name, FNR - start + 1
			open = 0
		}
		END { file_end() }' "$@"
}

# size_check ROOT FILE...: the FILEs (relative to ROOT) measured against
# the limits; one line per problem, none when all is well. There are no
# exceptions: a file over the limits is split before it lands.
size_check() {
	local root=$1 file name n
	shift
	while read -r file name n; do
		file=${file#"$root"/}
		if [[ $name == - ]]; then
			echo "$file: $n lines, over $FILE_MAX: split it by role"
		else
			echo "$file: $name() is $n lines, over $FUNCTION_MAX: split it into named parts"
		fi
	done < <(cd "$root" && shell_sizes "$@" | sed "s|^|$root/|")
}

test_shell_size() {
	local files out dir=$tmp/sizes i
	mapfile -t files < <(shell_files)
	out=$(size_check "$ECHOLAB_ROOT" "${files[@]}")
	[[ -z $out ]]
	ok $? "no shell function over $FUNCTION_MAX lines, no shell file over $FILE_MAX (${#files[@]} files)"
	[[ -z $out ]] || diag "$out"
	# The measure on files of its own: an 81-line function and a
	# 601-line file are named, an 80-line function and a 600-line file
	# are not.
	mkdir -p "$dir"
	{
		echo 'fits() {'
		for ((i = 0; i < 78; i++)); do echo '	:'; done
		echo '}'
		echo 'too_long() {'
		for ((i = 0; i < 79; i++)); do echo '	:'; done
		echo '}'
	} >"$dir/a.sh"
	for ((i = 0; i < 600; i++)); do echo ':'; done >"$dir/b.sh"
	echo ':' >"$dir/c.sh"
	cat "$dir/b.sh" >>"$dir/c.sh"
	out=$(size_check "$dir" a.sh b.sh c.sh)
	[[ $out == *"a.sh: too_long() is 81 lines"* && $out == *"c.sh: 601 lines"* &&
		$out != *fits* && $out != *b.sh* ]]
	ok $? "an 81-line function and a 601-line file are named, 80 and 600 lines are not"
	diag "$out"
}

run_tests
plan_at_end
