# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# peers: public echo servers measured beside ours, so that "at its best"
# has a reference (results/history.md, "At its best"). None of their code
# is in this repository: cmd/peers.sh fetches and builds them outside it,
# into $ECHOLAB_PEERS (default /var/tmp/echolab-peers). compare measures
# one only when --servers names it; no test holds them to our contract
# (they are not ours to fix), and nothing else (make, the guest, the
# traces) sees them. Each is started as its author wrote it:
#   cf-naive   Cloudflare's 2019 tcp-splice benchmark, echo-naive.c:
#              blocking read and write through a 128 KiB buffer; one
#              connection at a time, so ping-pong only (-t 1, -c 1)
#   cf-splice  the same benchmark's echo-splice.c: socket -> pipe (512
#              KiB) -> socket; one connection at a time, and it never
#              closes its pipes (two descriptors per connection)
#   frevib     frevib/io_uring-echo-server: one io_uring, 4,096 provided
#              buffers of 2 KiB; listens on every address (it has no
#              option), does not set TCP_NODELAY, exits when its buffers
#              run out (more than 4,096 echoes in flight)

ECHOLAB_PEERS=${ECHOLAB_PEERS:-/var/tmp/echolab-peers}

peer cf-naive binary="$ECHOLAB_PEERS/bin/echo-naive"
variant cf-naive order=90 colour='#8c6d31' extra=1
peer cf-splice binary="$ECHOLAB_PEERS/bin/echo-splice"
variant cf-splice order=91 colour='#bd9e39' extra=1
peer frevib binary="$ECHOLAB_PEERS/bin/io_uring_echo_server" needs=io-uring
variant frevib order=92 colour='#e7ba52' extra=1

# _peer_unavailable NAME: why NAME cannot run, when it is not built.
_peer_unavailable() {
	[[ -x $(server_binary "$1") ]] ||
		echo "$1 is a public peer built outside this repository, and $(server_binary "$1") is not there: run 'cmd/peers.sh build' (or set ECHOLAB_PEERS to where it is built)"
}

# Their command lines: ADDR:PORT for Cloudflare's, the port alone for
# frevib's. A second argument would switch Cloudflare's to busy polling.
cf-naive_unavailable() { _peer_unavailable cf-naive; }
cf-naive_start() { start_detached "$2:$1"; }
cf-splice_unavailable() { _peer_unavailable cf-splice; }
cf-splice_start() { start_detached "$2:$1"; }
frevib_unavailable() { _peer_unavailable frevib; }
frevib_start() { start_detached "$1"; }
