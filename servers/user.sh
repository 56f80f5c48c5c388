# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# user: the classic userspace server (user-echo/): non-blocking sockets, one
# epoll loop per worker thread, each read as large as the socket holds (up
# to --buffer-size). A plain process: every hook is the
# lifecycle's default. -w 2 shows how much of a gap is only "one thread";
# the bypass (servers/bypass.sh, run.sh --bypass) runs in front of it.

server user dir=user-echo binary=user-echo/user-echo-server tools=cc \
	bad_args='--workers 0;--backlog x;--addr 1.2.3;--busy-poll 0;--buffer-size 100;--buffer-size 1x;--bogus;stray' \
	trace='__sys_recvfrom __sys_sendto sock_recvmsg sock_sendmsg tcp_recvmsg tcp_sendmsg do_epoll_wait ep_poll'

variant user        order=10 colour='#1f77b4'
variant user-w2     order=20 colour='#aec7e8' args='-- -w 2'
# The same loop moving bytes through a pipe per connection (splice): no
# copy to userspace, the userspace-driven counterpart of ebpf's sockmap.
variant user-splice order=22 colour='#393b79' args='-- --splice'
# Reads of at most 16 KiB: what user read before its buffer followed the
# traffic (a 16 KiB buffer per connection), to measure what that bought.
variant user-16k    order=16 colour='#6baed6' args='-- --buffer-size 16384' extra=1
# Busy polling (--busy-poll 100: a worker polls for 100 us after each
# event before it sleeps), measured only when named: it trades a busy CPU
# for the wake-up, so it is judged apart, beside its CPU cost.
variant user-poll   order=15 colour='#17becf' args='-- --busy-poll 100' extra=1
