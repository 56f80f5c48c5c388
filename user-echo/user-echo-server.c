// SPDX-License-Identifier: GPL-2.0
/*
 * user-echo-server - the classic userspace TCP echo server.
 *
 * Each worker thread owns a listening socket (SO_REUSEPORT spreads new
 * connections across them) and an epoll loop over its connections. Sockets
 * are non-blocking.
 *
 * Buffers follow the traffic. A worker reads each socket into one buffer
 * of its own (--buffer-size, 256 KiB), so one recv takes what the socket
 * holds, a 64-byte message or most of a 1 MiB one, and sends it straight
 * back from there. Only what a send could not take is copied into the
 * connection, which then stops reading until that is sent (EPOLLOUT): a
 * connection holds at most one read's worth, and nothing while idle, so
 * memory stays bounded and bytes stay in order. Clients that do not read
 * could still make a worker hold a read's worth each, so the worker keeps
 * a budget (PENDING_BUDGET reads' worth in all): past it, reads shrink to
 * SMALL_READ until the clients take their echoes.
 *
 * --splice moves the bytes without copying them to userspace: the worker
 * splices socket -> pipe -> socket (the pipe sized to --buffer-size where
 * the kernel allows), and the pipe holds references to the received
 * pages. A pipe is the worker's while empty: a connection takes one for
 * a read and gives it back once the pipe is empty again. Only what the
 * socket could not take keeps a pipe with its connection, which stops
 * reading until it is empty. So 10,000 connections need 10,000
 * descriptors and a few pipes, not 30,000.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "busypoll.h"
#include "cli.h"
#include "defaults.h"
#include "listen.h"
#include "server.h"

#define BUF_DEFAULT	(256 * 1024)	/* --buffer-size: a worker's read */
#define BUF_MIN		1024
#define BUF_MAX		(64 * 1024 * 1024)
#define PENDING_BUDGET	64		/* reads' worth held, per worker */
#define SMALL_READ	(16 * 1024)	/* a read past that budget */
#define SPARE_PIPES	8		/* empty pipes a worker keeps */
#define MAX_EVENTS	256
#define MAX_WORKERS	256
#define ACCEPT_RETRY_MS	100	/* after EMFILE, try again this often */

struct conn {
	int fd;
	int pipe[2];		/* --splice, while bytes wait: [0] read, [1] write */
	/* Copying: pending[off, len) is still to be sent (NULL: nothing).
	 * Splicing: len bytes wait in the pipe. */
	size_t len, off;
	unsigned char *pending;
};

struct worker {
	pthread_t tid;
	unsigned int id;
	int listen_fd;
	int epoll_fd;
	unsigned char *buf;	/* every read lands here (copying) */
	int pipes[SPARE_PIPES][2];	/* --splice: empty pipes, to lend */
	unsigned int spare;
	size_t pending;		/* bytes its connections hold unsent */
	size_t budget;		/* past this, reads are SMALL_READ */
	bool accept_paused;
	struct busy_poll poll;
	unsigned long long accepted, closed, resets, bytes;
	unsigned long long reads, writes;	/* that moved bytes */
};

static struct {
	struct server_opts srv;	/* --addr, -p, -w, -b */
	unsigned int busy_poll_us;	/* 0: sleep in epoll_wait at once */
	size_t buffer_size;	/* one read at most; --splice: the pipe */
	bool splice;
} opt = {
	.srv = { .port = ECHOLAB_PORT, .workers = 1, .max_workers = MAX_WORKERS,
		 .backlog = 4096, .max_backlog = 65535 },
	.buffer_size = BUF_DEFAULT,
};

