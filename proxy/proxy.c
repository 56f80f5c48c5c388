// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * proxy - a TCP relay between clients and one backend, by one of four
 * paths, so that what each costs can be measured at the same hop:
 *
 *   copy     an epoll loop: read from one socket, write to the other
 *   splice   the same loop through a pipe: socket -> pipe -> socket, no
 *            copy to userspace
 *   uring    io_uring: multishot receive into a ring of provided buffers,
 *            then a send of each to the peer (proxy-uring.c)
 *   sockmap  both sockets in a SOCKHASH and an sk_skb verdict that sends
 *            what arrives on one out of the other (proxy.bpf.c); the
 *            process only accepts, connects, inserts, and relays what the
 *            verdict passes up to it
 *
 * One thread. For every client it accepts it connects to the backend
 * (non-blocking), and reads nothing from the client until that
 * connection is made: the client's first bytes wait in its socket, and a
 * backend that refuses closes the client with a reset. Then each
 * direction moves bytes until its source says FIN, which it passes on
 * with shutdown(SHUT_WR) once every byte before it is out (half-close:
 * the other direction keeps flowing). A reset, or an error, on either
 * socket resets the other. A direction whose destination does not take
 * bytes stops reading its source: the process holds at most one read per
 * direction, and TCP's window holds back the sender.
 *
 * The sockmap path's subtleties (proxy.h, proxy.bpf.c): bytes that arrive
 * before the sockets are in the SOCKHASH stay in the socket's receive
 * queue, where the verdict never looks on its own; setting SO_RCVLOWAT
 * after the insertion makes TCP call the socket's data_ready, so the
 * verdict takes them, in order, before anything newer. A client whose
 * FIN came before the insertion is no longer established, and a SOCKHASH
 * refuses it (EOPNOTSUPP): the process relays that pair. A FIN is passed
 * on only once the peer's socket has taken every byte the verdict saw
 * (its bytes acknowledged plus its send queue): the kernel's relay runs
 * in a work item, after the verdict, and a shutdown before it would
 * lose the tail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "defaults.h"
#include "listen.h"
#include "loader.h"
#include "proxy.h"
#include "proxy-common.h"
#include "proxy.skel.h"

#define MAX_EVENTS	256
#define READS_PER_EVENT	16	/* then others get their turn */
#define ACCEPT_PAUSE_MS	100	/* after EMFILE: retry this much later */
#define DRAIN_TICK_MS	1	/* poll period while a FIN waits (sockmap) */
#define DRAIN_IDLE_MS	5000	/* a peer that takes nothing for this long */
#define SPARE_PIPES	8
#define TCP_STATE_ESTABLISHED 1	/* tcpi_state: include/net/tcp_states.h */

struct options opt = {
	.srv = { .port = ECHOLAB_PORT, .backlog = 4096, .max_backlog = 65535 },
	.backend_port = ECHOLAB_PORT + 1,
	.buffer_size = PROXY_BUF_DEFAULT,
	.flow_limit = PROXY_FLOW_LIMIT,
};
struct counters count;
const char *prog = "proxy";

/* One socket of a pair: the epoll event's data points here. */
struct end {
	int fd;
	unsigned int idx;	/* CLIENT or BACKEND */
	struct pair *p;
	__u64 cookie;		/* sockmap: its key */
	__u64 acked_base;	/* sockmap: tcpi_bytes_acked before any byte */
	uint32_t events;	/* its epoll interest now */
};

/* The bytes from e[i] to e[!i]. */
struct dir {
	unsigned char *pend;	/* copy: read, not yet sent: [off, len) */
	size_t off, len;
	int pipe[2];		/* splice: a pipe while bytes are in it */
	size_t inpipe;
	bool eof;		/* the source said FIN */
	bool held;		/* sockmap: bytes wait for the kernel's relay */
	bool shut;		/* ... and it went on: shutdown(SHUT_WR) */
	__u64 moved;		/* bytes this process sent on */
	long long drain_since;	/* sockmap: FIN waits for the kernel's relay */
	long long drain_seen;	/* ... what the peer had taken then */
};

struct pair {
	struct end e[2];
	struct dir d[2];
	bool connected;		/* to the backend */
	bool in_map;		/* sockmap: both sockets inserted */
	bool draining;		/* on the drain list */
	bool closed;		/* its sockets are closed: freed after the batch */
	unsigned short port;	/* the client's, naming the pair in -v's lines */
	struct pair *drain_next;
	struct pair *dead_next;
};

