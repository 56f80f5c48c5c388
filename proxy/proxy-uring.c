// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The proxy's io_uring path (--path uring), after the design of liburing's
 * proxy example: a multishot accept; per pair, a connect to the backend,
 * then a multishot receive on each socket into a ring of provided buffers
 * shared by every pair, and each buffer sent on to the peer as it comes,
 * one send in flight per direction so that bytes stay in order. A buffer
 * goes back to the ring once its send is done.
 *
 * Flow control: once a direction holds DIR_FULL buffers its receive is
 * cancelled, and armed again once its sends have caught up. A multishot
 * receive fills buffers for as long as its socket has bytes, before the
 * process sees one completion, so the cancel bounds a direction only
 * with the ring: what it holds can grow to every buffer (NBUFS), and a
 * receive the ring ran out of buffers for (ENOBUFS) waits, on the list
 * of stalled directions, for buffers to come back.
 *
 * FIN: a receive that ends with 0 is the source's FIN; once the direction's
 * sends are done, shutdown(SHUT_WR) passes it on, and the other direction
 * keeps flowing. A reset or an error on either socket cancels the pair's
 * operations and, once none is in flight, closes both with an RST.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "listen.h"
#include "proxy-common.h"

#define RING_ENTRIES	4096
#define NBUFS		256		/* provided buffers, a power of two */
#define URING_BUF_DEFAULT (64 * 1024)	/* each, unless --buffer-size */
#define BGID		1
#define DIR_FULL	8		/* buffers a direction holds before its
					 * receive is cancelled */

/* user_data: a pair's address with the operation in its low bits. */
enum op { OP_TAG = 0, OP_CONNECT = 1, OP_RECV = 2, OP_SEND = 3 };
#define OP_MASK		3UL
#define DIR_BIT		4UL
enum tag { TAG_ACCEPT = 16, TAG_SIGNAL = 32, TAG_CANCEL = 48 };

struct qent {
	uint16_t bid;
	uint32_t len;
};

struct udir {
	struct qent *q;		/* received buffers, oldest first: a ring */
	unsigned int cap, head, count;
	uint32_t off;		/* of the oldest, already sent */
	bool receiving;		/* a multishot receive is armed */
	bool sending;		/* a send is in flight */
	bool stalled;		/* to be armed again once buffers are back */
	bool eof, shut;
	struct upair *stall_next;
};

struct upair {
	int fd[2];
	struct udir d[2];
	unsigned int inflight;	/* operations the ring holds for it */
	bool connected;
	bool resetting;		/* cancelled; closed with RST once idle */
} __attribute__((aligned(64)));

static struct {
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	unsigned char *bufs;
	size_t bufsize;
	int listen_fd, sig_fd;
	bool stopping;
	struct upair *stalled;	/* directions waiting for buffers */
	struct sockaddr_in backend;
} ur;

static struct io_uring_sqe *sqe_get(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ur.ring);

	if (!sqe) {	/* the SQ is full: hand it to the kernel, then again */
		io_uring_submit(&ur.ring);
		sqe = io_uring_get_sqe(&ur.ring);
	}
	return sqe;	/* never NULL right after a submit */
}

static uint64_t ud(struct upair *p, enum op op, unsigned int dir)
{
	return (uint64_t)(uintptr_t)p | op | (dir ? DIR_BIT : 0);
}

static unsigned char *buffer(uint16_t bid)
{
	return ur.bufs + (size_t)bid * ur.bufsize;
}

static void buffer_return(uint16_t bid)
{
	io_uring_buf_ring_add(ur.br, buffer(bid), (unsigned int)ur.bufsize, bid,
			      io_uring_buf_ring_mask(NBUFS), 0);
	io_uring_buf_ring_advance(ur.br, 1);
}

