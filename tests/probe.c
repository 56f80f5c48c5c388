// SPDX-License-Identifier: GPL-2.0
/*
 * probe - the misbehaving peers the tests need.
 *
 *   probe mute PORT SECONDS      listen on PORT, never accept or read
 *   probe reset PORT BYTES       send BYTES without reading, then reset
 *   probe halfclose PORT BYTES   send BYTES, shut down writing, expect the
 *                                same BYTES back and then EOF
 *   probe hold PORT N SECONDS    hold N idle connections open
 *
 * Exit status 0 when the probe saw what it expected, 1 when not, 2 on usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define TIMEOUT_S 10

static int fail(const char *what)
{
	fprintf(stderr, "probe: %s: %s\n", what, strerror(errno));
	return 1;
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((unsigned short)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	return sa;
}

static int dial(int port)
{
	struct sockaddr_in sa = loopback(port);
	struct timeval tv = { .tv_sec = TIMEOUT_S };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void pattern(unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 131 + (i >> 8));
}

static int mute(int port, int seconds)
{
	struct sockaddr_in sa = loopback(port);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4096))
		return fail("listen");
	printf("listening\n");
	fflush(stdout);
	sleep((unsigned int)seconds);
	return 0;
}

static int reset(int port, size_t bytes)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	unsigned char *b = malloc(bytes);
	int fd = dial(port);

	if (fd < 0 || !b)
		return fail("connect");
	pattern(b, bytes);
	/* Part of it may not fit before the server's echo fills our buffer:
	 * that is the point, the reset comes mid-message. */
	if (send(fd, b, bytes, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
	    errno != EAGAIN)
		return fail("send");
	usleep(20000);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);	/* linger 0: RST, not FIN */
	free(b);
	return 0;
}

static int halfclose(int port, size_t bytes)
{
	unsigned char *b = malloc(bytes), *r = malloc(bytes + 1);
	size_t got = 0;
	ssize_t n;
	int fd = dial(port);

	if (fd < 0 || !b || !r)
		return fail("connect");
	pattern(b, bytes);
	if (send(fd, b, bytes, MSG_NOSIGNAL) != (ssize_t)bytes)
		return fail("send");
	if (shutdown(fd, SHUT_WR))
		return fail("shutdown");
	while ((n = recv(fd, r + got, bytes + 1 - got, 0)) > 0)
		got += (size_t)n;
	if (n < 0)
		return fail("recv (no EOF after the echo)");
	if (got != bytes || memcmp(b, r, bytes)) {
		fprintf(stderr, "probe: echo after half-close: %zu of %zu bytes%s\n",
			got, bytes, got == bytes ? ", content differs" : "");
		return 1;
	}
	close(fd);
	return 0;
}

static int hold(int port, int n, int seconds)
{
	int i;

	for (i = 0; i < n; i++)
		if (dial(port) < 0)
			return fail("connect");
	printf("holding %d\n", n);
	fflush(stdout);
	sleep((unsigned int)seconds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "mute"))
		return mute(atoi(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "reset"))
		return reset(atoi(argv[2]), strtoul(argv[3], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "halfclose"))
		return halfclose(atoi(argv[2]), strtoul(argv[3], NULL, 10));
	if (argc == 5 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));

	fprintf(stderr, "usage: probe mute PORT SECONDS | reset PORT BYTES | "
		"halfclose PORT BYTES | hold PORT N SECONDS\n");
	return 2;
}