static struct {
	int epfd, listen_fd, sig_fd;
	bool accept_paused;
	long long accept_resume;
	unsigned char *buf;		/* copy: every read lands here */
	int pipes[SPARE_PIPES][2];	/* splice: empty pipes, to lend */
	unsigned int spare;
	struct pair *drain;		/* sockmap: pairs whose FIN waits */
	struct pair *dead;		/* closed in this batch of events */
	struct proxy_bpf *skel;
	int socks_fd, flow_fd, fwd_fd;
} px = { .epfd = -1, .listen_fd = -1, .sig_fd = -1 };

/* -v: a line about one pair, named by its client's port. */
#define logp(p, fmt, ...) logv("client port %u: " fmt, (p)->port, ##__VA_ARGS__)

/* The epoll data of the listener and the signalfd. */
static char listener_tag, signal_tag;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static const char *side(unsigned int idx)
{
	return idx == CLIENT ? "client" : "backend";
}

/* ---- epoll interest --------------------------------------------------------- */

static void end_want(struct end *e, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = e };

	if (events == e->events)
		return;
	if (epoll_ctl(px.epfd, EPOLL_CTL_MOD, e->fd, &ev))
		logv("epoll_ctl fd %d: %s\n", e->fd, strerror(errno));
	e->events = events;
}

/*
 * What each socket waits for, from the pair's state: to read while its
 * direction holds nothing and has not ended; to write while the other
 * direction holds bytes for it. Errors and hang-ups come regardless.
 */
static void pair_interest(struct pair *p)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct dir *in = &p->d[i], *out = &p->d[!i];
		uint32_t ev = 0;

		if (!p->connected) {
			ev = i == BACKEND ? EPOLLOUT : 0;
		} else {
			if (!in->eof && in->len == in->off && !in->inpipe)
				ev |= EPOLLIN | EPOLLRDHUP;
			if ((out->len != out->off || out->inpipe) && !out->held)
				ev |= EPOLLOUT;
		}
		end_want(&p->e[i], ev);
	}
}

/* ---- a pair's life ------------------------------------------------------------- */

static void pipe_give_back(struct dir *d)
{
	if (d->pipe[0] < 0)
		return;
	if (!d->inpipe && px.spare < SPARE_PIPES) {
		px.pipes[px.spare][0] = d->pipe[0];
		px.pipes[px.spare][1] = d->pipe[1];
		px.spare++;
	} else {
		close(d->pipe[0]);
		close(d->pipe[1]);
	}
	d->pipe[0] = d->pipe[1] = -1;
}

static void drain_remove(struct pair *p)
{
	struct pair **pp;

	if (!p->draining)
		return;
	for (pp = &px.drain; *pp; pp = &(*pp)->drain_next) {
		if (*pp == p) {
			*pp = p->drain_next;
			break;
		}
	}
	p->draining = false;
}

/* sockmap: the pair's entries go (the kernel drops a closed socket from
 * the SOCKHASH itself; @sockets: take them out now, open). */
static void map_forget(struct pair *p, bool sockets)
{
	unsigned int i;

	if (!p->in_map)
		return;
	for (i = 0; i < 2; i++) {
		if (sockets)
			bpf_map_delete_elem(px.socks_fd, &p->e[i].cookie);
		bpf_map_delete_elem(px.flow_fd, &p->e[i].cookie);
		bpf_map_delete_elem(px.fwd_fd, &p->e[i].cookie);
	}
	p->in_map = false;
}

/*
 * Closes both sockets; with @reset, each with an RST (SO_LINGER 0). The
 * pair itself is freed after the batch of events (pairs_free): a later
 * event of the batch may still point to it.
 */
