# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# uring: the io_uring server (uring-echo/): multishot accept, multishot
# receive into a ring of provided buffers, batched submission, one ring
# per worker thread. A plain process once the kernel has what it needs.

server uring dir=uring-echo binary=uring-echo/uring-echo-server tools=cc needs=io-uring \
	bad_args='--workers 0;--buffers 1000;--addr 1.2.3;--busy-poll 0;--bogus;stray' \
	trace='__do_sys_io_uring_enter io_submit_sqes io_recv io_send io_accept io_issue_sqe tcp_recvmsg tcp_sendmsg'

variant uring order=25 colour='#8c564b'
# Busy polling, as user-poll (servers/user.sh): measured only when named.
variant uring-poll order=27 colour='#c49c94' args='-- --busy-poll 100' extra=1

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
