# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# user: the classic userspace server (user-echo/): non-blocking sockets, one
# epoll loop per worker thread. A plain process: every hook is the
# lifecycle's default. -w 2 shows how much of a gap is only "one thread";
# the bypass (servers/bypass.sh, run.sh --bypass) runs in front of it.

server user dir=user-echo binary=user-echo/user-echo-server tools=cc \
	bad_args='--workers 0;--backlog x;--addr 1.2.3;--busy-poll 0;--bogus;stray' \
	trace='__sys_recvfrom __sys_sendto sock_recvmsg sock_sendmsg tcp_recvmsg tcp_sendmsg do_epoll_wait ep_poll'

variant user        order=10 colour='#1f77b4'
variant user-w2     order=20 colour='#aec7e8' args='-- -w 2'
# Busy polling (--busy-poll 100: a worker polls for 100 us after each
# event before it sleeps), measured only when named: it trades a busy CPU
# for the wake-up, so it is judged apart, beside its CPU cost.
variant user-poll   order=15 colour='#17becf' args='-- --busy-poll 100' extra=1
