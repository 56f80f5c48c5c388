# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# go: an echo server as Go's community writes one (go-echo/): net.Listen,
# a goroutine per connection, an explicit read and write loop. Built by
# make peers (Go's toolchain; the standard library alone, so there is no
# go.sum), not make all. GOMAXPROCS is the runtime's default, the CPUs it
# may run on: run.sh places it on the server's CPUs, so it is measured
# there only. Measured when compare --servers names it, held to the echo
# contract (lib/registry.sh, deployed).

deployed go dir=go-echo binary=go-echo/go-echo-server tools=go \
	bad_args='--threads 0;--threads x;--addr 1.2.3;--buffer-size 100;--buffer-size 1x;--bogus;stray'

variant go order=71 colour='#31a354'

go_unavailable() { deployed_unbuilt go go; }