static int stop_fd = -1;	/* eventfd: readable once we must stop */
const char *prog = "user-echo-server";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [options]\n"
"Userspace epoll TCP echo server: every byte received is sent back.\n"
"\n"
"  -p, --port N      port to listen on (default " ECHOLAB_PORT_STR ")\n"
"      --addr ADDR   IPv4 address to listen on (default 127.0.0.1: this\n"
"                    machine only); 0.0.0.0 is every interface, open to\n"
"                    any host that can reach this machine\n"
"  -w, --workers N   worker threads, each with its own SO_REUSEPORT\n"
"                    listener and epoll loop (default 1)\n"
"  -b, --backlog N   listen backlog (default 4096; the kernel caps it at\n"
"                    net.core.somaxconn)\n"
"      --busy-poll USEC  after each batch of events, poll again with a\n"
"                    zero timeout for up to USEC (1 to 1000000) before\n"
"                    sleeping in epoll_wait: no wake-up for a request that\n"
"                    comes sooner, a busy CPU meanwhile (default: off)\n"
"      --buffer-size BYTES  the most one read takes (%d to %d, default\n"
"                    %d): a worker's buffer, shared by its connections;\n"
"                    a connection holds at most this much, only while a\n"
"                    client does not read. With --splice: each pipe's size\n"
"      --splice      echo socket -> pipe -> socket: no copy to userspace\n"
"  -v, --verbose     log every connection and error to stderr\n"
"  -h, --help        this text\n"
"\n"
"SIGINT or SIGTERM stops it. Exit status: 0 after a clean stop, 1 when it\n"
"cannot serve (port busy, no privileges), 2 on bad usage.\n",
		prog, BUF_MIN, BUF_MAX, BUF_DEFAULT);
}

enum { OPT_BUSY_POLL = 256, OPT_BUFFER_SIZE, OPT_SPLICE };

/* The options of this server alone; server.c parses the shared ones. */
static void own_option(int c, const char *arg)
{
	switch (c) {
	case OPT_BUSY_POLL:
		opt.busy_poll_us = parse_num("--busy-poll", arg, 1,
					     BUSY_POLL_MAX_US);
		break;
	case OPT_BUFFER_SIZE:
		opt.buffer_size = parse_num("--buffer-size", arg, BUF_MIN,
					    BUF_MAX);
		break;
	case OPT_SPLICE:
		opt.splice = true;
		break;
	}
}

static void parse_args(int argc, char **argv)
{
	static const struct option own[] = {
		{ "busy-poll", required_argument, NULL, OPT_BUSY_POLL },
		{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
		{ "splice",  no_argument,       NULL, OPT_SPLICE },
		{ NULL, 0, NULL, 0 },
	};

	server_parse_args(argc, argv, &opt.srv, own, own_option, usage);
}

/* Closes the socket (which also leaves the epoll set), its pipe, its
 * buffer. */
static void conn_free(struct conn *c)
{
	close(c->fd);
	if (c->pipe[0] >= 0) {	/* it holds bytes that will never go */
		close(c->pipe[0]);
		close(c->pipe[1]);
	}
	free(c->pending);
	free(c);
}

/* What a connection holds unsent goes (sent, or the connection closed). */
static void pending_free(struct worker *w, struct conn *c)
{
	w->pending -= c->len - c->off;
	free(c->pending);
	c->pending = NULL;
	c->off = c->len = 0;
}

static void conn_close(struct worker *w, struct conn *c)
{
	logv("worker %u: close fd %d\n", w->id, c->fd);
	if (c->pending)
		pending_free(w, c);
	conn_free(c);
	w->closed++;
	if (w->accept_paused) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

		/* A descriptor is free again: resume accepting. */
		if (!epoll_ctl(w->epoll_fd, EPOLL_CTL_MOD, w->listen_fd, &ev))
			w->accept_paused = false;
	}
}