static void pair_close(struct pair *p, bool reset)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	unsigned int i;

	if (p->closed)
		return;
	p->closed = true;
	map_forget(p, false);
	drain_remove(p);
	for (i = 0; i < 2; i++) {
		if (p->e[i].fd < 0)
			continue;
		if (reset)
			setsockopt(p->e[i].fd, SOL_SOCKET, SO_LINGER, &lg,
				   sizeof(lg));
		close(p->e[i].fd);	/* leaves the epoll set too */
		if (p->d[i].pend != px.buf)
			free(p->d[i].pend);
		pipe_give_back(&p->d[i]);
	}
	if (reset)
		count.resets++;
	count.closed++;
	p->dead_next = px.dead;
	px.dead = p;
	if (px.accept_paused) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listener_tag };

		/* A descriptor is free again: accept again. */
		if (!epoll_ctl(px.epfd, EPOLL_CTL_MOD, px.listen_fd, &ev))
			px.accept_paused = false;
	}
}

static int set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* A client accepted: its pair, connecting to the backend. */
static void pair_open(int cfd)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((unsigned short)opt.backend_port),
		.sin_addr = opt.backend_addr,
	};
	struct sockaddr_in peer;
	socklen_t plen = sizeof(peer);
	struct epoll_event ev;
	struct pair *p;
	unsigned int i;
	int bfd;

	count.accepted++;
	p = calloc(1, sizeof(*p));
	bfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (!p || bfd < 0) {
		fprintf(stderr, "%s: no %s for a new client: %s; closing it\n",
			prog, p ? "socket" : "memory", strerror(errno));
		if (bfd >= 0)
			close(bfd);
		free(p);
		close(cfd);
		count.closed++;
		return;
	}
	set_nodelay(cfd);
	set_nodelay(bfd);
	if (!getpeername(cfd, (struct sockaddr *)&peer, &plen))
		p->port = ntohs(peer.sin_port);
	p->e[CLIENT].fd = cfd;
	p->e[BACKEND].fd = bfd;
	for (i = 0; i < 2; i++) {
		p->e[i].idx = i;
		p->e[i].p = p;
		p->d[i].pipe[0] = p->d[i].pipe[1] = -1;
		ev.events = 0;
		ev.data.ptr = &p->e[i];
		if (epoll_ctl(px.epfd, EPOLL_CTL_ADD, p->e[i].fd, &ev)) {
			fprintf(stderr, "%s: epoll_ctl: %s; closing a client\n",
				prog, strerror(errno));
			pair_close(p, true);	/* both fds: added or not */
			return;
		}
	}
	if (connect(bfd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    errno != EINPROGRESS) {
		logp(p, "connect to the backend: %s\n", strerror(errno));
		count.backend_refused++;
		pair_close(p, true);
		return;
	}
	pair_interest(p);	/* EPOLLOUT on the backend: connected */
}

/* ---- sockmap: the kernel relays ------------------------------------------------- */

static int cookie_of(int fd, __u64 *cookie)
{
	socklen_t len = sizeof(*cookie);

	return getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len);
}

static bool established(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return !getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) &&
	       ti.tcpi_state == TCP_STATE_ESTABLISHED;
}

/*
 * tcpi_bytes_acked, which counts the SYN of a socket that connected
 * (the backend's): 1 before any byte is sent, where an accepted socket
 * has 0. Taken as the base at insertion, or a FIN would go out when the
 * kernel still holds the last byte, and that byte would be lost (tests/
 * hostile.t: EOF with exactly 1 byte due, 40 of 5,360 connections).
 */
static int acked_of(int fd, __u64 *acked)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -1;
	*acked = ti.tcpi_bytes_acked;
	return 0;
}

/*
 * Both sockets into the SOCKHASH, each direction described first. The
 * backend's socket goes in first: it says nothing before the client does
 * (what a request/response backend does), so only the client's bytes can
 * arrive while one socket is in, and they wait in its queue. Were the
 * backend to speak first, the verdict would pass its bytes up until the
 * client's socket is in, and the process sends them on: nothing is lost
 * either way. Then SO_RCVLOWAT makes TCP offer each socket's queue, bytes
 * that came before the insertion, to the verdict.
 */
