// SPDX-License-Identifier: GPL-2.0
/*
 * probe - the misbehaving peers the tests need.
 *
 *   probe mute PORT SECONDS      listen on PORT, never accept or read
 *   probe reset PORT BYTES       send BYTES without reading; once the echo
 *                                has begun, reset; print 'reset from port
 *                                N' (N: our port, for the test's proof
 *                                that the server's end was reset too)
 *   probe halfclose PORT BYTES   send BYTES, shut down writing, expect the
 *                                same BYTES back and then EOF
 *   probe hold PORT N SECONDS    hold N idle connections open
 *   probe sendfile PORT BYTES    send BYTES with sendfile() from a file,
 *                                expect them back through recv()
 *   probe splice PORT BYTES      send BYTES with send(), expect them back
 *                                through splice() socket -> pipe
 *   probe splicesend PORT BYTES  send BYTES with splice() pipe -> socket,
 *                                expect them back through recv()
 *   probe fill PORT MAXBYTES     send without reading until the kernel takes
 *                                no more for a second (or MAXBYTES); print
 *                                how much it took and what that cost: TCP's
 *                                memory (/proc/net/sockstat) and MemAvailable
 *   probe nodelay PORT           whether this kernel's accepted sockets
 *                                inherit TCP_NODELAY from their listener: a
 *                                listener on PORT with it, then one
 *                                without; print 'nodelay with=A without=B',
 *                                the accepted socket's option each time
 *   probe nodelay-of PID FD      TCP_NODELAY of descriptor FD of process PID
 *                                (pidfd_getfd, Linux 5.6): 'nodelay=N'
 *
 * Crowds, for the fault tests (each prints 'connected N' once its N
 * connections are up, and ends with one 'MODE key=value...' line):
 *   probe trickle PORT N BYTES MS
 *                                N connections each send a BYTES message one
 *                                byte every MS milliseconds, and expect it
 *                                back exactly
 *   probe noread PORT N MAXBYTES SECONDS
 *                                N connections send up to MAXBYTES each and
 *                                never read, until the kernel takes no more;
 *                                they hold that for SECONDS, then close
 *   probe resets PORT N          N connections reset in each of three
 *                                states: before sending, mid-message, and
 *                                with the server's echo queued
 *
 * The last three check an echo server byte for byte through the kernel's
 * zero-copy paths, which a sockmap bypass may not follow: every byte back,
 * in order, none more, within TIMEOUT_S of the last progress.
 *
 * Every mode that talks to a server ends within 2 x TIMEOUT_S whatever the
 * server does (an alarm), so that a server that never answers or never
 * closes fails one case instead of hanging the suite.
 *
 * Exit status 0 when the probe saw what it expected, 1 when not, 2 on usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_S 10
#define RECV_TIMEOUT_S TIMEOUT_S
#include "recvwait.h"

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

/* What the alarm says: set before it is armed. */
static const char *alarm_msg = "probe: no progress for twice TIMEOUT_S, "
			       "stuck in one system call\n";

static void on_alarm(int sig)
{
	(void)sig;
	/* Only async-signal-safe calls here. */
	if (write(2, alarm_msg, strlen(alarm_msg)) < 0)
		_exit(1);
	_exit(1);
}