static void arm_recv(struct upair *p, unsigned int i)
{
	struct io_uring_sqe *sqe = sqe_get();

	io_uring_prep_recv_multishot(sqe, p->fd[i], NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	io_uring_sqe_set_data64(sqe, ud(p, OP_RECV, i));
	p->d[i].receiving = true;
	p->d[i].stalled = false;
	p->inflight++;
}

static void send_head(struct upair *p, unsigned int i)
{
	struct udir *d = &p->d[i];
	struct io_uring_sqe *sqe = sqe_get();
	struct qent *e = &d->q[d->head];

	io_uring_prep_send(sqe, p->fd[!i], buffer(e->bid) + d->off,
			   e->len - d->off, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, ud(p, OP_SEND, i));
	d->sending = true;
	p->inflight++;
}

static void cancel(uint64_t what)
{
	struct io_uring_sqe *sqe = sqe_get();

	io_uring_prep_cancel64(sqe, what, 0);
	io_uring_sqe_set_data64(sqe, TAG_CANCEL);
}

/* The pair goes: its operations cancelled, then (pair_idle) its sockets
 * closed with an RST. */
static void pair_reset(struct upair *p)
{
	struct io_uring_sqe *sqe;
	unsigned int i;

	if (p->resetting)
		return;
	p->resetting = true;
	count.resets++;
	for (i = 0; i < 2; i++) {
		sqe = sqe_get();
		io_uring_prep_cancel_fd(sqe, p->fd[i], IORING_ASYNC_CANCEL_ALL);
		io_uring_sqe_set_data64(sqe, TAG_CANCEL);
	}
}

static void unstall(void);

static void stall_remove(struct upair *p)
{
	struct upair **pp;

	for (pp = &ur.stalled; *pp;) {
		if (*pp == p)
			*pp = p->d[0].stall_next;
		else
			pp = &(*pp)->d[0].stall_next;
	}
}

/* Once the ring holds nothing of it: closed (with an RST when reset) and
 * freed, its buffers back in the ring. */
static void pair_free_if_idle(struct upair *p)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	unsigned int i, k;

	if (p->inflight)
		return;
	if (!p->resetting && !(p->d[0].shut && p->d[1].shut))
		return;
	stall_remove(p);
	for (i = 0; i < 2; i++) {
		struct udir *d = &p->d[i];

		for (k = 0; k < d->count; k++)
			buffer_return(d->q[(d->head + k) % d->cap].bid);
		free(d->q);
		if (p->resetting)
			setsockopt(p->fd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(p->fd[i]);
	}
	count.closed++;
	free(p);
	if (ur.stalled)		/* its buffers are back */
		unstall();
}

/* A direction to arm again once buffers come back. */
static void stall(struct upair *p, unsigned int i)
{
	p->d[i].stalled = true;
	/* One list entry per pair (d[0].stall_next); both directions are
	 * looked at when buffers return. */
	for (struct upair *q = ur.stalled; q; q = q->d[0].stall_next)
		if (q == p)
			return;
	p->d[0].stall_next = ur.stalled;
	ur.stalled = p;
}

/* Buffers came back: arm the stalled directions that have room. */
static void unstall(void)
{
	struct upair *p = ur.stalled, *next;
	unsigned int i;

	ur.stalled = NULL;
	for (; p; p = next) {
		next = p->d[0].stall_next;
		for (i = 0; i < 2; i++) {
			struct udir *d = &p->d[i];

			if (d->stalled && !d->receiving && !d->eof &&
			    !p->resetting && d->count < DIR_FULL / 2)
				arm_recv(p, i);
			else if (d->stalled)
				stall(p, i);
		}
	}
}

/* Direction i: nothing in flight and nothing queued after its FIN: pass
 * the FIN on. */
static int maybe_shut(struct upair *p, unsigned int i)
{
	struct udir *d = &p->d[i];

	if (!d->eof || d->shut || d->count || d->sending)
		return 0;
	if (shutdown(p->fd[!i], SHUT_WR))
		return -1;
	d->shut = true;
	return 0;
}

/* Room for one more in direction d's ring; -1 without memory. */
static int queue_room(struct udir *d)
{
	struct qent *q;
	unsigned int cap, k;

	if (d->count < d->cap)
		return 0;
	cap = d->cap ? d->cap * 2 : 4;	/* never above NBUFS: one a buffer */
	q = malloc(cap * sizeof(*q));
	if (!q)
		return -1;
	for (k = 0; k < d->count; k++)
		q[k] = d->q[(d->head + k) % d->cap];
	free(d->q);
	d->q = q;
	d->cap = cap;
	d->head = 0;
	return 0;
}

static void on_recv(struct upair *p, unsigned int i, int res, unsigned int flags)
{
	struct udir *d = &p->d[i];

	if (!(flags & IORING_CQE_F_MORE)) {
		d->receiving = false;
		p->inflight--;
	}
	if (res > 0 && (flags & IORING_CQE_F_BUFFER)) {
		uint16_t bid = (uint16_t)(flags >> IORING_CQE_BUFFER_SHIFT);
		struct qent *e;

		if (p->resetting || queue_room(d)) {
			if (!p->resetting)
				fprintf(stderr, "%s: no memory to queue a buffer; resetting a pair\n", prog);
			buffer_return(bid);
			pair_reset(p);
			return;
		}
		e = &d->q[(d->head + d->count) % d->cap];
		e->bid = bid;
		e->len = (uint32_t)res;
		d->count++;
		if (!d->sending)
			send_head(p, i);
		/* Enough: no more until the sends catch up. */
		if (d->count >= DIR_FULL && d->receiving && !d->stalled) {
			cancel(ud(p, OP_RECV, i));
			d->stalled = true;
		} else if (!d->receiving && !d->stalled) {
			/* The multishot ended with this one (no F_MORE). */
			if (d->count < DIR_FULL)
				arm_recv(p, i);
			else
				d->stalled = true;
		}
		return;
	}
	if (p->resetting || d->receiving)
		return;
	if (res == 0) {
		d->eof = true;
		if (maybe_shut(p, i))
			pair_reset(p);
	} else if (res == -ENOBUFS || res == -ECANCELED) {
		stall(p, i);
	} else if (res < 0) {
		logv("receive from fd %d: %s\n", p->fd[i], strerror(-res));
		pair_reset(p);
	}
}

static void on_send(struct upair *p, unsigned int i, int res)
{
	struct udir *d = &p->d[i];

	d->sending = false;
	p->inflight--;
	if (p->resetting)
		return;
	if (res < 0) {
		logv("send to fd %d: %s\n", p->fd[!i], strerror(-res));
		pair_reset(p);
		return;
	}
	count.bytes[i] += (unsigned int)res;
	d->off += (uint32_t)res;
	if (d->off == d->q[d->head].len) {
		buffer_return(d->q[d->head].bid);
		d->head = (d->head + 1) % d->cap;
		d->count--;
		d->off = 0;
		if (ur.stalled)
			unstall();
	}
	if (d->count)
		send_head(p, i);
	else if (maybe_shut(p, i))
		pair_reset(p);
	if (d->stalled && !d->receiving && !d->eof && d->count < DIR_FULL / 2)
		arm_recv(p, i);
}

static void on_connect(struct upair *p, int res)
{
	p->inflight--;
	if (res < 0) {
		logv("connect to the backend: %s\n", strerror(-res));
		count.backend_refused++;
		p->resetting = true;
		count.resets++;
		return;
	}
	p->connected = true;
	arm_recv(p, CLIENT);
	arm_recv(p, BACKEND);
}

static void on_accept(int res)
{
	struct io_uring_sqe *sqe;
	struct upair *p;
	int one = 1, bfd;

	if (res < 0) {
		if (res == -EMFILE || res == -ENFILE)
			count.accept_pauses++;
		return;	/* the multishot goes on, or is armed again */
	}
	count.accepted++;
	p = aligned_alloc(64, sizeof(*p));
	bfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!p || bfd < 0) {
		fprintf(stderr, "%s: no %s for a new client: %s; closing it\n",
			prog, p ? "socket" : "memory", strerror(errno));
		free(p);
		if (bfd >= 0)
			close(bfd);
		close(res);
		count.closed++;
		return;
	}
	memset(p, 0, sizeof(*p));
	p->fd[CLIENT] = res;
	p->fd[BACKEND] = bfd;
	setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(bfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sqe = sqe_get();
	/* The kernel reads the address when it runs the SQE, later: ur's. */
	io_uring_prep_connect(sqe, bfd, (struct sockaddr *)&ur.backend,
			      sizeof(ur.backend));
	io_uring_sqe_set_data64(sqe, ud(p, OP_CONNECT, 0));
	p->inflight++;
}

static void arm_accept(void)
{
	struct io_uring_sqe *sqe = sqe_get();

	io_uring_prep_multishot_accept(sqe, ur.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, TAG_ACCEPT);
}

static void arm_signal(void)
{
	struct io_uring_sqe *sqe = sqe_get();

	io_uring_prep_poll_add(sqe, ur.sig_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, TAG_SIGNAL);
}

static void on_cqe(struct io_uring_cqe *cqe)
{
	uint64_t data = io_uring_cqe_get_data64(cqe);
	struct upair *p = (struct upair *)(uintptr_t)(data & ~(uint64_t)(OP_MASK | DIR_BIT));
	unsigned int i = (data & DIR_BIT) ? 1 : 0;

	switch (data & OP_MASK) {
	case OP_TAG:
		if (data == TAG_ACCEPT) {
			on_accept(cqe->res);
			if (!(cqe->flags & IORING_CQE_F_MORE) && !ur.stopping)
				arm_accept();
		} else if (data == TAG_SIGNAL) {
			ur.stopping = true;
		}
		return;
	case OP_CONNECT:
		on_connect(p, cqe->res);
		break;
	case OP_RECV:
		on_recv(p, i, cqe->res, cqe->flags);
		break;
	case OP_SEND:
		on_send(p, i, cqe->res);
		break;
	}
	pair_free_if_idle(p);
}

static int setup(void)
{
	struct io_uring_params params = { .flags = IORING_SETUP_SUBMIT_ALL |
						   IORING_SETUP_COOP_TASKRUN };
	struct io_uring_buf_reg reg = { 0 };
	unsigned int i;
	int err;

	ur.bufsize = opt.buffer_size_set ? opt.buffer_size : URING_BUF_DEFAULT;
	ur.backend.sin_family = AF_INET;
	ur.backend.sin_port = htons((unsigned short)opt.backend_port);
	ur.backend.sin_addr = opt.backend_addr;
	err = io_uring_queue_init_params(RING_ENTRIES, &ur.ring, &params);
	if (err) {
		fprintf(stderr, "%s: io_uring_setup: %s: the uring path needs io_uring (5.19 or later for its multishot accept, 6.0 for multishot receive; kernel.io_uring_disabled=0)\n",
			prog, strerror(-err));
		return err;
	}
	ur.br = mmap(NULL, NBUFS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
		     MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	ur.bufs = malloc(NBUFS * ur.bufsize);
	if (ur.br == MAP_FAILED || !ur.bufs) {
		fprintf(stderr, "%s: no memory for %d buffers of %zu bytes\n",
			prog, NBUFS, ur.bufsize);
		return -ENOMEM;
	}
	reg.ring_addr = (unsigned long)ur.br;
	reg.ring_entries = NBUFS;
	reg.bgid = BGID;
	err = io_uring_register_buf_ring(&ur.ring, &reg, 0);
	if (err) {
		fprintf(stderr, "%s: registering the provided buffers: %s (a ring of them needs 5.19)\n",
			prog, strerror(-err));
		return err;
	}
	io_uring_buf_ring_init(ur.br);
	for (i = 0; i < NBUFS; i++)
		io_uring_buf_ring_add(ur.br, buffer((uint16_t)i), (unsigned int)ur.bufsize,
				      (uint16_t)i, io_uring_buf_ring_mask(NBUFS), (int)i);
	io_uring_buf_ring_advance(ur.br, NBUFS);

	ur.listen_fd = listen_here(0);
	if (ur.listen_fd < 0)
		return ur.listen_fd;
	ur.sig_fd = stop_signalfd(NULL, SFD_CLOEXEC);
	if (ur.sig_fd < 0)
		return ur.sig_fd;
	arm_accept();
	arm_signal();
	return 0;
}

int uring_main(void)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n;
	int err;

	raise_nofile();
	err = setup();
	if (err)
		return 1;
	announce();
	while (!ur.stopping) {
		err = io_uring_submit_and_wait(&ur.ring, 1);
		if (err < 0 && err != -EINTR && err != -EAGAIN && err != -EBUSY) {
			fprintf(stderr, "%s: io_uring_enter: %s\n", prog, strerror(-err));
			break;
		}
		count.wakeups++;
		n = 0;
		io_uring_for_each_cqe(&ur.ring, head, cqe) {
			on_cqe(cqe);
			n++;
		}
		io_uring_cq_advance(&ur.ring, n);
	}
	report();
	/* Exit closes every socket; the ring goes with the process. */
	return 0;
}
