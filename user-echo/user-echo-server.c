// SPDX-License-Identifier: GPL-2.0
/*
 * user-echo-server - the classic userspace TCP echo server.
 *
 * Each worker thread owns a listening socket (SO_REUSEPORT spreads new
 * connections across them) and an epoll loop over its connections. Sockets
 * are non-blocking; what a write could not take waits in the connection's
 * buffer, and the connection stops reading until that is sent (EPOLLOUT),
 * so memory stays bounded and bytes stay in order.
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
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "busypoll.h"
#include "cli.h"
#include "defaults.h"
#include "listen.h"

#define BUF_SIZE	(16 * 1024)	/* per-connection echo buffer */
#define MAX_EVENTS	256
#define MAX_WORKERS	256
#define ACCEPT_RETRY_MS	100	/* after EMFILE, try again this often */

struct conn {
	int fd;
	size_t len, off;	/* buf[off, len) is still to be sent */
	unsigned char buf[BUF_SIZE];
};

struct worker {
	pthread_t tid;
	unsigned int id;
	int listen_fd;
	int epoll_fd;
	bool accept_paused;
	struct busy_poll poll;
	unsigned long long accepted, closed, resets, bytes;
};

static struct {
	struct in_addr addr;
	unsigned int port;
	unsigned int workers;
	int backlog;
	unsigned int busy_poll_us;	/* 0: sleep in epoll_wait at once */
} opt = { .port = ECHOLAB_PORT, .workers = 1, .backlog = 4096 };

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
"  -v, --verbose     log every connection and error to stderr\n"
"  -h, --help        this text\n"
"\n"
"SIGINT or SIGTERM stops it. Exit status: 0 after a clean stop, 1 when it\n"
"cannot serve (port busy, no privileges), 2 on bad usage.\n",
		prog);
}

static void parse_args(int argc, char **argv)
{
	enum { OPT_ADDR = 256, OPT_BUSY_POLL };
	static const struct option longopts[] = {
		{ "addr",    required_argument, NULL, OPT_ADDR },
		{ "busy-poll", required_argument, NULL, OPT_BUSY_POLL },
		{ "port",    required_argument, NULL, 'p' },
		{ "workers", required_argument, NULL, 'w' },
		{ "backlog", required_argument, NULL, 'b' },
		{ "verbose", no_argument,       NULL, 'v' },
		{ "help",    no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opt.addr = parse_addr("--addr", DEFAULT_ADDR);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:w:b:vh", longopts,
				NULL)) != -1) {
		switch (c) {
		case OPT_ADDR:
			opt.addr = parse_addr("--addr", optarg);
			break;
		case 'p':
			opt.port = parse_num("--port", optarg, 1, 65535);
			break;
		case 'w':
			opt.workers = parse_num("--workers", optarg, 1,
						MAX_WORKERS);
			break;
		case 'b':
			opt.backlog = (int)parse_num("--backlog", optarg, 1,
						     65535);
			break;
		case OPT_BUSY_POLL:
			opt.busy_poll_us = parse_num("--busy-poll", optarg, 1,
						     BUSY_POLL_MAX_US);
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value",
				    argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}

static void conn_close(struct worker *w, struct conn *c)
{
	logv("worker %u: close fd %d\n", w->id, c->fd);
	close(c->fd);		/* also removes it from the epoll set */
	free(c);
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

/* Sends what is pending; returns -1 when the connection is gone. */
static int conn_flush(struct worker *w, struct conn *c)
{
	while (c->off < c->len) {
		ssize_t n = send(c->fd, c->buf + c->off, c->len - c->off,
				 MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			if (errno == ECONNRESET || errno == EPIPE)
				w->resets++;
			logv("worker %u: send fd %d: %s\n", w->id, c->fd,
			     strerror(errno));
			return -1;
		}
		c->off += (size_t)n;
		w->bytes += (size_t)n;
	}
	c->off = c->len = 0;
	return 0;
}

static void conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	bool pending = c->off < c->len;

	if (events & EPOLLERR)
		goto gone;

	if (pending) {
		/* EPOLLOUT: the socket takes data again. */
		if (conn_flush(w, c))
			goto gone;
		if (c->off < c->len)
			return;
		conn_want(w, c, EPOLLIN | EPOLLRDHUP);
		return;
	}

	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
		ssize_t n = recv(c->fd, c->buf, sizeof(c->buf), 0);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			if (errno == ECONNRESET)
				w->resets++;
			logv("worker %u: recv fd %d: %s\n", w->id, c->fd,
			     strerror(errno));
			goto gone;
		}
		if (n == 0)	/* EOF, and everything before it is echoed */
			goto gone;
		c->off = 0;
		c->len = (size_t)n;
		if (conn_flush(w, c))
			goto gone;
		if (c->off < c->len) {
			/* Stop reading until the client takes the rest. */
			conn_want(w, c, EPOLLOUT);
		}
	}
	return;
