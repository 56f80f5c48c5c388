/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recv_waiting() - recv() on a blocking socket whose SO_RCVTIMEO is
 * RECV_TIMEOUT_S, called again when it says EAGAIN before that time is up.
 *
 * The kernel's tcp_bpf_recvmsg() (a socket the sk_msg bypass joined:
 * sockredir, the proxy's skmsg path) waits once: any wakeup of the
 * socket's wait queue ends the wait (sk_wait_event), and with nothing
 * queued it returns EAGAIN, however much of the timeout is left. A
 * reset, a FIN or an ACK that frees send space wakes it (seen on 6.1,
 * 6.12 and 6.18; 7.2's net/ipv4/tcp_bpf.c the same); tcp_recvmsg()
 * waits on until its timeout. The next recv() sees what woke it.
 * recv_early_eagain counts them; recv_waiting_note() says how many, on
 * stderr, at exit (atexit), after stdout's line.
 */
#ifndef ECHOLAB_RECVWAIT_H
#define ECHOLAB_RECVWAIT_H

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

static int recv_early_eagain;

static double recv_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static ssize_t recv_waiting(int fd, void *buf, size_t len, int flags)
{
	double since = recv_now_s();
	ssize_t r;

	for (;;) {
		r = recv(fd, buf, len, flags);
		if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return r;
		/* Half a second short of it: SO_RCVTIMEO's own rounding. */
		if (recv_now_s() - since >= RECV_TIMEOUT_S - 0.5)
			return r;
		recv_early_eagain++;
	}
}

static void recv_waiting_note(void)
{
	fflush(stdout);
	if (recv_early_eagain)
		fprintf(stderr, "note: recv() said EAGAIN %d time(s) before its %d s "
			"were up, and was called again (tcp_bpf_recvmsg: tests/recvwait.h)\n",
			recv_early_eagain, RECV_TIMEOUT_S);
}

#endif
