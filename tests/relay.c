// SPDX-License-Identifier: GPL-2.0
/*
 * relay - both ends of one connection through a proxy, for the proxy's
 * contract (tests/proxy.t): it is the backend (it listens on BACKEND) and
 * the client (it connects to PORT, where the proxy listens), so it sees
 * what each side sent and what the other got, byte for byte.
 *
 *   relay PORT BACKEND fin-client BYTES
 *       the client sends BYTES and shuts down writing; the backend must
 *       get exactly those, then EOF; then the backend sends BYTES back and
 *       closes, and the client must get exactly those, then EOF: a FIN
 *       goes through, and the other direction still flows after it
 *   relay PORT BACKEND fin-backend BYTES
 *       the same, the backend first
 *   relay PORT BACKEND rst-client BYTES
 *       the client sends BYTES and resets once the backend has some: the
 *       backend must see the reset (ECONNRESET), not EOF, not nothing
 *   relay PORT BACKEND rst-backend BYTES
 *       the same the other way
 *   relay PORT BACKEND gone BYTES
 *       the backend closes mid-stream, unread bytes in its socket, and
 *       closes its listener: the client must see the connection end
 *   relay PORT BACKEND down
 *       nothing listens on BACKEND: the client must see the connection
 *       end (EOF or reset), not hang
 *   relay PORT BACKEND early BYTES
 *       the client's BYTES are there before the proxy reaches the backend:
 *       the backend's accept queue is full (backlog 0 and a connection of
 *       our own), so the proxy's SYN is dropped and retried a second
 *       later; the bytes wait in the proxy's socket meanwhile, and nothing
 *       comes after them to wake a relay that missed them. The backend
 *       must get exactly those; then FIN, and the other way, as fin-client
 *   relay PORT BACKEND early-fin BYTES
 *       the same with the client's FIN sent before too: its socket at the
 *       proxy is no longer established when the proxy reaches the backend
 *
 * Each direction has a pattern of its own. Every wait is bounded (an
 * alarm at 3 x TIMEOUT_S): a proxy that never passes a FIN or a reset
 * fails the case instead of hanging the suite. Prints one line saying
 * what it saw; exit status 0 when that was what the case expects, 1 when
 * not, 2 on usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define TIMEOUT_S 10
#define RECV_TIMEOUT_S TIMEOUT_S
#include "recvwait.h"

static unsigned char *pat[2];	/* what the client sends, the backend sends */
static size_t bytes;

static int fail(const char *what)
{
	fprintf(stderr, "relay: %s: %s\n", what, strerror(errno));
	return 1;
}