gone:
	conn_close(w, c);
}

static void accept_all(struct worker *w)
{
	for (;;) {
		struct epoll_event ev;
		struct conn *c;
		int one = 1, fd;

		fd = accept4(w->listen_fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				/* Leave them in the backlog; retry when a
				 * connection closes or after a short while. */
				struct epoll_event lev = { .events = 0 };

				if (!w->accept_paused)
					fprintf(stderr,
						"%s: worker %u: accept: %s; pausing accepts\n",
						prog, w->id, strerror(errno));
				epoll_ctl(w->epoll_fd, EPOLL_CTL_MOD,
					  w->listen_fd, &lev);
				w->accept_paused = true;
				return;
			}
			if (errno == EAGAIN || errno == EINTR)
				return;
			/* ECONNABORTED and friends: that client is gone. */
			logv("worker %u: accept: %s\n", w->id,
			     strerror(errno));
			continue;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->len = c->off = 0;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		ev.events = EPOLLIN | EPOLLRDHUP;
		ev.data.ptr = c;
		if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
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
	unsigned long long empty_polls = 0;
	unsigned int i, started = 0;
	sigset_t sigs;
	int err, sig, status = 0;

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);

	/* Workers inherit this mask; only sigwait() below sees the signals. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	err = check_port_free(opt.addr, opt.port);
	if (err) {
		fprintf(stderr, "%s: cannot bind %s port %u: %s\n%s: %s\n", prog,
			inet_ntoa(opt.addr), opt.port, strerror(-err), prog,
			bind_hint(-err));
		return 1;
	}
	stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stop_fd < 0) {
		perror("eventfd");
		return 1;
	}

	for (i = 0; i < opt.workers; i++) {
		struct worker *w = &workers[i];

		w->id = i;
		w->listen_fd = open_listener(opt.addr, opt.port, opt.backlog,
					     SOCK_NONBLOCK);
		if (w->listen_fd < 0) {
			fprintf(stderr, "%s: worker %u: cannot listen on port %u: %s\n%s: %s\n",
				prog, i, opt.port, strerror(-w->listen_fd),
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
		fprintf(stderr, "%s: listening on %s port %u (workers=%u backlog=%d busy_poll_us=%u)\n",
			prog, inet_ntoa(opt.addr), opt.port, opt.workers,
			opt.backlog, opt.busy_poll_us);
		warn_if_any_addr(opt.addr);
		sigwait(&sigs, &sig);
		logv("%s: %s, stopping\n", prog, strsignal(sig));
	}

	eventfd_write(stop_fd, 1);
	for (i = 0; i < started; i++) {
		pthread_join(workers[i].tid, NULL);
		accepted += workers[i].accepted;
		closed += workers[i].closed;
		resets += workers[i].resets;
		bytes += workers[i].bytes;
		empty_polls += workers[i].poll.empty;
		close(workers[i].epoll_fd);
		close(workers[i].listen_fd);
	}
	close(stop_fd);
	if (!status)
		fprintf(stderr, "%s: stopped: connections=%llu open=%llu resets=%llu bytes=%llu empty_polls=%llu\n",
			prog, accepted, accepted - closed, resets, bytes,
			empty_polls);
	/* Connections still open are closed by the exit itself. */
	return status;
}
