// SPDX-License-Identifier: GPL-2.0
/*
 * inq - what a receiver is told about bytes waiting for it: poll() and
 * FIONREAD on the client's end of an echo connection.
 *
 *   inq PORT BYTES
 *
 * Connects to 127.0.0.1:PORT, registers the socket with epoll, sends
 * BYTES, then blocks in epoll_wait() until the echo is announced (at most
 * 3 s: a missed wakeup), waits 200 ms for all of it to land, asks poll()
 * (no wait) whether the socket is readable and FIONREAD how much is
 * there, and reads it (2 s timeout), checking every byte. Prints:
 *
 *   epoll=in|timeout epoll_ms=N poll=in|no fionread=N read=N
 *
 * Exit status 0 when every byte came back (whatever poll and FIONREAD
 * said: those are what the caller judges), 1 when not, 2 on usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_BYTES 65536

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
	static char out[MAX_BYTES], in[MAX_BYTES];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 2 };
	struct epoll_event ev = { .events = EPOLLIN }, got_ev;
	struct pollfd pfd;
	struct timespec t0;
	long port, bytes, epoll_ms;
	int fd, ep, one = 1, avail = -1, woken, readable;
	size_t got = 0;
	ssize_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: inq PORT BYTES\n");
		return 2;
	}
	port = strtol(argv[1], NULL, 10);
	bytes = strtol(argv[2], NULL, 10);
	if (port < 1 || port > 65535 || bytes < 1 || bytes > MAX_BYTES) {
		fprintf(stderr, "inq: PORT 1-65535, BYTES 1-%d\n", MAX_BYTES);
		return 2;
	}
	for (long i = 0; i < bytes; i++)
		out[i] = 'a' + i % 26;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		perror("inq: socket");
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("inq: connect");
		return 1;
	}
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		perror("inq: epoll");
		return 1;
	}
	/* Let the server's end join a map before anything is sent. */
	usleep(100000);
	if (send(fd, out, bytes, 0) != bytes) {
		perror("inq: send");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	woken = epoll_wait(ep, &got_ev, 1, 3000);
	epoll_ms = ms_since(&t0);
	usleep(200000);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	readable = poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
	if (ioctl(fd, FIONREAD, &avail))
		perror("inq: FIONREAD");
	while (got < (size_t)bytes) {
		n = recv(fd, in + got, bytes - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	printf("epoll=%s epoll_ms=%ld poll=%s fionread=%d read=%zu\n",
	       woken > 0 ? "in" : "timeout", epoll_ms, readable ? "in" : "no",
	       avail, got);
	close(ep);
	close(fd);
	if (got != (size_t)bytes || memcmp(in, out, bytes)) {
		fprintf(stderr, "inq: %zu of %ld bytes came back%s\n", got,
			bytes, got == (size_t)bytes ? ", not the ones sent" : "");
		return 1;
	}
	return 0;
}