static int map_insert(struct pair *p)
{
	struct proxy_flow f = {};
	__u64 zero = 0, fd;
	unsigned int i, order[2] = { BACKEND, CLIENT };
	int one = 1;

	/* A SOCKHASH takes established sockets only: a client that has sent
	 * its FIN already is relayed by the process (the caller). */
	if (!established(p->e[CLIENT].fd))
		return -ENOTCONN;
	for (i = 0; i < 2; i++) {
		if (cookie_of(p->e[i].fd, &p->e[i].cookie) ||
		    acked_of(p->e[i].fd, &p->e[i].acked_base))
			return -errno;
	}
	for (i = 0; i < 2; i++) {
		f.peer = p->e[!i].cookie;
		if (bpf_map_update_elem(px.flow_fd, &p->e[i].cookie, &f, BPF_ANY) ||
		    bpf_map_update_elem(px.fwd_fd, &p->e[i].cookie, &zero, BPF_ANY))
			return -errno;
	}
	p->in_map = true;
	for (i = 0; i < 2; i++) {
		fd = (__u64)p->e[order[i]].fd;
		if (bpf_map_update_elem(px.socks_fd, &p->e[order[i]].cookie,
					&fd, BPF_NOEXIST))
			return -errno;
	}
	for (i = 0; i < 2; i++) {
		if (setsockopt(p->e[order[i]].fd, SOL_SOCKET, SO_RCVLOWAT,
			       &one, sizeof(one)))
			return -errno;
	}
	return 0;
}

/* What the socket has taken to send, in all: acknowledged plus queued. */
static long long sent_into(const struct end *e)
{
	__u64 acked;
	int outq;

	if (acked_of(e->fd, &acked) || ioctl(e->fd, SIOCOUTQ, &outq))
		return -1;
	return (long long)(acked - e->acked_base) + outq;
}

/*
 * sockmap: has the kernel's relay caught up with direction i? The verdict
 * redirects into the peer's psock queue, and a work item sends from there
 * later (sk_psock_backlog): bytes the process sends on itself must wait
 * until the peer's socket has taken every byte redirected before them,
 * or they would overtake those. While the process holds bytes passed up
 * the verdict redirects nothing more, so "before them" is every byte
 * redirected so far (seen - passed), besides the process's own (moved).
 * A FIN (@fin) waits for every byte the verdict saw. 1 caught up, 0 not
 * yet, -1 a FIN's peer took nothing for DRAIN_IDLE_MS.
 */
static int caught_up(struct pair *p, unsigned int i, bool fin)
{
	struct dir *d = &p->d[i];
	struct proxy_flow f;
	unsigned long long want;
	long long taken;

	if (!p->in_map)
		return 1;
	if (bpf_map_lookup_elem(px.flow_fd, &p->e[i].cookie, &f))
		return 1;
	want = fin ? f.seen : f.seen - f.passed + d->moved;
	taken = sent_into(&p->e[!i]);
	if (taken < 0 || (unsigned long long)taken >= want)
		return 1;
	if (!fin)
		return 0;	/* TCP's flow control holds it: wait */
	if (taken != d->drain_seen) {
		d->drain_seen = taken;
		d->drain_since = now_ms();
	}
	return now_ms() - d->drain_since > DRAIN_IDLE_MS ? -1 : 0;
}

/* Direction i waits for the kernel's relay: on the list the 1 ms tick
 * looks at (drain_tick). */
static void wait_kernel(struct pair *p)
{
	if (p->draining)
		return;
	p->draining = true;
	p->drain_next = px.drain;
	px.drain = p;
}

/* ---- moving bytes -------------------------------------------------------------- */

static bool gone(int err)
{
	return err != EAGAIN && err != EINTR;
}

/* Sends p[0, len) until done or the socket is full: bytes sent, -1 gone. */
static ssize_t send_some(int fd, const unsigned char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, buf + done, len - done, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Sends what direction i holds: 0 (all sent, or the peer full), -1 gone. */
static int flush(struct pair *p, unsigned int i)
{
	struct dir *d = &p->d[i];
	int dst = p->e[!i].fd;
	ssize_t n;

	if (opt.path == PATH_SPLICE) {
		while (d->inpipe) {
			n = splice(d->pipe[0], NULL, dst, NULL, d->inpipe,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n < 0) {
				if (!gone(errno))
					return 0;
				logp(p, "splice to the %s fd %d: %s\n", side(!i), dst,
				     strerror(errno));
				return -1;
			}
			d->inpipe -= (size_t)n;
			d->moved += (size_t)n;
		}
		pipe_give_back(d);
		return 0;
	}
	if (d->off == d->len)
		return 0;
	n = send_some(dst, d->pend + d->off, d->len - d->off);
	if (n < 0) {
		logp(p, "send to the %s fd %d: %s\n", side(!i), dst, strerror(errno));
		return -1;
	}
	d->off += (size_t)n;
	d->moved += (size_t)n;
	if (d->off == d->len) {
		if (d->pend != px.buf)
			free(d->pend);
		d->pend = NULL;
		d->off = d->len = 0;
	}
	return 0;
}

/* splice: a pipe for direction d, the process's or a new one. */
static int pipe_take(struct dir *d)
{
	if (px.spare) {
		px.spare--;
		d->pipe[0] = px.pipes[px.spare][0];
		d->pipe[1] = px.pipes[px.spare][1];
		return 0;
	}
	if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC))
		return -1;
	/* Over fs.pipe-max-size this needs CAP_SYS_RESOURCE; the default
	 * (64 KiB) still relays, in more rounds. */
	fcntl(d->pipe[1], F_SETPIPE_SZ, (int)opt.buffer_size);
	return 0;
}

