// SPDX-License-Identifier: GPL-2.0
/*
 * The event-driven engine (--connections): each load thread drives many
 * connections from one epoll set, so the client's CPU per message does not
 * grow with the number of connections, and an open loop can offer the
 * loads where servers differ (wrk2 and Lancet do the same).
 *
 * Each connection has its own arrival process: with --rate R over N
 * connections, message k of a connection is due at a Poisson process's
 * k-th point of rate R/N (exponential gaps, seeded), or, with --arrivals
 * uniform, every N/R seconds, the connections staggered by 1/R. The
 * superposition of N independent Poisson processes is a Poisson process
 * of rate R, so the whole client offers Poisson arrivals at R. A message
 * leaves at its due time even when earlier ones are still out (pipelined,
 * as a real client's independent requests are), up to RING_SLOTS per
 * connection; past that it waits for a slot, and its response time still
 * counts from when it was due. Without --rate every connection keeps one
 * message out and sends the next when its echo is back (closed loop), or,
 * with --window, cfg.depth of them: a stream, echoed, whose every message
 * is still matched and timed.
 *
 * A TCP echo returns the bytes in the order they were sent, so a
 * connection's echoes are matched to its messages in order, byte for byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>		/* before linux/errqueue.h: timespec */
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "event.h"
#include "mismatch.h"
#include "record.h"
#include "settings.h"
#include "worker.h"

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

#define RING_SLOTS	32		/* open loop: messages out or due per connection */
#define EVENTS		256		/* epoll events per wait */
#define RETRY_NS	(10 * 1000000ull)	/* reconnect after a failure */
#define SCAN_NS		(20 * 1000000ull)	/* timeout checks, at most */

struct slot {
	uint64_t due;			/* intended send time; NO_TIME: closed loop */
	uint64_t sent;			/* first byte written; NO_TIME: not yet */
	uint32_t message;
};

struct conn {
	int fd;				/* -1: waiting to reconnect */
	unsigned int id;		/* the raw file's thread column */
	unsigned int round;		/* connections opened before this one */
	uint32_t next_message;
	bool connecting, want_out, first_recorded, paused;
	uint64_t connect_t0, connect_ns, retry_at;
	uint64_t next_due;		/* open loop: the next arrival */
	unsigned int heap_pos;		/* open loop: index in the timer heap */
	unsigned int head, count, nsent;	/* ring: count queued, nsent sent */
	size_t send_off, recv_off;	/* within ring[head + nsent], ring[head] */
	unsigned int slots;		/* the ring's size */
	struct slot *ring;
};

struct engine {
	struct worker *w;
	int ep;
	struct conn *conns;
	unsigned int nconns;
	struct slot *rings;		/* every connection's ring, one block */
	struct conn **heap;		/* open loop: conns by next_due */
	unsigned int nheap;
	uint64_t rng;
	double gap_ns;			/* mean gap of one connection */
	uint64_t real_off;		/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	bool pwait2;			/* epoll_pwait2 works */
	unsigned char *buf;
	size_t buf_size;
};

/* ---- arrivals ------------------------------------------------------------ */

/* splitmix64: small, fast, and every seed gives a full-period stream. */
static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The gap to a connection's next arrival, ns. */
static uint64_t next_gap(struct engine *e)
{
	double u;

	if (!cfg.poisson)
		return (uint64_t)llround(e->gap_ns);
	/* u in [0, 1): -log(1 - u) is exponential with mean 1. */
	u = (double)(next_random(&e->rng) >> 11) * 0x1.0p-53;
	return (uint64_t)llround(-log1p(-u) * e->gap_ns);
}

static void heap_swap(struct engine *e, unsigned int a, unsigned int b)
{
	struct conn *t = e->heap[a];

	e->heap[a] = e->heap[b];
	e->heap[b] = t;
	e->heap[a]->heap_pos = a;
	e->heap[b]->heap_pos = b;
}

static void heap_down(struct engine *e, unsigned int i)
{
	for (;;) {
		unsigned int l = 2 * i + 1, r = l + 1, m = i;

		if (l < e->nheap && e->heap[l]->next_due < e->heap[m]->next_due)
			m = l;
		if (r < e->nheap && e->heap[r]->next_due < e->heap[m]->next_due)
			m = r;
		if (m == i)
			return;
		heap_swap(e, i, m);
		i = m;
	}
}

