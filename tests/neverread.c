// SPDX-License-Identifier: GPL-2.0
/*
 * neverread - a client that sends as fast as the kernel takes it and never
 * reads: how much does the server's side let it push?
 *
 *   neverread PORT SECONDS CAP_BYTES HOLD_SECONDS
 *
 * Connects to 127.0.0.1:PORT, then for SECONDS writes 64 KiB at a time
 * into a non-blocking socket, waiting in poll() whenever the kernel takes
 * nothing more. It stops early once CAP_BYTES were accepted or
 * MemAvailable (/proc/meminfo) fell by more than CAP_BYTES, so that a
 * server without flow control cannot hurt the machine. Then it prints
 *
 *   neverread sent=N memavail_drop_kb=N elapsed_ms=N stopped=time|cap|memory
 *
 * (memavail_drop_kb: the largest fall seen while sending and 200 ms after,
 * against the value before connecting), holds the connection open, still
 * unread, for HOLD_SECONDS (the caller serves another client meanwhile),
 * and closes it. Exit status 0 when it ran, 1 on a socket error, 2 on
 * usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 << 10)

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* MemAvailable in KiB, -1 when it cannot be read. */
static long long mem_available_kb(void)
{
	char line[256];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long long parse(const char *s, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long long port, secs, cap, hold, sent = 0, mem0, mem, drop = 0;
	long long t0, deadline, next_look = 0;
	const char *stopped = "time";
	struct pollfd pfd;
	int fd;
	ssize_t n;

	if (argc != 5 || (port = parse(argv[1], 65535)) <= 0 ||
	    (secs = parse(argv[2], 3600)) < 0 || (cap = parse(argv[3], 1LL << 40)) <= 0 ||
	    (hold = parse(argv[4], 3600)) < 0) {
		fprintf(stderr, "usage: neverread PORT SECONDS CAP_BYTES HOLD_SECONDS\n");
		return 2;
	}
	memset(buf, 'n', sizeof(buf));
	mem0 = mem_available_kb();
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		perror("neverread: socket");
		return 1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
		perror("neverread: connect");
		return 1;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, 5000) != 1 || (pfd.revents & (POLLERR | POLLHUP))) {
		fprintf(stderr, "neverread: connect to port %lld failed\n", port);
		return 1;
	}

	t0 = now_ms();
	deadline = t0 + secs * 1000;
	while (now_ms() < deadline) {
		n = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (n > 0) {
			sent += n;
		} else if (n < 0 && errno == EAGAIN) {
			pfd.revents = 0;
			poll(&pfd, 1, 50);
		} else if (n < 0 && errno != EINTR) {
			perror("neverread: send");
			return 1;
		}
		if (now_ms() >= next_look) {	/* every 10 ms: cheap enough */
			next_look = now_ms() + 10;
			mem = mem_available_kb();
			if (mem0 > 0 && mem > 0 && mem0 - mem > drop)
				drop = mem0 - mem;
		}
		if (sent >= cap) {
			stopped = "cap";
			break;
		}
		if (drop * 1024 > cap) {
			stopped = "memory";
			break;
		}
	}
	/* What the kernel does with the last writes shows a moment later. */
	usleep(200 * 1000);
	mem = mem_available_kb();
	if (mem0 > 0 && mem > 0 && mem0 - mem > drop)
		drop = mem0 - mem;
	printf("neverread sent=%lld memavail_drop_kb=%lld elapsed_ms=%lld stopped=%s\n",
	       sent, drop, now_ms() - t0, stopped);
	fflush(stdout);
	sleep(hold);
	close(fd);
	return 0;
}