/* The whole of a mode within 2 x TIMEOUT_S, whatever the server does. */
static void deadline(const char *msg)
{
	alarm_msg = msg;
	signal(SIGALRM, on_alarm);
	alarm(2 * TIMEOUT_S);
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
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	struct pollfd p;
	ssize_t sent;
	int fd, n;

	deadline("probe: reset: stuck for twice TIMEOUT_S\n");
	fd = dial(port);
	if (fd < 0 || !b)
		return fail("connect");
	pattern(b, bytes);
	/* Part of it may not fit before the server's echo fills our buffer:
	 * that is the point, the reset comes mid-message. */
	sent = send(fd, b, bytes, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (sent < 0 && errno != EAGAIN)
		return fail("send");
	/* The echo has begun: the server is reading and writing this
	 * connection when the reset comes. */
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	n = poll(&p, 1, TIMEOUT_S * 1000);
	if (n < 0)
		return fail("poll");
	if (n == 0) {
		fprintf(stderr, "probe: reset: no echo within %d s of sending "
			"%zd bytes\n", TIMEOUT_S, sent);
		return 1;
	}
	if (getsockname(fd, (struct sockaddr *)&me, &len))
		return fail("getsockname");
	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		return fail("SO_LINGER");
	close(fd);	/* linger 0: RST, not FIN */
	printf("reset from port %d after sending %zd of %zu bytes\n",
	       ntohs(me.sin_port), sent, bytes);
	free(b);
	return 0;
}

static int halfclose(int port, size_t bytes)
{
	unsigned char *b = malloc(bytes), *r = malloc(bytes + 1);
	size_t got = 0;
	ssize_t n;
	int fd;

	/* Each recv below has SO_RCVTIMEO; a server that trickles bytes
	 * and never closes would still keep us here: the deadline. */
	deadline("probe: halfclose: no EOF within twice TIMEOUT_S (the "
		 "server does not close its end)\n");
	fd = dial(port);
	if (fd < 0 || !b || !r)
		return fail("connect");
	pattern(b, bytes);
	if (send(fd, b, bytes, MSG_NOSIGNAL) != (ssize_t)bytes)
		return fail("send");
	if (shutdown(fd, SHUT_WR))
		return fail("shutdown");
	while ((n = recv_waiting(fd, r + got, bytes + 1 - got, 0)) > 0)
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

/*
 * Echo checks through the zero-copy paths. The sender and the receiver
 * share one poll loop on a non-blocking socket: a 1 MiB echo does not fit
 * in the socket buffers, so sending everything before reading would
 * deadlock on its own, bypass or not.
 */
enum via {
	VIA_SOCKET,	/* send() / recv() */
	VIA_SENDFILE,	/* sendfile() from a file holding the pattern */
	VIA_SPLICE,	/* splice() pipe -> socket / socket -> pipe */
};

struct echo {
	enum via tx, rx;
	const char *rx_name;	/* the receiving call, for the messages */
	int fd;			/* the connection */
	int file;		/* VIA_SENDFILE: the pattern's file */
	int tx_pipe[2];		/* VIA_SPLICE sending: pattern -> socket */
	int rx_pipe[2];		/* VIA_SPLICE receiving: socket -> us */
	const unsigned char *b;	/* what we send */
	unsigned char *r;	/* what came back; room for a surplus */
	size_t bytes, room;
	size_t queued;		/* VIA_SPLICE sending: written into tx_pipe */
	size_t sent, got;
	unsigned long idle;	/* readable, yet the receive found nothing */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A file holding the pattern, with no name left behind. */
static int pattern_file(const unsigned char *b, size_t bytes)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	size_t off = 0;
	ssize_t n;
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* O_TMPFILE needs file system support (not ramfs). */
		snprintf(path, sizeof(path), "%s/probe-XXXXXX", dir);
		fd = mkstemp(path);
		if (fd < 0)
			return -1;
		unlink(path);
	}
	while (off < bytes) {
		n = write(fd, b + off, bytes - off);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	return fd;
}

/* Some more bytes out; 0 when the socket is full, -1 on error. */
static int echo_send(struct echo *e)
{
	size_t left = e->bytes - e->sent;
	ssize_t n;

	switch (e->tx) {
	case VIA_SOCKET:
		n = send(e->fd, e->b + e->sent, left, MSG_NOSIGNAL);
		break;
	case VIA_SENDFILE: {
		off_t off = (off_t)e->sent;

		n = sendfile(e->fd, e->file, &off, left);
		break;
	}
	case VIA_SPLICE:
		/* Keep the pipe full; what splice takes from it is sent. */
		if (e->queued < e->bytes) {
			n = write(e->tx_pipe[1], e->b + e->queued,
				  e->bytes - e->queued);
			if (n > 0)
				e->queued += (size_t)n;
			else if (n < 0 && errno != EAGAIN)
				return -1;
		}
		n = splice(e->tx_pipe[0], NULL, e->fd, NULL, e->queued - e->sent,
			   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	e->sent += (size_t)n;
	return n > 0;
}

/* Some bytes in; 0 when none were there, -1 on error, -2 on early EOF. */
static int echo_recv(struct echo *e)
{
	size_t left = e->room - e->got, off;
	ssize_t n, m;

	if (e->rx == VIA_SOCKET) {
		n = recv(e->fd, e->r + e->got, left, 0);
	} else {
		/* A pipe holds 64 KiB by default: ask for no more. It is
		 * drained below after every call, so it is empty here and
		 * EAGAIN means the socket gave nothing, never a full pipe. */
		if (left > 65536)
			left = 65536;
		n = splice(e->fd, NULL, e->rx_pipe[1], NULL, left,
			   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		for (off = 0; n > 0 && off < (size_t)n; off += (size_t)m) {
			m = read(e->rx_pipe[0], e->r + e->got + off,
				 (size_t)n - off);
			if (m <= 0) {
				fprintf(stderr, "probe: read from the pipe: %s\n",
					m ? strerror(errno) : "EOF");
				return -2;
			}
		}
	}
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	if (n == 0) {
		fprintf(stderr, "probe: %s: EOF after %zu of %zu bytes\n",
			e->rx_name, e->got, e->bytes);
		return -2;
	}
	e->got += (size_t)n;
	return 1;
}

/* How many bytes recv() would see that our receive call did not. */
static ssize_t waiting_for_recv(struct echo *e)
{
	return recv(e->fd, e->r + e->got, e->room - e->got,
		    MSG_PEEK | MSG_DONTWAIT);
}

/* Offset of the first byte of r that is not the pattern's, or n. */
static size_t first_bad(const unsigned char *b, const unsigned char *r,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != r[i])
			break;
	return i;
}

static int echo_run(struct echo *e)
{
	double last = now_s(), surplus_until = 0;
	struct pollfd p = { .fd = e->fd };
	size_t bad;
	ssize_t w;
	int rc;

	for (;;) {
		double left = last + TIMEOUT_S - now_s();
		int progress = 0;

		if (e->got >= e->bytes) {
			/* All back: a short wait shows any surplus. */
			if (!surplus_until)
				surplus_until = now_s() + 0.2;
			left = surplus_until - now_s();
			if (left <= 0)
				break;
		} else if (left <= 0) {
			w = waiting_for_recv(e);
			fprintf(stderr, "probe: %s: no data after %d s; %zu of "
				"%zu bytes arrived (%zu sent)", e->rx_name,
				TIMEOUT_S, e->got, e->bytes, e->sent);
			if (e->rx != VIA_SOCKET && w > 0)
				fprintf(stderr, "; recv(MSG_PEEK) sees %zd more "
					"waiting", w);
			if (e->idle)
				fprintf(stderr, "; poll() said readable %lu "
					"times when %s found nothing",
					e->idle, e->rx_name);
			bad = first_bad(e->b, e->r, e->got);
			if (bad < e->got)
				fprintf(stderr, "; and the bytes that came "
					"differ from offset %zu", bad);
			fprintf(stderr, "\n");
			return 1;
		}
		p.events = POLLIN | (e->sent < e->bytes ? POLLOUT : 0);
		if (poll(&p, 1, (int)(left * 1000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			return fail("poll");
		}
		if (p.revents & POLLOUT) {
			rc = echo_send(e);
			if (rc < 0)
				return fail(e->tx == VIA_SOCKET ? "send" :
					    e->tx == VIA_SENDFILE ? "sendfile" :
					    "splice to the socket");
			progress |= rc;
		}
		if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
			rc = echo_recv(e);
			if (rc == -2)
				return 1;	/* said why already */
			if (rc < 0)
				return fail(e->rx_name);
			if (!rc)
				e->idle++;
			progress |= rc;
		}
		if (progress) {
			last = now_s();
			alarm(2 * TIMEOUT_S);
		} else if (p.revents) {
			/* Readable but nothing to receive (the case under
			 * test, for splice): do not spin. */
			usleep(1000);
		}
	}
	alarm(0);

	if (e->got > e->bytes) {
		fprintf(stderr, "probe: %s: %zu bytes came back for %zu sent, "
			"%zu too many\n", e->rx_name, e->got, e->bytes,
			e->got - e->bytes);
		return 1;
	}
	bad = first_bad(e->b, e->r, e->bytes);
	if (bad < e->bytes) {
		fprintf(stderr, "probe: %s: %zu bytes came back, content "
			"differs from offset %zu (sent 0x%02x, got 0x%02x)\n",
			e->rx_name, e->got, bad, e->b[bad], e->r[bad]);
		return 1;
	}
	return 0;
}

static int echo_via(int port, size_t bytes, enum via tx, enum via rx)
{
	unsigned char *b = malloc(bytes ? bytes : 1);
	struct echo e = {
		.tx = tx, .rx = rx,
		.rx_name = rx == VIA_SOCKET ? "recv" : "splice",
		.file = -1,
		.tx_pipe = { -1, -1 }, .rx_pipe = { -1, -1 },
		.b = b, .bytes = bytes,
		/* Room for a surplus, so that one shows as such. */
		.room = bytes + 65536,
	};
	int rc;

	e.r = malloc(e.room);
	if (!b || !e.r)
		return fail("malloc");
	pattern(b, bytes);
	/* A peer gone mid-splice must fail the call, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	deadline(alarm_msg);	/* re-armed on every progress */
	if (tx == VIA_SENDFILE) {
		e.file = pattern_file(b, bytes);
		if (e.file < 0)
			return fail("temporary file");
	}
	if (tx == VIA_SPLICE && pipe2(e.tx_pipe, O_NONBLOCK | O_CLOEXEC))
		return fail("pipe");
	if (rx == VIA_SPLICE && pipe2(e.rx_pipe, O_NONBLOCK | O_CLOEXEC))
		return fail("pipe");
	e.fd = dial(port);
	if (e.fd < 0)
		return fail("connect");
	/* splice() on a blocking socket waits for the socket whatever its
	 * flags say; O_NONBLOCK leaves all waiting to poll(). */
	if (fcntl(e.fd, F_SETFL, fcntl(e.fd, F_GETFL) | O_NONBLOCK))
		return fail("fcntl");
	rc = echo_run(&e);
	close(e.fd);
	free(e.r);
	free(b);
	return rc;
}

/* A number after KEY in FILE ("mem 12" of sockstat's TCP line...), or -1. */
static long read_field(const char *file, const char *line_prefix,
		       const char *key)
{
	char line[512], *p;
	long v = -1;
	FILE *f = fopen(file, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, line_prefix, strlen(line_prefix)))
			continue;
		p = strstr(line, key);
		if (p)
			v = strtol(p + strlen(key), NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

/*
 * How much a sender can push at a peer that never reads: TCP stops it at
 * the peer's receive window plus its own send buffer; a bypass that moves
 * bytes straight to the peer's queue may not.
 */
static int fill(int port, size_t max)
{
	static unsigned char chunk[64 << 10];
	long mem0, mem1, avail0, avail1;
	const char *stop = "full";	/* why the sending stopped */
	struct pollfd pfd;
	size_t sent = 0;
	ssize_t n;
	int fd = dial(port);

	if (fd < 0)
		return fail("connect");
	pattern(chunk, sizeof(chunk));
	mem0 = read_field("/proc/net/sockstat", "TCP:", " mem ");
	avail0 = read_field("/proc/meminfo", "MemAvailable:", ":");
	pfd.fd = fd;
	pfd.events = POLLOUT;
	while (sent < max) {
		n = send(fd, chunk, sizeof(chunk) < max - sent ?
			 sizeof(chunk) : max - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN) {
			stop = strerror(errno);
			break;
		}
		if (poll(&pfd, 1, 1000) == 0)
			break;	/* full: a second without room */
	}
	if (sent >= max)
		stop = "max";
	mem1 = read_field("/proc/net/sockstat", "TCP:", " mem ");
	avail1 = read_field("/proc/meminfo", "MemAvailable:", ":");
	printf("accepted=%zu tcp_mem_kib=%ld memavailable_drop_kib=%ld stop=%s\n",
	       sent, (mem1 - mem0) * (sysconf(_SC_PAGESIZE) / 1024),
	       avail0 - avail1, stop);
	close(fd);
	return 0;
}

/* ---- crowds -------------------------------------------------------------- */

/* N connections, each made with dial(); NULL (and said why) on failure. */
static int *dial_many(int port, int n, const char *mode)
{
	int *fds = calloc((size_t)n, sizeof(*fds));

	if (!fds) {
		fail("calloc");
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		fds[i] = dial(port);
		if (fds[i] < 0) {
			fprintf(stderr, "probe: %s: connection %d of %d: "
				"connect: %s\n", mode, i + 1, n, strerror(errno));
			return NULL;
		}
		if (fcntl(fds[i], F_SETFL, O_NONBLOCK)) {
			fail("fcntl");
			return NULL;
		}
	}
	/* The crowd is there: the test measures the server now. */
	printf("connected %d\n", n);
	fflush(stdout);
	return fds;
}

/* Reads what the trickle's connections have back, checking every byte. */
static int trickle_read(int *fds, size_t *got, int n, size_t bytes,
			const unsigned char *want, int timeout_ms,
			size_t *done)
{
	unsigned char buf[4096];
	struct pollfd *p = calloc((size_t)n, sizeof(*p));
	int ready;

	if (!p)
		return fail("calloc");
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){
			.fd = got[i] < bytes ? fds[i] : -1, .events = POLLIN };
	ready = poll(p, (nfds_t)n, timeout_ms);
	for (int i = 0; ready > 0 && i < n; i++) {
		ssize_t r;

		if (!p[i].revents)
			continue;
		r = recv(fds[i], buf, sizeof(buf), 0);
		if (r < 0 && errno == EAGAIN)
			continue;
		if (r <= 0 || got[i] + (size_t)r > bytes ||
		    memcmp(buf, want + got[i], (size_t)r)) {
			fprintf(stderr, "probe: trickle: connection %d: %s "
				"after %zu of %zu bytes\n", i + 1,
				r < 0 ? strerror(errno) : r == 0 ? "EOF" :
				"bytes that were not sent", got[i], bytes);
			free(p);
			return 1;
		}
		got[i] += (size_t)r;
		if (got[i] == bytes)
			(*done)++;
	}
	free(p);
	return ready < 0 && errno != EINTR ? fail("poll") : 0;
}

/*
 * A slow sender: the server must hold N half-received messages without
 * blocking on any of them, and echo each byte as it comes.
 */
static int trickle(int port, int n, size_t bytes, int ms)
{
	unsigned char *want = malloc(bytes);
	size_t *got = calloc((size_t)n, sizeof(*got)), done = 0;
	double start = now_s(), last;
	int *fds;

	if (!want || !got || n < 1 || bytes < 1 || ms < 1)
		return fail("trickle: N, BYTES and MS must be positive");
	deadline("probe: trickle: not done in its time plus twice TIMEOUT_S\n");
	alarm((unsigned int)(bytes * (size_t)ms / 1000) + 2 * TIMEOUT_S);
	pattern(want, bytes);
	fds = dial_many(port, n, "trickle");
	if (!fds)
		return 1;
	for (size_t k = 0; k < bytes; k++) {
		double next = start + (double)(k + 1) * ms / 1000;

		for (int i = 0; i < n; i++)
			if (send(fds[i], want + k, 1, MSG_NOSIGNAL) != 1)
				return fail("trickle: send");
		while (now_s() < next)
			if (trickle_read(fds, got, n, bytes, want,
					 (int)((next - now_s()) * 1000) + 1, &done))
				return 1;
	}
	last = now_s();
	while (done < (size_t)n && now_s() - last < TIMEOUT_S) {
		size_t before = done;

		if (trickle_read(fds, got, n, bytes, want, 100, &done))
			return 1;
		if (done > before)
			last = now_s();
	}
	if (done < (size_t)n) {
		fprintf(stderr, "probe: trickle: %zu of %d connections had "
			"their whole echo %d s after the last byte\n", done, n,
			TIMEOUT_S);
		return 1;
	}
	printf("trickle connections=%d bytes=%zu interval_ms=%d echoed=%zu "
	       "seconds=%.1f\n", n, bytes, ms, done, now_s() - start);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	free(got);
	free(want);
	return 0;
}

/*
 * Clients that send and never read: the echo piles up in their receive
 * queues, then in the server's send buffers. A server that keeps reading
 * regardless grows without bound; one that stops reading pushes back on
 * the senders through TCP's window (a bypass may not: see ebpf-echo).
 */
static int noread(int port, int n, size_t max, int seconds)
{
	static unsigned char chunk[64 << 10];
	size_t *sent = calloc((size_t)n, sizeof(*sent)), total = 0;
	double last;
	int *fds, full = 0;

	if (!sent || n < 1)
		return fail("noread: N must be positive");
	deadline("probe: noread: stuck for twice TIMEOUT_S\n");
	alarm((unsigned int)seconds + 2 * TIMEOUT_S);
	pattern(chunk, sizeof(chunk));
	fds = dial_many(port, n, "noread");
	if (!fds)
		return 1;
	/* Rounds over every connection until a second passes without the
	 * kernel taking another byte from any of them. */
	last = now_s();
	while (now_s() - last < 1) {
		for (int i = 0; i < n; i++) {
			size_t want = max - sent[i];
			ssize_t r;

			if (!want)
				continue;
			r = send(fds[i], chunk, want < sizeof(chunk) ?
				 want : sizeof(chunk), MSG_NOSIGNAL);
			if (r > 0) {
				sent[i] += (size_t)r;
				total += (size_t)r;
				last = now_s();
			} else if (r < 0 && errno != EAGAIN) {
				fprintf(stderr, "probe: noread: connection %d: "
					"send: %s after %zu bytes\n", i + 1,
					strerror(errno), sent[i]);
				return 1;
			}
		}
		usleep(10000);
	}
	for (int i = 0; i < n; i++)
		full += sent[i] < max;
	printf("noread connections=%d sent_bytes=%zu at_max=%d blocked=%d\n",
	       n, total, n - full, full);
	fflush(stdout);
	sleep((unsigned int)seconds);
	for (int i = 0; i < n; i++)
		close(fds[i]);	/* unread data: the kernel resets them */
	free(fds);
	free(sent);
	return 0;
}

/* Aborts a connection: SO_LINGER 0, so close() sends RST, not FIN. */
static int abort_conn(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		return fail("SO_LINGER");
	return close(fd) ? fail("close") : 0;
}

/*
 * Resets in each state a connection's server end can be in: accepted and
 * idle, holding part of a message, and with its echo queued towards us
 * (we never read). Each round connects anew, so a server that died or
 * stopped accepting fails the connect.
 */
static int resets(int port, int n)
{
	static unsigned char b[1 << 20];
	struct pollfd p;
	int fd, counts[3] = { 0 };

	deadline("probe: resets: stuck for twice TIMEOUT_S\n");
	pattern(b, sizeof(b));
	for (int i = 0; i < n; i++) {
		alarm(2 * TIMEOUT_S);
		/* before sending */
		fd = dial(port);
		if (fd < 0 || abort_conn(fd))
			return fail("resets: before sending: connect");
		counts[0]++;
		/* mid-message: half of 64 KiB sent, the rest never comes */
		fd = dial(port);
		if (fd < 0 || send(fd, b, 32 << 10, MSG_NOSIGNAL) < 0 ||
		    abort_conn(fd))
			return fail("resets: mid-message");
		counts[1]++;
		/* echo queued: as much of 1 MiB as the kernel takes, then
		 * the reset once the echo has begun to come back */
		fd = dial(port);
		if (fd < 0)
			return fail("resets: echo queued: connect");
		if (send(fd, b, sizeof(b), MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
		    errno != EAGAIN)
			return fail("resets: echo queued: send");
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&p, 1, TIMEOUT_S * 1000) != 1) {
			fprintf(stderr, "probe: resets: round %d: no echo "
				"within %d s\n", i + 1, TIMEOUT_S);
			return 1;
		}
		if (abort_conn(fd))
			return 1;
		counts[2]++;
	}
	printf("resets before_sending=%d mid_message=%d echo_queued=%d\n",
	       counts[0], counts[1], counts[2]);
	return 0;
}

/* The accepted socket's TCP_NODELAY, behind a listener with it set to on;
 * -1 on failure. */
static int accepted_nodelay(int port, int on)
{
	struct sockaddr_in sa = loopback(port);
	int lfd, cfd = -1, afd = -1, one = 1, val = -1;
	socklen_t len = sizeof(val);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		return -1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (setsockopt(lfd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		goto out;
	cfd = dial(port);
	if (cfd < 0)
		goto out;
	afd = accept(lfd, NULL, NULL);
	if (afd < 0 || getsockopt(afd, IPPROTO_TCP, TCP_NODELAY, &val, &len))
		val = -1;
out:
	if (afd >= 0)
		close(afd);
	if (cfd >= 0)
		close(cfd);
	close(lfd);
	return val;
}

static int nodelay(int port)
{
	int with = accepted_nodelay(port, 1), without;

	without = accepted_nodelay(port, 0);
	if (with < 0 || without < 0)
		return fail("nodelay: listen, connect or accept");
	printf("nodelay with=%d without=%d\n", with != 0, without != 0);
	return 0;
}

static int nodelay_of(int pid, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), copy, val;
	socklen_t len = sizeof(val);

	if (pidfd < 0)
		return fail("pidfd_open");
	copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	if (copy < 0)
		return fail("pidfd_getfd");
	if (getsockopt(copy, IPPROTO_TCP, TCP_NODELAY, &val, &len)) {
		close(copy);
		return fail("getsockopt TCP_NODELAY");
	}
	close(copy);
	printf("nodelay=%d\n", val != 0);
	return 0;
}

int main(int argc, char **argv)
{
	atexit(recv_waiting_note);
	if (argc == 4 && !strcmp(argv[1], "mute"))
		return mute(atoi(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "reset"))
		return reset(atoi(argv[2]), strtoul(argv[3], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "halfclose"))
		return halfclose(atoi(argv[2]), strtoul(argv[3], NULL, 10));
	if (argc == 5 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "sendfile"))
		return echo_via(atoi(argv[2]), strtoul(argv[3], NULL, 10),
				VIA_SENDFILE, VIA_SOCKET);
	if (argc == 4 && !strcmp(argv[1], "splice"))
		return echo_via(atoi(argv[2]), strtoul(argv[3], NULL, 10),
				VIA_SOCKET, VIA_SPLICE);
	if (argc == 4 && !strcmp(argv[1], "splicesend"))
		return echo_via(atoi(argv[2]), strtoul(argv[3], NULL, 10),
				VIA_SPLICE, VIA_SOCKET);
	if (argc == 4 && !strcmp(argv[1], "fill"))
		return fill(atoi(argv[2]), strtoul(argv[3], NULL, 10));
	if (argc == 6 && !strcmp(argv[1], "trickle"))
		return trickle(atoi(argv[2]), atoi(argv[3]),
			       strtoul(argv[4], NULL, 10), atoi(argv[5]));
	if (argc == 6 && !strcmp(argv[1], "noread"))
		return noread(atoi(argv[2]), atoi(argv[3]),
			      strtoul(argv[4], NULL, 10), atoi(argv[5]));
	if (argc == 4 && !strcmp(argv[1], "resets"))
		return resets(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "nodelay"))
		return nodelay(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "nodelay-of"))
		return nodelay_of(atoi(argv[2]), atoi(argv[3]));

	fprintf(stderr, "usage: probe mute PORT SECONDS | reset PORT BYTES | "
		"halfclose PORT BYTES | hold PORT N SECONDS |\n"
		"       sendfile PORT BYTES | splice PORT BYTES | "
		"splicesend PORT BYTES | fill PORT MAXBYTES |\n"
		"       trickle PORT N BYTES MS | noread PORT N MAXBYTES SECONDS |"
		" resets PORT N |\n"
		"       nodelay PORT | nodelay-of PID FD\n");
	return 2;
}