static void heap_push(struct engine *e, struct conn *c)
{
	unsigned int i = e->nheap++;

	e->heap[i] = c;
	c->heap_pos = i;
	while (i && e->heap[(i - 1) / 2]->next_due > c->next_due) {
		heap_swap(e, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_pop(struct engine *e)
{
	e->heap[0] = e->heap[--e->nheap];
	e->heap[0]->heap_pos = 0;
	heap_down(e, 0);
}

/* ---- one connection -------------------------------------------------------- */

static struct slot *slot_at(struct conn *c, unsigned int i)
{
	return &c->ring[(c->head + i) % c->slots];
}

static void build_header(const struct conn *c, const struct slot *s,
			 struct msg_header *h)
{
	h->magic = HDR_MAGIC;
	h->thread = c->id;
	h->round = c->round;
	h->message = s->message;
}

static void set_interest(struct engine *e, struct conn *c, bool out)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (out ? EPOLLOUT : 0),
		.data.ptr = c,
	};

	if (c->want_out == out)
		return;
	c->want_out = out;
	epoll_ctl(e->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Records the message at the head and drops it from the ring. */
static void record_head(struct engine *e, struct conn *c,
			const struct times_ns *t, enum status st)
{
	record_sample(&e->w->rec, c->id, c->round,
		      c->first_recorded ? NO_TIME : c->connect_ns, t, st);
	c->first_recorded = true;
	c->head = (c->head + 1) % c->slots;
	c->count--;
	if (c->nsent)
		c->nsent--;
	c->recv_off = 0;
}

static void schedule_arrival(struct engine *e, struct conn *c);

/*
 * The connection failed: its message at the head gets st, every other one
 * queued on it is aborted, and a new connection follows after RETRY_NS.
 * In the open loop its arrivals go on and queue for the next connection.
 */
static void conn_fail(struct engine *e, struct conn *c, enum status st)
{
	struct times_ns t;
	uint64_t now = now_ns();

	if (st == ST_INTERRUPTED)
		return;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->connecting = false;
	c->want_out = false;
	if (!c->count && !c->first_recorded) {
		/* A failed connect with nothing due yet: one sample says so. */
		record_sample(&e->w->rec, c->id, c->round, c->connect_ns,
			      NULL, st);
	}
	while (c->count) {
		struct slot *s = slot_at(c, 0);
		bool sent = c->nsent > 0 && s->sent != NO_TIME;

		if (sent) {
			t.sent = s->sent;
			t.done = now;
			t.rtt = now - (s->due != NO_TIME && s->due < s->sent ?
				       s->due : s->sent);
			t.lag = s->due != NO_TIME ? s->sent - s->due : NO_TIME;
			t.arrival = NO_TIME;
		}
		record_head(e, c, sent ? &t : NULL, st);
		st = ST_ABORTED;
	}
	c->head = c->nsent = 0;
	c->send_off = c->recv_off = 0;
	c->round++;
	c->first_recorded = false;
	c->retry_at = now + RETRY_NS;
	if (c->paused)
		schedule_arrival(e, c);
}

static void conn_open(struct engine *e, struct conn *c)
{
	int stamping = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = c };
	int one = 1, fd;

	c->connect_ns = NO_TIME;
	c->connect_t0 = now_ns();
	fd = socket(cfg.server_addr.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		c->fd = -1;
		conn_fail(e, c, status_from_errno(errno));
		return;
	}
	c->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &stamping,
		       sizeof(stamping)))
		e->w->stamps_refused = true;
	if (connect(fd, (struct sockaddr *)&cfg.server_addr,
		    cfg.server_addrlen) && errno != EINPROGRESS) {
		conn_fail(e, c, status_from_errno(errno));
		return;
	}
	c->connecting = true;
	c->want_out = true;
	if (epoll_ctl(e->ep, EPOLL_CTL_ADD, fd, &ev))
		conn_fail(e, c, status_from_errno(errno));
}

/* Closed loop: the next message, due now. */
static void queue_now(struct conn *c)
{
	struct slot *s = slot_at(c, c->count++);

	s->due = NO_TIME;
	s->sent = NO_TIME;
	s->message = c->next_message++;
}