/* One read from direction i's source: bytes, 0 at EOF, -1 (errno). */
static ssize_t read_some(struct pair *p, unsigned int i)
{
	struct dir *d = &p->d[i];
	int src = p->e[i].fd;
	ssize_t n;

	if (opt.path == PATH_SPLICE) {
		if (pipe_take(d))
			return -1;
		n = splice(src, NULL, d->pipe[1], NULL, opt.buffer_size,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0)
			d->inpipe = (size_t)n;
		else {
			int err = errno;

			pipe_give_back(d);
			errno = err;
		}
		return n;
	}
	n = recv(src, px.buf, opt.buffer_size, 0);
	if (n <= 0)
		return n;
	d->pend = px.buf;	/* flush() keeps what the peer did not take */
	d->off = 0;
	d->len = (size_t)n;
	return n;
}

/* copy: what the peer did not take moves out of the shared buffer. */
static int keep_rest(struct dir *d)
{
	unsigned char *rest;

	if (d->pend != px.buf)
		return 0;
	if (d->off == d->len) {
		d->pend = NULL;
		d->off = d->len = 0;
		return 0;
	}
	rest = malloc(d->len - d->off);
	if (!rest)
		return -1;
	memcpy(rest, px.buf + d->off, d->len - d->off);
	d->pend = rest;
	d->len -= d->off;
	d->off = 0;
	return 0;
}

/* sockmap: the verdict may relay again once it sees this process has sent
 * on everything it passed up. */
static void publish_forwarded(struct pair *p, unsigned int i)
{
	__u64 moved = p->d[i].moved;

	if (p->in_map && bpf_map_update_elem(px.fwd_fd, &p->e[i].cookie,
					     &moved, BPF_EXIST))
		logp(p, "proxy_forwarded: %s\n", strerror(errno));
}

/*
 * Direction i: send what it holds, then read and send until the source
 * is empty, the peer full, or the turn over; pass a FIN on once every
 * byte before it has gone. 0, or -1: the pair is to be reset.
 */
static int pump(struct pair *p, unsigned int i)
{
	struct dir *d = &p->d[i];
	__u64 before = d->moved;
	unsigned int reads;
	ssize_t n;
	int ok;

	for (reads = 0;; reads++) {
		d->held = false;
		if (opt.path == PATH_SOCKMAP && d->len != d->off) {
			ok = caught_up(p, i, false);
			if (ok == 0) {
				/* Not sent yet: out of the shared buffer. */
				if (keep_rest(d))
					return -1;
				d->held = true;
				wait_kernel(p);
				break;
			}
		}
		if (flush(p, i) || keep_rest(d))
			return -1;
		if (d->len != d->off || d->inpipe)
			break;		/* the peer is full: EPOLLOUT */
		if (d->eof) {
			if (d->shut)
				break;
			ok = opt.path == PATH_SOCKMAP ? caught_up(p, i, true) : 1;
			/* Bytes passed up can reach the socket after its EOF:
			 * on its psock they wait behind the relay's bytes out of
			 * it, and TCP took the FIN before them. Read on. */
			if (ok == 0 && read_some(p, i) > 0)
				continue;
			if (ok == 0) {
				wait_kernel(p);
				break;
			}
			if (ok < 0) {
				logp(p, "the %s fd %d took nothing for %d ms; a FIN waits\n",
				     side(!i), p->e[!i].fd, DRAIN_IDLE_MS);
				return -1;
			}
			if (shutdown(p->e[!i].fd, SHUT_WR)) {
				logp(p, "shutdown of the %s fd %d: %s\n", side(!i),
				     p->e[!i].fd, strerror(errno));
				return -1;
			}
			d->shut = true;
			break;
		}
		if (reads == READS_PER_EVENT)
			break;
		n = read_some(p, i);
		if (n == 0) {
			d->eof = true;
			d->drain_since = now_ms();
			d->drain_seen = -1;
		} else if (n < 0) {
			if (gone(errno)) {
				logp(p, "read from the %s fd %d: %s\n", side(i),
				     p->e[i].fd, strerror(errno));
				return -1;
			}
			break;
		}
	}
	if (d->moved != before) {
		count.bytes[i] += d->moved - before;
		if (opt.path == PATH_SOCKMAP)
			publish_forwarded(p, i);
	}
	return 0;
}

