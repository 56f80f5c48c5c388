# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# tokio: an echo server as Rust's async community writes one
# (tokio-echo/): tokio's multi-threaded runtime, a task per connection,
# read into the task's buffer and write_all it back. Built by make peers
# (cargo, from crates.io, pinned by Cargo.lock), not make all. Its worker
# threads are the runtime's default, one per CPU it may run on: run.sh
# places it on the server's CPUs, so it is measured there only, like
# user -w 2 where it has two. Measured when compare --servers names it,
# held to the echo contract (lib/registry.sh, deployed).

deployed tokio dir=tokio-echo binary=tokio-echo/tokio-echo-server tools=cargo \
	bad_args='--threads 0;--threads x;--addr 1.2.3;--buffer-size 100;--buffer-size 1x;--bogus;stray'

variant tokio order=70 colour='#e6550d'

tokio_unavailable() { deployed_unbuilt tokio cargo; }