/* Writes what is queued and not yet sent, until the socket is full. */
static void conn_send(struct engine *e, struct conn *c)
{
	while (c->fd >= 0 && !c->connecting && c->nsent < c->count) {
		struct slot *s = slot_at(c, c->nsent);
		struct msg_header h;
		struct iovec iov[2];
		struct msghdr mh = { .msg_iov = iov };
		size_t off = c->send_off;
		ssize_t n;

		build_header(c, s, &h);
		if (off < cfg.hdr_len) {
			iov[mh.msg_iovlen].iov_base = (unsigned char *)&h + off;
			iov[mh.msg_iovlen++].iov_len = cfg.hdr_len - off;
			off = cfg.hdr_len;
		}
		if (off < cfg.size) {
			iov[mh.msg_iovlen].iov_base = cfg.body + (off - cfg.hdr_len);
			iov[mh.msg_iovlen++].iov_len = cfg.size - off;
		}
		if (!c->send_off)
			s->sent = now_ns();
		n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			conn_fail(e, c, status_from_errno(errno));
			return;
		}
		c->send_off += (size_t)n;
		if (c->send_off < cfg.size)
			break;
		c->send_off = 0;
		c->nsent++;
	}
	if (c->fd >= 0 && !c->connecting)
		set_interest(e, c, c->nsent < c->count);
}

/* Open loop: the connection's next arrival goes on the timer heap, unless
 * its ring is full (it waits there, paused, for a slot) or the run's
 * arrivals are over. */
static void schedule_arrival(struct engine *e, struct conn *c)
{
	c->paused = c->count == c->slots;
	if (!c->paused && c->next_due < cfg.deadline_ns)
		heap_push(e, c);
}

/* The message at the head is complete: time it and record it. */
static void complete_head(struct engine *e, struct conn *c, uint64_t now,
			  uint64_t stamp_mono)
{
	struct slot *s = slot_at(c, 0);
	uint64_t from = s->due != NO_TIME && s->due < s->sent ? s->due : s->sent;
	struct times_ns t = {
		.sent = s->sent,
		.done = now,
		.rtt = now - from,
		.lag = s->due != NO_TIME ? s->sent - from : NO_TIME,
		.arrival = NO_TIME,
	};

	if (stamp_mono != NO_TIME) {
		/* A stamp outside [send, now] means a clock step. */
		if (stamp_mono >= s->sent && stamp_mono <= now + 1000)
			t.arrival = stamp_mono - from < t.rtt ?
				    stamp_mono - from : t.rtt;
		else
			e->w->clock_steps++;
	}
	record_head(e, c, &t, ST_OK);
	if (!cfg.rate && now < cfg.deadline_ns)
		queue_now(c);
	else if (c->paused)
		schedule_arrival(e, c);
}

/* Checks n received bytes against the messages out, completing each one
 * they finish; false on a mismatch. */
static bool conn_match(struct engine *e, struct conn *c, const unsigned char *p,
		       size_t n, uint64_t now, uint64_t stamp_mono)
{
	while (n) {
		struct msg_header h;
		size_t k, sent, off = c->recv_off;

		/* The head may still be going out (a message larger than
		 * the socket takes at once): its echo starts before its
		 * send ends, and may reach only as far as it has gone. */
		sent = c->nsent ? cfg.size : c->send_off;
		if (!c->count || off >= sent)
			return false;	/* bytes nobody sent */
		k = sent - off < n ? sent - off : n;
		build_header(c, slot_at(c, 0), &h);
		if (off < cfg.hdr_len) {
			size_t m = cfg.hdr_len - off < k ? cfg.hdr_len - off : k;

			if (memcmp(p, (unsigned char *)&h + off, m) ||
			    (k > m && memcmp(p + m, cfg.body, k - m)))
				goto differs;
		} else if (memcmp(p, cfg.body + (off - cfg.hdr_len), k)) {
			goto differs;
		}
		c->recv_off += k;
		p += k;
		n -= k;
		if (c->recv_off == cfg.size)
			complete_head(e, c, now, stamp_mono);
		continue;
differs:
		mismatch_report(c->id, &h, off, p, k);
		return false;
	}
	return true;
}