static void conn_want(struct worker *w, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	epoll_ctl(w->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* A failed send or splice: counts a reset, logs; the caller closes. */
static ssize_t conn_failed(struct worker *w, struct conn *c, const char *what)
{
	if (errno == ECONNRESET || errno == EPIPE)
		w->resets++;
	logv("worker %u: %s fd %d: %s\n", w->id, what, c->fd, strerror(errno));
	return -1;
}

/*
 * Sends p[0, len) until it is all sent or the socket is full. Returns the
 * bytes sent, or -1 when the connection is gone.
 */
static ssize_t send_some(struct worker *w, struct conn *c,
			 const unsigned char *p, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(c->fd, p + done, len - done, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return conn_failed(w, c, "send");
		}
		done += (size_t)n;
		w->writes++;
	}
	w->bytes += done;
	return (ssize_t)done;
}

/* Splices the pipe into the socket until the pipe is empty or the socket
 * full; 0, or -1 when the connection is gone. */
static int splice_out(struct worker *w, struct conn *c)
{
	while (c->len) {
		ssize_t n = splice(c->pipe[0], NULL, c->fd, NULL, c->len,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return (int)conn_failed(w, c, "splice to");
		}
		c->len -= (size_t)n;
		w->bytes += (size_t)n;
		w->writes++;
	}
	return 0;
}

/* --splice: the connection takes an empty pipe, the worker's or a new
 * one; -1 (errno set) when there is none to have. */
static int pipe_take(struct worker *w, struct conn *c)
{
	if (w->spare) {
		w->spare--;
		c->pipe[0] = w->pipes[w->spare][0];
		c->pipe[1] = w->pipes[w->spare][1];
		return 0;
	}
	if (pipe2(c->pipe, O_NONBLOCK | O_CLOEXEC)) {
		c->pipe[0] = c->pipe[1] = -1;
		return -1;
	}
	/* Over fs.pipe-max-size this needs CAP_SYS_RESOURCE; the default
	 * size (64 KiB) still echoes, in more rounds. */
	if (fcntl(c->pipe[1], F_SETPIPE_SZ, (int)opt.buffer_size) < 0)
		logv("worker %u: pipe of %zu bytes: %s\n", w->id,
		     opt.buffer_size, strerror(errno));
	return 0;
}

/* Its pipe is empty again: back to the worker, or closed past a few. */
static void pipe_give_back(struct worker *w, struct conn *c)
{
	if (w->spare < SPARE_PIPES) {
		w->pipes[w->spare][0] = c->pipe[0];
		w->pipes[w->spare][1] = c->pipe[1];
		w->spare++;
	} else {
		close(c->pipe[0]);
		close(c->pipe[1]);
	}
	c->pipe[0] = c->pipe[1] = -1;
}

/* Reads what the socket holds, up to the bound: 0 at EOF, -1 when it is
 * gone or there is nothing (errno EAGAIN), else the bytes read. */
static ssize_t conn_read(struct worker *w, struct conn *c)
{
	ssize_t n;

	if (opt.splice) {
		if (pipe_take(w, c)) {
			fprintf(stderr, "%s: worker %u: no pipe for fd %d: %s; closing it\n",
				prog, w->id, c->fd, strerror(errno));
			errno = EPIPE;	/* not EAGAIN: the caller closes */
			return -1;
		}
		n = splice(c->fd, NULL, c->pipe[1], NULL, opt.buffer_size,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n <= 0) {
			int err = errno;

			pipe_give_back(w, c);	/* nothing went in */
			errno = err;
		}
	} else
		n = recv(c->fd, w->buf, w->pending < w->budget ?
			 opt.buffer_size : SMALL_READ, 0);
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		if (errno == ECONNRESET)
			w->resets++;
		logv("worker %u: %s fd %d: %s\n", w->id,
		     opt.splice ? "splice from" : "recv", c->fd,
		     strerror(errno));
	}
	return n;
}

/*
 * Echoes n bytes just read: spliced out of the pipe, or sent from the
 * worker's buffer with what the socket did not take kept in the
 * connection. 0 (*more: something is still to send), or -1 to close.
 */
static int echo_read(struct worker *w, struct conn *c, size_t n, bool *more)
{
	ssize_t sent;

	if (opt.splice) {
		c->len = n;
		if (splice_out(w, c))
			return -1;
		*more = c->len > 0;
		if (!*more)
			pipe_give_back(w, c);
		return 0;
	}
	sent = send_some(w, c, w->buf, n);
	if (sent < 0)
		return -1;
	*more = (size_t)sent < n;
	if (!*more)
		return 0;
	c->pending = malloc(n - (size_t)sent);
	if (!c->pending) {
		fprintf(stderr, "%s: worker %u: out of memory for fd %d's %zu unsent bytes; closing it\n",
			prog, w->id, c->fd, n - (size_t)sent);
		return -1;
	}
	memcpy(c->pending, w->buf + sent, n - (size_t)sent);
	c->off = 0;
	c->len = n - (size_t)sent;
	w->pending += c->len;
	return 0;
}

