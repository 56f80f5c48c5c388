// SPDX-License-Identifier: GPL-2.0
/*
 * spin-echo - an echo server with a known cost: it burns SPIN_US
 * microseconds of its own CPU time for every SIZE bytes it echoes, so
 * that bench's CPU per echo can be checked against a figure known in
 * advance (tests/window.t's cpu-known case); or, with a FAULT, an echo
 * that goes wrong in one known way (tests/stream.t):
 *
 *   spin-echo PORT SIZE SPIN_US [sink | flip OFFSET | short BYTES | repeat OFFSET]
 *
 *   sink          reads and never writes; when a connection closes it
 *                 prints "closed bytes=N", N the bytes it read from it
 *   flip OFFSET   echoes, but the byte at OFFSET of each connection's
 *                 stream comes back with its low bit flipped
 *   short BYTES   echoes the first BYTES of each connection, then ends
 *                 its side (shutdown for writing: the client reads EOF)
 *                 and reads on, discarding
 *   repeat OFFSET echoes, but the REPEAT_BYTES bytes before OFFSET of each
 *                 connection's stream come back twice, the second time
 *                 right after the first: what a receive path that hands
 *                 on a retransmission's old bytes again does
 *
 * Listens on 127.0.0.1:PORT, one thread, epoll over every connection.
 * For each read it spins, on CLOCK_THREAD_CPUTIME_ID, SPIN_US for every
 * whole SIZE bytes read since the connection's last spin (a read that
 * holds two messages costs two spins), then writes the bytes back
 * (blocking writes: a test server, echoing a few messages at a time).
 * Prints "ready" once listening; runs until killed. Exit status 1 when it
 * cannot listen, 2 on usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS	1024
#define BUF_BYTES	65536
#define REPEAT_BYTES	1000

static long pending[MAX_CONNS];	/* bytes read toward the next spin, per fd */
static long long seen[MAX_CONNS];	/* bytes read from each fd before this read */

enum fault { NONE, SINK, FLIP, SHORT, REPEAT };
static enum fault fault;
static long long fault_at;		/* flip's and repeat's OFFSET, short's BYTES */
static char repeated[MAX_CONNS][REPEAT_BYTES];	/* repeat's, per fd */

static long thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Burns us microseconds of this thread's CPU time (not wall time: time
 * spent preempted does not count). */
static void spin(long us)
{
	long end = thread_ns() + us * 1000L;

	while (thread_ns() < end)
		;
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1024)) {
		fprintf(stderr, "spin-echo: cannot listen on 127.0.0.1:%d: %s\n",
			port, strerror(errno));
		return -1;
	}
	return fd;
}

/* 0 once all len bytes at p are written, -1 on an error. */
static int write_all(int fd, const char *p, ssize_t len)
{
	ssize_t w;

	for (; len > 0; p += w, len -= w) {
		w = write(fd, p, len);
		if (w < 0)
			return -1;
	}
	return 0;
}

/* Echoes what fd holds, spinning per whole message (or does the fault);
 * 0, or -1 when the connection is done. */
static int echo(int fd, long size, long spin_us)
{
	static char buf[BUF_BYTES];
	ssize_t n = read(fd, buf, sizeof(buf)), off = 0;
	long long from = seen[fd];

	if (n <= 0) {
		if (fault == SINK) {
			printf("closed bytes=%lld\n", seen[fd]);
			fflush(stdout);
		}
		return -1;
	}
	seen[fd] += n;
	if (fault == SINK || (fault == SHORT && from >= fault_at))
		return 0;
	if (fault == FLIP && fault_at >= from && fault_at < from + n)
		buf[fault_at - from] ^= 1;
	if (fault == SHORT && from + n >= fault_at)
		n = (ssize_t)(fault_at - from);
	if (fault == REPEAT) {
		long long lo = fault_at - REPEAT_BYTES;
		long long a = from > lo ? from : lo;
		long long b = from + n < fault_at ? from + n : fault_at;

		if (a < b)
			memcpy(repeated[fd] + (a - lo), buf + (a - from), b - a);
	}
	pending[fd] += n;
	for (; pending[fd] >= size; pending[fd] -= size)
		spin(spin_us);
	if (fault == REPEAT && fault_at > from && fault_at <= from + n) {
		off = fault_at - from;
		if (write_all(fd, buf, off) || write_all(fd, repeated[fd], REPEAT_BYTES))
			return -1;
	}
	if (write_all(fd, buf + off, n - off))
		return -1;
	if (fault == SHORT && seen[fd] >= fault_at)
		shutdown(fd, SHUT_WR);
	return 0;
}

/* The optional FAULT arguments; false when they are not one. */
static bool parse_fault(int argc, char **argv)
{
	if (argc == 4)
		return true;
	if (argc == 5 && !strcmp(argv[4], "sink"))
		fault = SINK;
	else if (argc == 6 && !strcmp(argv[4], "flip"))
		fault = FLIP;
	else if (argc == 6 && !strcmp(argv[4], "short"))
		fault = SHORT;
	else if (argc == 6 && !strcmp(argv[4], "repeat"))
		fault = REPEAT;
	else
		return false;
	fault_at = argc == 6 ? atoll(argv[5]) : 0;
	return fault == SINK || (fault_at > 0 && (fault != REPEAT || fault_at >= REPEAT_BYTES));
}

int main(int argc, char **argv)
{
	struct epoll_event ev, evs[64];
	long size, spin_us;
	int port, lfd, ep, i, n;

	if (argc < 4 || (port = atoi(argv[1])) <= 0 ||
	    (size = atol(argv[2])) <= 0 || (spin_us = atol(argv[3])) < 0 ||
	    !parse_fault(argc, argv)) {
		fprintf(stderr, "usage: spin-echo PORT SIZE SPIN_US [sink | flip OFFSET | short BYTES | repeat OFFSET]\n");
		return 2;
	}
	lfd = listen_on(port);
	ep = epoll_create1(0);
	if (lfd < 0 || ep < 0)
		return 1;
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		n = epoll_wait(ep, evs, 64, -1);
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int c = accept(lfd, NULL, NULL);

				if (c < 0)
					continue;
				if (c >= MAX_CONNS) {
					close(c);
					continue;
				}
				pending[c] = 0;
				seen[c] = 0;
				ev.events = EPOLLIN;
				ev.data.fd = c;
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
			} else if (echo(fd, size, spin_us)) {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				close(fd);
			}
		}
	}
}