static void conn_recv(struct engine *e, struct conn *c)
{
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
			struct cmsghdr align;
		} ctrl;
		struct iovec iov = { .iov_base = e->buf, .iov_len = e->buf_size };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctrl.buf,
			.msg_controllen = sizeof(ctrl.buf),
		};
		uint64_t stamp = NO_TIME, now;
		struct cmsghdr *cm;
		ssize_t n;

		n = recvmsg(c->fd, &mh, MSG_DONTWAIT);
		if (n == 0) {
			conn_fail(e, c, ST_EOF);
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				conn_fail(e, c, status_from_errno(errno));
			return;
		}
		now = now_ns();
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			const struct scm_timestamping *ts;
			uint64_t real;

			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_TIMESTAMPING)
				continue;
			ts = (const struct scm_timestamping *)CMSG_DATA(cm);
			real = (uint64_t)ts->ts[0].tv_sec * NSEC +
			       (uint64_t)ts->ts[0].tv_nsec;
			/* The last skb of this read: every message it
			 * completes shares its stamp. */
			if (real > e->real_off)
				stamp = real - e->real_off;
		}
		if (!conn_match(e, c, e->buf, (size_t)n, now, stamp)) {
			conn_fail(e, c, ST_MISMATCH);
			return;
		}
		/* What the echoes made room for, or the closed loop's next. */
		conn_send(e, c);
		if (c->fd < 0 || (size_t)n < e->buf_size)
			return;	/* failed, or drained */
	}
}

static void conn_connected(struct engine *e, struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		c->connect_ns = now_ns() - c->connect_t0;
		conn_fail(e, c, status_from_errno(err ? err : errno));
		return;
	}
	c->connect_ns = now_ns() - c->connect_t0;
	c->connecting = false;
	while (!cfg.rate && c->count < cfg.depth && now_ns() < cfg.deadline_ns)
		queue_now(c);
	conn_send(e, c);
}

/* ---- the loop ---------------------------------------------------------------- */

static uint64_t clock_offset(void)
{
	struct timespec r;
	uint64_t m = now_ns();

	clock_gettime(CLOCK_REALTIME, &r);
	return (uint64_t)r.tv_sec * NSEC + (uint64_t)r.tv_nsec - m;
}

/* Every arrival due by now joins its connection's ring. */
static void take_arrivals(struct engine *e, uint64_t now)
{
	while (e->nheap && e->heap[0]->next_due <= now) {
		struct conn *c = e->heap[0];
		struct slot *s = slot_at(c, c->count++);

		s->due = c->next_due;
		s->sent = NO_TIME;
		s->message = c->next_message++;
		c->next_due += next_gap(e);
		if (c->count == c->slots || c->next_due >= cfg.deadline_ns) {
			c->paused = c->count == c->slots;
			heap_pop(e);
		} else {
			heap_down(e, 0);
		}
		conn_send(e, c);
	}
}

/* Times out messages that waited too long, and reconnects. */
static void scan(struct engine *e, uint64_t now)
{
	uint64_t limit = (uint64_t)cfg.timeout_ms * 1000000ull;

	for (unsigned int i = 0; i < e->nconns; i++) {
		struct conn *c = &e->conns[i];

		if (c->fd < 0) {
			if (now >= c->retry_at && now < cfg.deadline_ns)
				conn_open(e, c);
			continue;
		}
		if (c->connecting && now - c->connect_t0 > limit) {
			c->connect_ns = now - c->connect_t0;
			conn_fail(e, c, ST_TIMEOUT);
		} else if (c->nsent && now - slot_at(c, 0)->sent > limit) {
			conn_fail(e, c, ST_TIMEOUT);
		}
	}
}

/* Nothing more to send or wait for: every arrival is in, every ring is
 * empty (or the connection is down). */
static bool drained(const struct engine *e)
{
	if (e->nheap)
		return false;
	for (unsigned int i = 0; i < e->nconns; i++)
		if (e->conns[i].fd >= 0 && e->conns[i].count)
			return false;
	return true;
}

static int wait_events(struct engine *e, struct epoll_event *ev,
		       uint64_t now, uint64_t until)
{
	uint64_t d = until > now ? until - now : 0;
	struct timespec ts = {
		.tv_sec = (time_t)(d / NSEC),
		.tv_nsec = (long)(d % NSEC),
	};

	if (e->pwait2) {
		int n = (int)syscall(SYS_epoll_pwait2, e->ep, ev, EVENTS, &ts,
				     NULL, 0);

		if (n >= 0 || errno != ENOSYS)
			return n;
		e->pwait2 = false;
	}
	return epoll_wait(e->ep, ev, EVENTS, (int)((d + 999999) / 1000000));
}

