# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# uring: the io_uring server (uring-echo/): multishot accept direct,
# multishot receive into a ring of provided buffers, batched submission and
# waits, a registered ring, one ring per worker thread. A plain process
# once the kernel has what it needs.

server uring dir=uring-echo binary=uring-echo/uring-echo-server tools=cc needs=io-uring \
	bad_args='--workers 0;--buffers 1000;--buffers 16 --conn-buffers 16;--addr 1.2.3;--busy-poll 0;--disable nothing;--min-wait 0;--min-batch 1 --min-wait 50;--min-batch 8;--bogus;stray' \
	trace='__do_sys_io_uring_enter io_submit_sqes io_recv io_send io_accept io_issue_sqe tcp_recvmsg tcp_sendmsg'

variant uring order=25 colour='#8c564b'
# Busy polling, as user-poll (servers/user.sh): measured only when named.
variant uring-poll order=27 colour='#c49c94' args='-- --busy-poll 100' extra=1
# What each of io_uring's networking features buys (uring-echo/README.md):
# one switched off per variant, and uring-basic, all of them off with the
# old 4096-entry rings (the server before them). Measured when named.
variant uring-basic     order=28   colour='#7f7f7f' args='-- --disable all --ring-entries 4096' extra=1
variant uring-no-ringfd order=28.1 colour='#bcbd22' args='-- --disable ring-fd' extra=1
variant uring-no-direct order=28.2 colour='#dbdb8d' args='-- --disable direct' extra=1
variant uring-no-batch  order=28.3 colour='#9edae5' args='-- --disable batch-return' extra=1
# min-wait is off by default since 2026-11-27 (uring-echo/README.md):
# uring-minwait is the batched wait as it was; uring-no-minwait, the same
# as the default now, names the kept comparisons that measured it off.
variant uring-no-minwait order=28.4 colour='#c7c7c7' args='-- --disable min-wait' extra=1
variant uring-minwait   order=28.45 colour='#7f5f5f' args='-- --min-wait 50' extra=1
# 1024 buffers of 4 KiB: the default before 64 KiB, to measure what
# buffers the size of a message buy.
variant uring-4k        order=28.6 colour='#8c6d8c' args='-- --buffer-size 4096 --buffers 1024' extra=1
variant uring-big-rings order=28.5 colour='#e377c2' args='-- --ring-entries 4096' extra=1
# 32 buffers of 64 KiB: 2 MiB, one core's L2 here, where the old default
# 256 were 16 MiB that receives walk through in turn: the buffers'
# footprint made uring's copies dearer than user's (issue 34). The
# default now follows the L2 (32 here); uring-256buf is the old one.
variant uring-32buf     order=28.7 colour='#6b6ecf' args='-- --buffers 32' extra=1
variant uring-256buf    order=28.8 colour='#393b79' args='-- --buffers 256' extra=1

# Multishot receive (6.0) and provided-buffer rings (5.19); and io_uring
# may be switched off (kernel.io_uring_disabled, 6.6 and later).
uring_unavailable() {
	local v
	v=$(uname -r)
	if ((${v%%.*} < 6)); then
		echo "this kernel ($v) is older than 6.0, which io_uring's multishot receive needs; use the user server, or run uring in the guest: sudo ./run.sh --vm uring"
	elif [[ $(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0) != 0 ]]; then
		echo "io_uring is disabled here (sysctl kernel.io_uring_disabled=$(cat /proc/sys/kernel/io_uring_disabled)); set it to 0, or use the user server"
	fi
}