static void on_alarm(int sig)
{
	static const char msg[] = "relay: stuck for 3 x TIMEOUT_S: the proxy never passed it on\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
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

static void timeouts(int fd)
{
	struct timeval tv = { .tv_sec = TIMEOUT_S };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int listen_on(int port, int backlog)
{
	struct sockaddr_in sa = loopback(port);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, backlog)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int dial(int port)
{
	struct sockaddr_in sa = loopback(port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	timeouts(fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int accept_one(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd >= 0)
		timeouts(fd);
	return fd;
}

static void patterns(void)
{
	size_t i;

	pat[0] = malloc(bytes);
	pat[1] = malloc(bytes);
	if (!pat[0] || !pat[1]) {
		fprintf(stderr, "relay: no memory for %zu bytes\n", bytes);
		exit(1);
	}
	for (i = 0; i < bytes; i++) {
		pat[0][i] = (unsigned char)(i * 131 + (i >> 8));
		pat[1][i] = (unsigned char)(i * 7 + 0x5a + (i >> 11));
	}
}

struct sender {
	pthread_t tid;
	int fd, from;		/* from: 0 the client, 1 the backend */
	bool shut;		/* shutdown(SHUT_WR) once all is sent */
	int err;
};

static void *send_all(void *arg)
{
	struct sender *s = arg;
	size_t off = 0;
	ssize_t n;

	while (off < bytes) {
		n = send(s->fd, pat[s->from] + off, bytes - off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			s->err = errno;
			return NULL;
		}
		off += (size_t)n;
	}
	if (s->shut && shutdown(s->fd, SHUT_WR))
		s->err = errno;
	return NULL;
}

static const char *who(int from)
{
	return from ? "backend" : "client";
}

/*
 * Side FROM sends BYTES on SRC and shuts down writing; DST must get them,
 * exactly, then EOF. 0, or 1 after saying what went wrong.
 */
static int one_way(int src, int dst, int from)
{
	struct sender s = { .fd = src, .from = from, .shut = true };
	unsigned char *got = malloc(bytes + 1);
	size_t n = 0, i;
	ssize_t r;
	int rc = 1;

	if (!got || pthread_create(&s.tid, NULL, send_all, &s))
		return fail("thread");
	while ((r = recv_waiting(dst, got + n, bytes + 1 - n, 0)) > 0)
		n += (size_t)r;
	pthread_join(s.tid, NULL);
	if (s.err) {
		errno = s.err;
		fprintf(stderr, "relay: the %s's send: %s\n", who(from), strerror(errno));
	} else if (r < 0) {
		fprintf(stderr, "relay: the %s got %zu of %zu bytes, then %s instead of EOF\n",
			who(!from), n, bytes, strerror(errno));
	} else if (n != bytes) {
		fprintf(stderr, "relay: the %s got %zu bytes before EOF, not %zu\n",
			who(!from), n, bytes);
	} else {
		for (i = 0; i < bytes && got[i] == pat[from][i]; i++)
			;
		if (i < bytes)
			fprintf(stderr, "relay: the %s's bytes differ from byte %zu on\n",
				who(from), i);
		else
			rc = 0;
	}
	free(got);
	return rc;
}

/* Connects a client through the proxy and accepts the proxy's connection
 * to the backend: fds[0] the client's end, fds[1] the backend's. */
static int pair_up(int port, int lfd, int fds[2])
{
	fds[0] = dial(port);
	if (fds[0] < 0)
		return fail("connect to the proxy");
	fds[1] = accept_one(lfd);
	if (fds[1] < 0)
		return fail("accept the proxy's connection to the backend");
	return 0;
}

static int fin(int port, int lfd, int first)
{
	int fds[2];

	if (pair_up(port, lfd, fds) || one_way(fds[first], fds[!first], first) ||
	    one_way(fds[!first], fds[first], !first))
		return 1;
	printf("fin-%s: %zu bytes each way, each followed by EOF\n", who(first), bytes);
	return 0;
}

/* How a read on FD ends within TIMEOUT_S: 0 EOF, an errno, or ETIMEDOUT
 * (EAGAIN) when nothing came. Bytes are read and counted on the way. */
static int ending(int fd, size_t *read_bytes)
{
	unsigned char buf[65536];
	ssize_t r;

	*read_bytes = 0;
	while ((r = recv_waiting(fd, buf, sizeof(buf), 0)) > 0)
		*read_bytes += (size_t)r;
	if (r == 0)
		return 0;
	return errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
}

static int rst(int port, int lfd, int from)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	unsigned char buf[1];
	size_t n;
	int fds[2], how;

	if (pair_up(port, lfd, fds))
		return 1;
	if (send(fds[from], pat[from], bytes, MSG_NOSIGNAL | MSG_DONTWAIT) <= 0)
		return fail("send");
	/* Some has gone through: the reset comes mid-stream. */
	if (recv_waiting(fds[!from], buf, 1, 0) != 1)
		return fail("recv before the reset");
	setsockopt(fds[from], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fds[from]);
	how = ending(fds[!from], &n);
	if (how != ECONNRESET) {
		fprintf(stderr, "relay: the %s's reset reached the %s as %s, not ECONNRESET (%zu more bytes read)\n",
			who(from), who(!from), how ? strerror(how) : "EOF", n);
		return 1;
	}
	printf("rst-%s: the %s saw ECONNRESET\n", who(from), who(!from));
	return 0;
}

static int gone(int port, int lfd)
{
	size_t n;
	int fds[2], how;

	if (pair_up(port, lfd, fds))
		return 1;
	/* The client's bytes, unread by the backend, which goes. */
	if (send(fds[0], pat[0], bytes, MSG_NOSIGNAL | MSG_DONTWAIT) <= 0)
		return fail("send");
	usleep(100000);
	close(fds[1]);
	close(lfd);
	how = ending(fds[0], &n);
	if (how == ETIMEDOUT) {
		fprintf(stderr, "relay: gone: the backend closed, and the client saw nothing for %d s\n",
			TIMEOUT_S);
		return 1;
	}
	printf("gone: the client saw %s\n", how ? strerror(how) : "EOF");
	return 0;
}

static int down(int port)
{
	size_t n;
	int fd, how;

	fd = dial(port);
	/* The proxy may have reset it already: before connect() returned
	 * (a slow guest), or before the send. */
	if (fd < 0 && errno == ECONNRESET) {
		printf("down: the client saw %s (connecting)\n", strerror(errno));
		return 0;
	}
	if (fd < 0)
		return fail("connect to the proxy");
	if (send(fd, "hello", 5, MSG_NOSIGNAL) != 5) {
		if (errno != ECONNRESET && errno != EPIPE)
			return fail("send");
		printf("down: the client saw %s (sending)\n", strerror(errno));
		return 0;
	}
	how = ending(fd, &n);
	if (how == ETIMEDOUT || n) {
		fprintf(stderr, "relay: down: the client saw %s, %zu bytes, within %d s\n",
			how == ETIMEDOUT ? "nothing" : "data", n, TIMEOUT_S);
		return 1;
	}
	printf("down: the client saw %s\n", how ? strerror(how) : "EOF");
	return 0;
}

static int early(int port, int backend, bool with_fin)
{
	int lfd, filler, fds[2], held;
	size_t i;

	/* A full accept queue: the proxy's SYN is dropped, retried in 1 s. */
	lfd = listen_on(backend, 0);
	if (lfd < 0)
		return fail("listen");
	filler = dial(backend);
	if (filler < 0)
		return fail("connect the filler");
	fds[0] = dial(port);
	if (fds[0] < 0)
		return fail("connect to the proxy");
	for (i = 0; i < bytes;) {
		ssize_t n = send(fds[0], pat[0] + i, bytes - i, MSG_NOSIGNAL);

		if (n < 0)
			return fail("send before the backend is reached");
		i += (size_t)n;
	}
	if (with_fin && shutdown(fds[0], SHUT_WR))
		return fail("shutdown");
	usleep(300000);
	held = accept_one(lfd);	/* the filler's: room for the proxy's retry */
	if (held < 0)
		return fail("accept the filler");
	fds[1] = accept_one(lfd);
	if (fds[1] < 0)
		return fail("accept the proxy's connection to the backend");
	/* The client's bytes (and FIN), all sent before, now arrive; the FIN
	 * now, if not yet. */
	{
		unsigned char *got = malloc(bytes + 1);
		size_t n = 0;
		ssize_t r = 1;

		while (got && n < bytes && (r = recv_waiting(fds[1], got + n, bytes + 1 - n, 0)) > 0)
			n += (size_t)r;
		if (got && n == bytes && !with_fin && shutdown(fds[0], SHUT_WR))
			return fail("shutdown");
		while (got && r > 0 && (r = recv_waiting(fds[1], got + n, bytes + 1 - n, 0)) > 0)
			n += (size_t)r;
		if (!got || r || n != bytes || memcmp(got, pat[0], bytes)) {
			fprintf(stderr, "relay: early: the backend got %zu of %zu bytes%s\n",
				n, bytes, r < 0 ? ", then an error or nothing" :
				n == bytes ? ", but they differ" : "");
			return 1;
		}
		free(got);
	}
	if (one_way(fds[1], fds[0], 1))
		return 1;
	printf("early%s: %zu bytes sent before the proxy reached the backend, all arrived; then %zu back\n",
	       with_fin ? "-fin" : "", bytes, bytes);
	close(filler);
	close(held);
	return 0;
}

int main(int argc, char **argv)
{
	int port, backend, lfd;
	const char *c;

	if (argc < 4 || argc > 5)
		goto usage;
	port = atoi(argv[1]);
	backend = atoi(argv[2]);
	c = argv[3];
	bytes = argc == 5 ? strtoul(argv[4], NULL, 10) : 0;
	if (port <= 0 || backend <= 0 || (strcmp(c, "down") && !bytes))
		goto usage;
	signal(SIGALRM, on_alarm);
	alarm(3 * TIMEOUT_S);
	atexit(recv_waiting_note);
	if (!strcmp(c, "down"))
		return down(port);
	patterns();
	if (!strcmp(c, "early") || !strcmp(c, "early-fin"))
		return early(port, backend, c[5] == '-');
	lfd = listen_on(backend, 16);
	if (lfd < 0)
		return fail("listen on the backend's port");
	if (!strcmp(c, "fin-client"))
		return fin(port, lfd, 0);
	if (!strcmp(c, "fin-backend"))
		return fin(port, lfd, 1);
	if (!strcmp(c, "rst-client"))
		return rst(port, lfd, 0);
	if (!strcmp(c, "rst-backend"))
		return rst(port, lfd, 1);
	if (!strcmp(c, "gone"))
		return gone(port, lfd);
usage:
	fprintf(stderr, "usage: relay PORT BACKEND fin-client|fin-backend|rst-client|rst-backend|gone|early|early-fin BYTES\n"
		"       relay PORT BACKEND down\n");
	return 2;
}