/* This thread's share of the CPUs bench may use: one of them, in turn. */
static void pin_thread(unsigned int id)
{
	cpu_set_t set, one;
	int n, k = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	n = CPU_COUNT(&set);
	CPU_ZERO(&one);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set) && k++ == (int)(id % (unsigned int)n)) {
			CPU_SET(i, &one);
			sched_setaffinity(0, sizeof(one), &one);
			return;
		}
}

void event_run(struct worker *w)
{
	unsigned int lo = (unsigned int)((uint64_t)w->id * cfg.connections /
					 cfg.threads);
	unsigned int hi = (unsigned int)((uint64_t)(w->id + 1) *
					 cfg.connections / cfg.threads);
	struct epoll_event ev[EVENTS];
	struct engine e = {
		.w = w,
		.nconns = hi - lo,
		.rng = cfg.seed ^ (0x9e3779b97f4a7c15ull * (w->id + 1)),
		.pwait2 = true,
		.buf_size = RECVBUF_MAX,
	};
	/* Open loop: room for arrivals that wait; closed: the window. */
	unsigned int slots = cfg.rate ? RING_SLOTS : cfg.depth;
	uint64_t now, next_scan = 0, hard_end;

	pin_thread(w->id);
	/* Timers to the nanosecond: the default 50 us slack would bunch
	 * arrivals at 20,000 a second. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	e.ep = epoll_create1(EPOLL_CLOEXEC);
	e.conns = calloc(e.nconns ? e.nconns : 1, sizeof(*e.conns));
	e.heap = calloc(e.nconns ? e.nconns : 1, sizeof(*e.heap));
	e.rings = calloc((e.nconns ? e.nconns : 1) * (size_t)slots,
			 sizeof(*e.rings));
	e.buf = malloc(e.buf_size);
	if (e.ep < 0 || !e.conns || !e.heap || !e.rings || !e.buf) {
		w->setup_errno = e.ep < 0 ? errno : ENOMEM;
		goto out;
	}
	if (cfg.rate)
		e.gap_ns = (double)cfg.connections * 1e9 / cfg.rate;
	e.real_off = clock_offset();

	now = now_ns();
	for (unsigned int i = 0; i < e.nconns; i++) {
		struct conn *c = &e.conns[i];

		c->id = lo + i;
		c->fd = -1;
		c->slots = slots;
		c->ring = e.rings + (size_t)i * slots;
		if (cfg.rate) {
			/* Uniform: staggered by 1/R; Poisson: memoryless,
			 * so the first gap is one like any other. */
			c->next_due = cfg.start_ns + (cfg.poisson ? next_gap(&e) :
				(uint64_t)llround((double)c->id * 1e9 / cfg.rate));
			schedule_arrival(&e, c);
		}
		conn_open(&e, c);
	}
	/* Past the deadline: the messages out get --timeout to return. */
	hard_end = cfg.deadline_ns + (uint64_t)cfg.timeout_ms * 1000000ull;
	while (!stopping()) {
		uint64_t until;
		int n;

		now = now_ns();
		if (now >= next_scan) {
			scan(&e, now);
			next_scan = now + SCAN_NS;
			e.real_off = clock_offset();
		}
		if (now >= cfg.deadline_ns && drained(&e))
			break;
		if (now >= hard_end) {
			for (unsigned int i = 0; i < e.nconns; i++)
				if (e.conns[i].count)
					conn_fail(&e, &e.conns[i], ST_TIMEOUT);
			break;
		}
		take_arrivals(&e, now);
		until = next_scan;
		if (e.nheap && e.heap[0]->next_due < until)
			until = e.heap[0]->next_due;
		if (now < cfg.deadline_ns && cfg.deadline_ns < until)
			until = cfg.deadline_ns;
		n = wait_events(&e, ev, now, until);
		for (int i = 0; i < n; i++) {
			struct conn *c = ev[i].data.ptr;

			if (c->fd < 0)
				continue;
			if (c->connecting) {
				conn_connected(&e, c);
				continue;
			}
			if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				conn_recv(&e, c);
			if (c->fd >= 0 && (ev[i].events & EPOLLOUT))
				conn_send(&e, c);
		}
		if (n > 0)
			w->last_ns = now_ns();
	}
out:
	for (unsigned int i = 0; e.conns && i < e.nconns; i++)
		if (e.conns[i].fd >= 0)
			close(e.conns[i].fd);
	if (e.ep >= 0)
		close(e.ep);
	free(e.conns);
	free(e.heap);
	free(e.rings);
	free(e.buf);
}