/* Sends what waits (EPOLLOUT): 0 (*more: some still does), or -1. */
static int flush_pending(struct worker *w, struct conn *c, bool *more)
{
	ssize_t sent;

	if (opt.splice) {
		if (splice_out(w, c))
			return -1;
		*more = c->len > 0;
		if (!*more)
			pipe_give_back(w, c);
		return 0;
	}
	sent = send_some(w, c, c->pending + c->off, c->len - c->off);
	if (sent < 0)
		return -1;
	c->off += (size_t)sent;
	w->pending -= (size_t)sent;
	*more = c->off < c->len;
	if (!*more)
		pending_free(w, c);
	return 0;
}

static void conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	bool more;
	ssize_t n;

	if (events & EPOLLERR)
		goto gone;

	if (c->len) {
		/* EPOLLOUT: the socket takes data again. */
		if (flush_pending(w, c, &more))
			goto gone;
		if (!more)
			conn_want(w, c, EPOLLIN | EPOLLRDHUP);
		return;
	}

	if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)))
		return;
	n = conn_read(w, c);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0)	/* gone, or EOF with everything before it echoed */
		goto gone;
	w->reads++;
	if (echo_read(w, c, (size_t)n, &more))
		goto gone;
	if (more)	/* stop reading until the client takes the rest */
		conn_want(w, c, EPOLLOUT);
	return;
gone:
	conn_close(w, c);
}

/* A connection on fd, or NULL (errno ENOMEM). */
static struct conn *conn_new(int fd)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->pipe[0] = c->pipe[1] = -1;
	return c;
}

/* Out of descriptors or memory (err): the clients wait in the backlog;
 * accepting resumes when a connection closes or after a short while. */
static bool accept_pause(struct worker *w, const char *what, int err)
{
	struct epoll_event lev = { .events = 0 };

	if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
		return false;
	if (!w->accept_paused)
		fprintf(stderr, "%s: worker %u: %s: %s; pausing accepts\n",
			prog, w->id, what, strerror(err));
	epoll_ctl(w->epoll_fd, EPOLL_CTL_MOD, w->listen_fd, &lev);
	w->accept_paused = true;
	return true;
}

static void accept_all(struct worker *w)
{
	for (;;) {
		struct epoll_event ev;
		struct conn *c;
		int one = 1, fd, err;

		fd = accept4(w->listen_fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (accept_pause(w, "accept", errno))
				return;
			if (errno == EAGAIN || errno == EINTR)
				return;
			/* ECONNABORTED and friends: that client is gone. */
			logv("worker %u: accept: %s\n", w->id,
			     strerror(errno));
			continue;
		}
		c = conn_new(fd);
		if (!c) {
			/* This client is closed; the next wait in the
			 * backlog. */
			err = errno;
			close(fd);
			if (accept_pause(w, "malloc", err))
				return;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		ev.events = EPOLLIN | EPOLLRDHUP;
		ev.data.ptr = c;
		if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
			conn_free(c);
			continue;
		}
		w->accepted++;
		logv("worker %u: accept fd %d\n", w->id, fd);
	}
}

static void *worker_main(void *arg)
{
	struct epoll_event events[MAX_EVENTS];
	struct worker *w = arg;
	bool running = true;

	w->poll.budget_ns = opt.busy_poll_us * 1000ull;
	while (running) {
		bool spin = busy_poll_spin(&w->poll);
		int i, n;

		n = epoll_wait(w->epoll_fd, events, MAX_EVENTS,
			       spin ? 0 : w->accept_paused ? ACCEPT_RETRY_MS : -1);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "%s: worker %u: epoll_wait: %s\n",
				prog, w->id, strerror(errno));
			break;
		}
		busy_poll_done(&w->poll, n > 0 ? (unsigned int)n : 0, spin);
		if (spin && n == 0)
			continue;	/* still within the budget, or it ends */
		if (n == 0 && w->accept_paused) {
			struct epoll_event ev = { .events = EPOLLIN };

			if (!epoll_ctl(w->epoll_fd, EPOLL_CTL_MOD,
				       w->listen_fd, &ev))
				w->accept_paused = false;
		}
		for (i = 0; i < n; i++) {
			void *p = events[i].data.ptr;

			if (p == &stop_fd)
				running = false;
			else if (!p)
				accept_all(w);
			else
				conn_event(w, p, events[i].events);
		}
	}
	return NULL;
}