/* The socket's pending error, 0 when it has none. */
static int sock_error(int fd)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return errno;
	return err;
}

/* Both directions ended and went on: the pair closes, quietly. */
static bool pair_done(struct pair *p)
{
	return p->d[0].shut && p->d[1].shut;
}

static void backend_connected(struct pair *p)
{
	int err = sock_error(p->e[BACKEND].fd);

	if (err) {
		logp(p, "connect to the backend: %s\n", strerror(err));
		count.backend_refused++;
		pair_close(p, true);
		return;
	}
	p->connected = true;
	if (opt.path == PATH_SOCKMAP) {
		err = map_insert(p);
		if (err) {
			/* Nothing is relayed before both are in: the process
			 * relays this pair instead, as copy does. */
			logp(p, "inserting the pair into proxy_socks: %s; the process relays it\n",
			     strerror(-err));
			map_forget(p, true);
			count.insert_fallbacks++;
		}
	}
	/* Whatever the client sent meanwhile waits in its socket. */
	if (pump(p, CLIENT) || pump(p, BACKEND)) {
		pair_close(p, true);
		return;
	}
	pair_interest(p);
}

static void pairs_free(void)
{
	struct pair *p;

	while ((p = px.dead)) {
		px.dead = p->dead_next;
		free(p);
	}
}

static void end_event(struct end *e, uint32_t events)
{
	struct pair *p = e->p;
	unsigned int i;
	int err;

	if (p->closed)
		return;
	count.wakeups++;
	if (!p->connected) {
		backend_connected(p);
		return;
	}
	/* SO_ERROR clears the error it returns: read it once. */
	if ((events & EPOLLERR) && (err = sock_error(e->fd))) {
		logp(p, "%s fd %d: %s\n", side(e->idx), e->fd, strerror(err));
		pair_close(p, true);
		return;
	}
	/* Its own direction (read), then the one into it (write). */
	for (i = 0; i < 2; i++) {
		if (pump(p, i ? !e->idx : e->idx)) {
			pair_close(p, true);
			return;
		}
	}
	if (pair_done(p)) {
		pair_close(p, false);
		return;
	}
	pair_interest(p);
}

/* sockmap: FINs waiting for the kernel's relay to finish. */
static void drain_tick(void)
{
	struct pair *p = px.drain, *next;
	unsigned int i;

	px.drain = NULL;
	for (; p; p = next) {
		next = p->drain_next;
		p->draining = false;
		for (i = 0; i < 2; i++) {
			if (((p->d[i].eof && !p->d[i].shut) || p->d[i].held) &&
			    pump(p, i)) {
				count.drain_timeouts++;
				pair_close(p, true);
				goto next;
			}
		}
		if (pair_done(p))
			pair_close(p, false);
		else
			pair_interest(p);
next:;
	}
}

