#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# peers.sh build [--src DIR] | peers.sh list - the public echo servers
# measured beside ours (servers/peers.sh), built outside this repository.
#
#   build          fetch each peer at the commit it was measured at and
#                  build it into $ECHOLAB_PEERS (default
#                  /var/tmp/echolab-peers): bin/ the binaries, src/ their
#                  sources. Needs git, network access to github.com, cc and
#                  liburing (make deps)
#   build --src D  build from sources already in D: D/2019-02-tcp-splice
#                  (from cloudflare/cloudflare-blog) and
#                  D/io_uring-echo-server, at those commits
#   list           each peer, where it comes from, and whether it is built
#
# Their code is theirs (Cloudflare's blog code, frevib's MIT licence): it
# is never copied into this repository, only built beside it. Measure them
# with compare, by name, at one connection (Cloudflare's serve one at a
# time): run.sh compare --loopback --servers user,cf-naive --rates 2000
# --workload load -c 1 -s 65536
set -euo pipefail

PEERS=${ECHOLAB_PEERS:-/var/tmp/echolab-peers}
CF_REPO=https://github.com/cloudflare/cloudflare-blog
CF_COMMIT=725a86fd134e86df621b86fc89b5eee7119908e7
FREVIB_REPO=https://github.com/frevib/io_uring-echo-server
FREVIB_COMMIT=dc00940baeec2ac577410dfa4d881d0852b01a08

usage() { sed -n '/^# peers.sh/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "peers.sh: $*" >&2; exit 1; }
say() { echo "peers.sh: $*" >&2; }

# fetch_cf DEST: the benchmark's directory of cloudflare-blog, sparsely.
fetch_cf() {
	local tmp=$PEERS/src/.cloudflare-blog
	rm -rf "$tmp"
	git clone -q --filter=blob:none --no-checkout "$CF_REPO" "$tmp" ||
		die "cloning $CF_REPO failed: no network? Fetch it elsewhere and use --src"
	git -C "$tmp" sparse-checkout set 2019-02-tcp-splice
	git -C "$tmp" checkout -q "$CF_COMMIT"
	rm -rf "$1"
	mv "$tmp/2019-02-tcp-splice" "$1"
	rm -rf "$tmp"
}

fetch_frevib() {
	rm -rf "$1"
	git clone -q "$FREVIB_REPO" "$1" ||
		die "cloning $FREVIB_REPO failed: no network? Fetch it elsewhere and use --src"
	git -C "$1" checkout -q "$FREVIB_COMMIT"
}

build() {
	local src=
	case ${1:-} in
	--src)
		[[ -n ${2:-} ]] || die "--src needs a directory"
		src=$(realpath "$2")
		[[ -f $src/2019-02-tcp-splice/echo-naive.c && -f $src/io_uring-echo-server/io_uring_echo_server.c ]] ||
			die "$src has no 2019-02-tcp-splice/echo-naive.c or io_uring-echo-server/io_uring_echo_server.c"
		;;
	'') ;;
	*) die "build: unknown argument '$1' (usage: peers.sh build [--src DIR])" ;;
	esac
	[[ -f /usr/include/liburing.h ]] || die "liburing's headers are missing: run 'make deps'"
	mkdir -p "$PEERS/src" "$PEERS/bin"
	if [[ -z $src ]]; then
		say "fetching $CF_REPO at ${CF_COMMIT:0:12} (2019-02-tcp-splice only)"
		fetch_cf "$PEERS/src/2019-02-tcp-splice"
		say "fetching $FREVIB_REPO at ${FREVIB_COMMIT:0:12}"
		fetch_frevib "$PEERS/src/io_uring-echo-server"
		src=$PEERS/src
	fi
	# As their authors build them, with one compiler for all three.
	say "building into $PEERS/bin"
	(cd "$src/2019-02-tcp-splice" &&
		cc -O2 -g -Wall -o "$PEERS/bin/echo-naive" net.c echo-naive.c &&
		cc -O2 -g -Wall -o "$PEERS/bin/echo-splice" net.c echo-splice.c) ||
		die "building Cloudflare's echo-naive and echo-splice failed (above)"
	cc -O2 -Wall -D_GNU_SOURCE -o "$PEERS/bin/io_uring_echo_server" \
		"$src/io_uring-echo-server/io_uring_echo_server.c" -luring ||
		die "building frevib's io_uring_echo_server failed (above)"
	list
}

list() {
	local b
	printf '%-10s %-9s %s\n' peer built from
	for b in cf-naive:echo-naive cf-splice:echo-splice frevib:io_uring_echo_server; do
		local state=no
		[[ -x $PEERS/bin/${b#*:} ]] && state=yes
		case $b in
		cf*) printf '%-10s %-9s %s\n' "${b%%:*}" "$state" "$CF_REPO 2019-02-tcp-splice/${b#*:}.c @ ${CF_COMMIT:0:12}" ;;
		*) printf '%-10s %-9s %s\n' "${b%%:*}" "$state" "$FREVIB_REPO @ ${FREVIB_COMMIT:0:12}" ;;
		esac
	done
	echo "binaries: $PEERS/bin"
}

case ${1:-} in
build) shift; build "$@" ;;
list) list ;;
-h | --help) usage ;;
'') usage >&2; exit 2 ;;
*) echo "peers.sh: unknown command '$1'" >&2; usage >&2; exit 2 ;;
esac