/* Registers the listener (data.ptr NULL) and the stop eventfd. */
static int worker_setup(struct worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (!opt.splice) {
		w->buf = malloc(opt.buffer_size);
		if (!w->buf)
			return -ENOMEM;
		w->budget = PENDING_BUDGET * opt.buffer_size;
	}
	w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epoll_fd < 0)
		return -errno;
	ev.data.ptr = NULL;
	if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, w->listen_fd, &ev))
		return -errno;
	ev.data.ptr = &stop_fd;
	if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, stop_fd, &ev))
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	struct worker workers[MAX_WORKERS] = { 0 };
	unsigned long long accepted = 0, closed = 0, resets = 0, bytes = 0;
	unsigned long long reads = 0, writes = 0;
	unsigned long long empty_polls = 0;
	unsigned int i, started = 0;
	sigset_t sigs;
	int err, status = 0;

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	parse_args(argc, argv);
	if (server_prepare(&opt.srv, &sigs, &stop_fd, EFD_CLOEXEC | EFD_NONBLOCK))
		return 1;

	for (i = 0; i < opt.srv.workers; i++) {
		struct worker *w = &workers[i];

		w->id = i;
		w->listen_fd = open_listener(opt.srv.addr, opt.srv.port, opt.srv.backlog,
					     SOCK_NONBLOCK);
		if (w->listen_fd < 0) {
			fprintf(stderr, "%s: worker %u: cannot listen on port %u: %s\n%s: %s\n",
				prog, i, opt.srv.port, strerror(-w->listen_fd),
				prog, bind_hint(-w->listen_fd));
			status = 1;
			break;
		}
		err = worker_setup(w);
		if (!err)
			err = -pthread_create(&w->tid, NULL, worker_main, w);
		if (err) {
			fprintf(stderr, "%s: worker %u: %s\n", prog, i,
				strerror(-err));
			close(w->listen_fd);
			status = 1;
			break;
		}
		started++;
	}

	if (!status) {
		fprintf(stderr, "%s: listening on %s port %u (workers=%u backlog=%d busy_poll_us=%u buffer_size=%zu echo=%s)\n",
			prog, inet_ntoa(opt.srv.addr), opt.srv.port, opt.srv.workers,
			opt.srv.backlog, opt.busy_poll_us, opt.buffer_size,
			opt.splice ? "splice" : "copy");
		server_wait(&opt.srv, &sigs);
	}

	eventfd_write(stop_fd, 1);
	for (i = 0; i < started; i++) {
		pthread_join(workers[i].tid, NULL);
		accepted += workers[i].accepted;
		closed += workers[i].closed;
		resets += workers[i].resets;
		bytes += workers[i].bytes;
		reads += workers[i].reads;
		writes += workers[i].writes;
		empty_polls += workers[i].poll.empty;
		close(workers[i].epoll_fd);
		close(workers[i].listen_fd);
		free(workers[i].buf);
		while (workers[i].spare) {
			workers[i].spare--;
			close(workers[i].pipes[workers[i].spare][0]);
			close(workers[i].pipes[workers[i].spare][1]);
		}
	}
	close(stop_fd);
	if (!status)
		fprintf(stderr, "%s: stopped: connections=%llu open=%llu resets=%llu bytes=%llu reads=%llu writes=%llu empty_polls=%llu\n",
			prog, accepted, accepted - closed, resets, bytes,
			reads, writes, empty_polls);
	/* Connections still open are closed by the exit itself. */
	return status;
}
