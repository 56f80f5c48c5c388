# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What tests/compare.t's and compare-fail.t's cases share (each sources
# this after tests/lib.sh): the setup, and the checks and listers that
# are not cases themselves.

# compare_setup: after root_or_bail_out. TMP, where each case writes its
# own directories; no wait for the TIME_WAIT of earlier tests (function,
# not timing); an EXIT trap that kills the CPU hogs (interrupted's)
# and stops what a case left: the server, the client's namespace.
compare_setup() {
	TMP=$(mktemp -d)
	export ECHOLAB_TW_MAX=1000000
	trap compare_cleanup EXIT
}

# shellcheck disable=SC2317 # called by the EXIT trap
compare_cleanup() {
	kill_hogs
	"$RUN" stop >/dev/null 2>&1
	ip netns del echolab-cli 2>/dev/null
	ip link del echolab-srv0 2>/dev/null
	rm -rf "$TMP"
}

is_png() { [[ $(head -c 8 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; }

# rows_over FILE N: the raw file FILE has more than N rows (for wait_until).
rows_over() { [[ $(grep -vc '^#' "$1" 2>/dev/null) -gt $2 ]]; }

# softirq_share FILE: the client's softirq time per echo over the server's.
softirq_share() {
	awk -F= '/^# server_softirq_us_per_echo=/ { s = $2 }
		/^# client_softirq_us_per_echo=/ { c = $2 }
		END { if (s > 0) printf "%.2f\n", c / s; else print "none" }' "$1"
}

# netns_left: the suite's namespaces and veths (a lister: fails when ip does).
# shellcheck disable=SC2317 # called through absent
netns_left() {
	local ns links
	ns=$(ip netns list) || { echo "ip netns list failed" >&2; return 1; }
	links=$(ip -o link show) || { echo "ip link show failed" >&2; return 1; }
	# ip -o: one line per link, 'INDEX: NAME: <FLAGS> ...'
	awk '/^[0-9]+: [^ ]+: </ { print "link", $2; next }
		NF { print "ip -o link: cannot read the line: " $0 > "/dev/stderr"; bad = 1 }
		END { exit bad }' <<<"$links" || return 1
	[[ -z $ns ]] || awk '{ print "netns", $1 }' <<<"$ns"
}

# bypass_cgroups: the bypass's cgroups for our port, under the cgroup v2
# mount (a lister; nothing when there is no cgroup v2).
# shellcheck disable=SC2317 # called through absent
bypass_cgroups() {
	local cg
	cg=$(cgroup2_mount)
	[[ -z $cg ]] || find "$cg" -maxdepth 1 -name "echolab-bypass-$PORT"
}

# achieved FILE: ok echoes per second of the window (judge's rps), and the
# offered rate and the window, as "ACHIEVED OFFERED WINDOW".
achieved() {
	awk '/^# rate=/ { sub(/^# rate=/, ""); r = $0 } /^# window_s=/ { sub(/^# window_s=/, ""); w = $0 }
		!/^#/ && $NF == "ok" { ok++ } END { printf "%d %d %s\n", (w > 0 ? ok / w : 0), r, w }' "$1"
}

# native_redraw: native's directory redrawn, summary.md by compare
# --summarize and the plots by make plots, from its files alone.
native_redraw() {
	local sums
	# compare --summarize: summary.md again from the raw files alone.
	cp "$TMP/native/summary.md" "$TMP/native.summary.first"
	"$RUN" compare --summarize "$TMP/native" >/dev/null
	ok $? "summarize: compare --summarize DIR exits 0"
	is "$(diff "$TMP/native.summary.first" "$TMP/native/summary.md" && echo same)" same \
		"summarize: the same summary.md from the raw files and meta.txt alone"

	# make plots: from the raw files alone, nothing started, nothing rewritten.
	sums=$(md5sum "$TMP"/native/*.tsv)
	rm -f "$TMP"/native/*.png
	make -s -C "$ECHOLAB_ROOT" plots RESULTS="$TMP/native" >/dev/null 2>&1
	ok $? "plots: make plots RESULTS=dir exits 0"
	is_png "$TMP/native/boxplot.png" && is_png "$TMP/native/cdf.png"
	ok $? "plots: boxplot and CDF redrawn"
	is "$(md5sum "$TMP"/native/*.tsv)" "$sums" "plots: raw files untouched"
	[[ ! -e $STATE_DIR ]]
	ok $? "plots: no server was started"
}