static void accept_all(void)
{
	for (;;) {
		int fd = accept4(px.listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			pair_open(fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			struct epoll_event ev = { .events = 0, .data.ptr = &listener_tag };

			if (!count.accept_pauses++)
				fprintf(stderr, "%s: accept: %s; pausing accepts for %d ms (said once; counted as accept_pauses)\n",
					prog, strerror(errno), ACCEPT_PAUSE_MS);
			epoll_ctl(px.epfd, EPOLL_CTL_MOD, px.listen_fd, &ev);
			px.accept_paused = true;
			px.accept_resume = now_ms() + ACCEPT_PAUSE_MS;
		}
		return;
	}
}

/* ---- setup --------------------------------------------------------------------- */

static int sockmap_setup(void)
{
	int err, verdict;

	/* No cgroup: the verdict attaches to the map. */
	err = loader_preflight(prog, LOADER_BTF, NULL, NULL);
	if (err)
		return err;
	loader_log(verbose);
	px.skel = proxy_bpf__open();
	if (!px.skel) {
		fprintf(stderr, "%s: cannot open the BPF object: %s\n", prog,
			strerror(errno));
		return -errno;
	}
	px.skel->rodata->flow_limit = opt.flow_limit;
	px.skel->rodata->exact_seq = !opt.verdict_only;
	err = proxy_bpf__load(px.skel);
	if (err) {
		fprintf(stderr, "%s: loading the BPF programs failed (%s): this kernel lacks sockmap's stream verdict (CONFIG_BPF_STREAM_PARSER), or refuses the program; run with -v for the verifier's log\n",
			prog, strerror(-err));
		return err;
	}
	px.socks_fd = bpf_map__fd(px.skel->maps.proxy_socks);
	px.flow_fd = bpf_map__fd(px.skel->maps.proxy_flow);
	px.fwd_fd = bpf_map__fd(px.skel->maps.proxy_forwarded);
	verdict = bpf_program__fd(px.skel->progs.proxy_verdict);
	/* Attached to the map, not to a cgroup: it applies to the sockets
	 * this process puts there, and goes with the process. */
	if (bpf_prog_attach(verdict, px.socks_fd, BPF_SK_SKB_STREAM_VERDICT, 0)) {
		err = -errno;
		fprintf(stderr, "%s: attaching the stream verdict to proxy_socks: %s\n",
			prog, strerror(errno));
		return err;
	}
	return 0;
}

static int setup(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	raise_nofile();
	if (opt.path == PATH_SOCKMAP && (err = sockmap_setup()))
		return err;
	if (opt.path != PATH_SPLICE && !(px.buf = malloc(opt.buffer_size))) {
		fprintf(stderr, "%s: no memory for a %zu-byte buffer\n", prog,
			opt.buffer_size);
		return -ENOMEM;
	}
	px.listen_fd = listen_here(SOCK_NONBLOCK);
	if (px.listen_fd < 0)
		return px.listen_fd;
	px.sig_fd = stop_signalfd(NULL, SFD_CLOEXEC);
	px.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (px.sig_fd < 0 || px.epfd < 0)
		return -errno;
	ev.data.ptr = &listener_tag;
	if (epoll_ctl(px.epfd, EPOLL_CTL_ADD, px.listen_fd, &ev))
		return -errno;
	ev.data.ptr = &signal_tag;
	if (epoll_ctl(px.epfd, EPOLL_CTL_ADD, px.sig_fd, &ev))
		return -errno;
	return 0;
}

static void serve(void)
{
	struct epoll_event events[MAX_EVENTS];
	int n, i, timeout;

	for (;;) {
		timeout = -1;
		if (px.drain)
			timeout = DRAIN_TICK_MS;
		else if (px.accept_paused)
			timeout = ACCEPT_PAUSE_MS;
		n = epoll_wait(px.epfd, events, MAX_EVENTS, timeout);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "%s: epoll_wait: %s\n", prog, strerror(errno));
			return;
		}
		for (i = 0; i < n; i++) {
			void *tag = events[i].data.ptr;

			if (tag == &signal_tag)
				return;
			if (tag == &listener_tag)
				accept_all();
			else
				end_event(tag, events[i].events);
		}
		if (px.drain)
			drain_tick();
		pairs_free();
		if (px.accept_paused && now_ms() >= px.accept_resume) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listener_tag };

			if (!epoll_ctl(px.epfd, EPOLL_CTL_MOD, px.listen_fd, &ev))
				px.accept_paused = false;
		}
	}
}

int main(int argc, char **argv)
{
	int err;

	parse_args(argc, argv);
	if (opt.path == PATH_URING)
		return uring_main();
	err = setup();
	if (err) {
		if (px.skel)
			proxy_bpf__destroy(px.skel);
		return 1;
	}
	announce();
	serve();
	report();
	/* Exit closes every socket, the maps and the program with them. */
	proxy_bpf__destroy(px.skel);
	return 0;
}
