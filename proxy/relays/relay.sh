#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# relay.sh - HAProxy or nginx as the proxy hop's relay: fills in its
# configuration (haproxy.cfg or nginx.conf, beside this script), checks
# it with the relay's own check, and becomes the relay, in the foreground,
# so that its caller holds its pid (run.sh SERVER --proxy haproxy|nginx,
# tests/proxy.t). SIGTERM stops it: HAProxy stops at once, nginx's
# master stops its workers and then itself.
#
#   relay.sh haproxy|nginx --dir DIR --port N --backend-port M
#            [--addr ADDR] [--backend-addr ADDR] [--threads N]
#
# DIR receives the configuration (and nginx's pid file); the addresses
# default to 127.0.0.1, --threads (HAProxy's nbthread, nginx's worker
# processes) to 1. Exit status: 2 bad usage, 1 the relay is not installed
# or refused its configuration; otherwise the relay's own.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	sed -n '10,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}
fail() { echo "relay.sh: $*" >&2; exit "${code:-2}"; }

name=${1:-}
[[ $name == haproxy || $name == nginx ]] || fail "name the relay: haproxy or nginx (got '${name}')"
shift
dir='' port='' backend_port='' addr=127.0.0.1 backend_addr=127.0.0.1 threads=1
while (($#)); do
	[[ $1 == -h || $1 == --help ]] && usage
	(($# >= 2)) || fail "$1 needs a value"
	case $1 in
	--dir) dir=$2 ;;
	--port) port=$2 ;;
	--backend-port) backend_port=$2 ;;
	--addr) addr=$2 ;;
	--backend-addr) backend_addr=$2 ;;
	--threads) threads=$2 ;;
	*) fail "unknown option '$1'" ;;
	esac
	shift 2
done
[[ -n $dir ]] || fail "--dir: name a directory for the configuration"
for v in port backend_port threads; do
	[[ ${!v} =~ ^[1-9][0-9]{0,4}$ ]] || fail "--${v/_/-}: '${!v}' is not a positive number"
done
code=1
bin=$(command -v "$name") || fail "$name is not installed: run 'make deps' (Debian's $name)"
mkdir -p "$dir"
template=$here/nginx.conf
[[ $name == nginx ]] || template=$here/haproxy.cfg
conf=$dir/${template##*/}
# HAProxy's maxconn, as it derives it itself where none is set: two
# sockets a connection and, with splice-auto, a pipe of two descriptors
# for every fourth (its maxpipes): 2.5 descriptors a connection, of those
# it may open, less a reserve. Set, so that its users know it
# (tests/proxy.t holds that many connections through it).
maxconn=$((($(ulimit -n) - 100) * 2 / 5))
sed -e "s|@MAXCONN@|$maxconn|g" -e "s|@ADDR@|$addr|g" -e "s|@PORT@|$port|g" -e "s|@THREADS@|$threads|g" \
	-e "s|@BACKEND_ADDR@|$backend_addr|g" -e "s|@BACKEND_PORT@|$backend_port|g" \
	-e "s|@DIR@|$dir|g" "$template" >"$conf"
case $name in
haproxy)
	"$bin" -c -q -f "$conf" || fail "haproxy refused $conf (its words above)"
	exec "$bin" -db -f "$conf"
	;;
nginx)
	"$bin" -q -t -e stderr -p "$dir" -c "$conf" || fail "nginx refused $conf (its words above)"
	exec "$bin" -e stderr -p "$dir" -c "$conf"
	;;
esac
