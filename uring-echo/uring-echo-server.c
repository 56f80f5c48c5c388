// SPDX-License-Identifier: GPL-2.0
/*
 * uring-echo-server - the TCP echo server on io_uring.
 *
 * Each worker thread owns a ring and a listening socket (SO_REUSEPORT
 * spreads new connections over the workers). One multishot accept brings
 * every new connection; one multishot receive per connection fills
 * buffers the kernel picks from a ring of provided buffers; they are sent
 * back with one send in flight per connection, so bytes stay in order:
 * the first buffer alone, or every buffer that came meanwhile (up to 32)
 * in one sendmsg. A partial send is resumed where it stopped, and each
 * buffer goes back to the ring once sent. Completions are reaped and new
 * requests queued in batches: one io_uring_enter per turn of the loop,
 * however many connections it served.
 *
 * Memory is the buffer rings, whatever the clients do: a connection holds
 * at most --conn-buffers of them; past that its receive is cancelled, and
 * armed again once half of them are sent, so a client that sends without
 * reading stops at its TCP window. What its receive still brings before
 * the cancel lands (a multishot receive fills buffer after buffer while
 * bytes wait) is copied out and its buffers go back at once: else one
 * client that never reads could hold the whole ring, and every other
 * connection wait until it left. When a ring runs dry (ENOBUFS) the
 * receives that stopped are armed again, oldest first, as buffers return.
 *
 * What io_uring's maintainers recommend for networking, each used where
 * the kernel has it and each one switched off by --disable, to measure it
 * or to test the older path:
 * - ring-fd: the ring's descriptor registered with the worker thread
 *   (5.18), so io_uring_enter skips looking up a file;
 * - direct: connections as direct descriptors in a sparse table (5.19,
 *   cancel by fixed descriptor 6.0) - no file table, no fdget per request;
 *   TCP_NODELAY is set once, on the listener, and every accepted socket
 *   inherits it;
 * - batch-return: buffers sent go back to the ring in one tail update per
 *   turn of the loop, not one each;
 * - min-wait, only when --min-wait USEC asks for it: once a turn reaps
 *   --min-batch completions or more (16), the next wait asks for as many
 *   for up to USEC microseconds, then returns with what has come, or at
 *   the first after that (6.12, IORING_FEAT_MIN_TIMEOUT): fewer wake-ups
 *   under load, at most that delay added to a reply. Off by default: at
 *   equal load, 64-byte messages at 3/4 of capacity, it made uring 1.13 x
 *   user's CPU per echo over 50 connections and 1.23-1.24 x over 1,000,
 *   and its p50 1.4-1.5 x, where without it uring is 0.94-0.96 x; the
 *   extra time is in TCP receive (1.38 us an echo against 1.11) and
 *   interrupts (3.65 against 3.50), by the profile (results/history.md,
 *   "uring's defaults, judged at equal load"). What it buys is a closed
 *   loop's rate: replies in bursts cost the client less. Not after a small turn: every echo is two
 *   completions (its receive, its send), so at a moderate load nearly
 *   every turn reaps two, and a batched wait after each armed a timer that
 *   expired before the batch came. At 20,000 msg/s over 50 connections
 *   that was 0.28 local timer interrupts per echo (/proc/interrupts' LOC
 *   on the server's CPU, against user's 0.007) and 1.4 x user's CPU per
 *   echo; from 16, 0.007 and user's cost.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "busypoll.h"
#include "cli.h"
#include "defaults.h"
#include "listen.h"
#include "server.h"

#ifndef IORING_RECV_MULTISHOT
#error "liburing 2.3 or later is needed (multishot receive): install liburing-dev (make deps)"
#endif

#define MAX_WORKERS	256
#define BUF_GROUP	0		/* the one buffer group of each ring */
#define ACCEPT_RETRY_MS	100		/* after EMFILE, try again this often */
#define MAX_DIRECT	65536		/* direct descriptors per ring, at most */
#define MIN_BATCH_DEFAULT 16		/* --min-batch: see wait_turn */
#define SEND_IOV	32		/* chunks one sendmsg sends, at most */
#define BUFFERS_MIN	16		/* --buffers' default: at least, */
#define BUFFERS_MAX	256		/* at most */
#define L2_UNKNOWN	(1u << 20)	/* an L2 cache we cannot read: 1 MiB */

/* What the headers of liburing 2.3 (Debian 12) lack. */
#ifndef IORING_FEAT_MIN_TIMEOUT
#define IORING_FEAT_MIN_TIMEOUT	(1U << 15)	/* Linux 6.12 */
#endif

/* The features --disable names. */
enum feat {
	FEAT_RING_FD = 1 << 0,
	FEAT_DIRECT = 1 << 1,
	FEAT_BATCH_RETURN = 1 << 2,
	FEAT_MIN_WAIT = 1 << 3,
};
static const struct { enum feat bit; const char *name; } feats[] = {
	{ FEAT_RING_FD, "ring-fd" },
	{ FEAT_DIRECT, "direct" },
	{ FEAT_BATCH_RETURN, "batch-return" },
	{ FEAT_MIN_WAIT, "min-wait" },
};
#define NFEATS	(sizeof(feats) / sizeof(feats[0]))

/* What a request was, in the low bits of its user_data. */
enum op { OP_ACCEPT = 1, OP_RECV, OP_SEND, OP_CANCEL, OP_STOP, OP_RETRY,
	  OP_CLOSE };
#define OP_MASK		7ull

/* A received buffer on its way back: bytes [off, off + len) of buffer bid. */
struct chunk {
	uint16_t bid;
	uint32_t off, len;
	unsigned char *copy;	/* its bytes, when not in buffer bid (overflow) */
};

struct conn {
	int fd;				/* or its direct descriptor */
	unsigned int inflight;		/* requests that still name it */
	bool receiving;			/* its multishot receive is armed */
	bool sending;			/* a send is in flight */
	bool eof, closing, paused, starved;
	struct chunk *q;		/* what is still to send, in order */
	unsigned int head, count, cap;
	unsigned int in_send;		/* the first chunks the send reads */
	struct iovec *iov;		/* ... when it is a sendmsg of several */
	struct msghdr msg;
	struct conn *next_starved;
} __attribute__((aligned(8)));

struct worker {
	pthread_t tid;
	unsigned int id;
	int listen_fd;
	struct io_uring ring;
	bool disabled;			/* made R_DISABLED: its thread enables it */
	const char *mode;		/* how its completions run, for the log */
	unsigned int feats;		/* the features it uses (enum feat) */
	unsigned int no_kernel;		/* ... the ones this kernel lacks */
	unsigned int returning;		/* buffers given back, not yet published */
	unsigned int last_reaped;	/* completions the last turn reaped */
	struct io_uring_buf_ring *br;
	unsigned char *bufs;
	size_t br_bytes;
	struct conn **conns;		/* by fd, for the stop */
	int nconns;
	struct conn *starved_head, *starved_tail;
	unsigned int held;		/* buffers received, not yet sent */
	bool running, accept_paused;
	struct busy_poll poll;
	int error;			/* what stopped it, if not the stop */
	unsigned long long accepted, closed, resets, bytes, dry, pauses,
			   enters, batch_waits, sendmsgs, overflows;
	unsigned long long recvs, sends;	/* completions that moved bytes */
} __attribute__((aligned(8)));

static struct {
	struct server_opts srv;		/* --addr, -p, -w, -b */
	unsigned int buffers;		/* per ring, a power of two; 0: L2's */
	unsigned int buffer_size;
	unsigned int conn_buffers;	/* at most this many held per connection */
	unsigned int busy_poll_us;	/* 0: wait for a completion at once */
	unsigned int ring_entries;	/* submission queue; completions 4 x */
	unsigned int min_wait_us;	/* the batched wait's limit */
	unsigned int min_batch;		/* reaped this many: a batched wait */
	unsigned int disabled;		/* features --disable switched off */
	bool sqpoll;
} opt = {
	.srv = { .port = ECHOLAB_PORT, .workers = 1, .max_workers = MAX_WORKERS,
		 .backlog = 4096, .max_backlog = 65535 },
	.buffers = 0,
	.buffer_size = 65536, .conn_buffers = 16, .ring_entries = 256,
	.min_wait_us = 0, .min_batch = MIN_BATCH_DEFAULT,
};

static int stop_fd = -1;	/* eventfd: readable once we must stop */

/* Workers that have set up their features: main prints them once all
 * have. */
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static unsigned int ready;

static void ready_worker(void)
{
	pthread_mutex_lock(&ready_lock);
	ready++;
	pthread_cond_signal(&ready_cond);
	pthread_mutex_unlock(&ready_lock);
}

static void wait_workers(unsigned int n)
{
	pthread_mutex_lock(&ready_lock);
	while (ready < n)
		pthread_cond_wait(&ready_cond, &ready_lock);
	pthread_mutex_unlock(&ready_lock);
}
const char *prog = "uring-echo-server";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [options]\n"
"TCP echo server on io_uring: every byte received is sent back.\n"
"\n"
"  -p, --port N          port to listen on (default " ECHOLAB_PORT_STR ")\n"
"      --addr ADDR       IPv4 address to listen on (default 127.0.0.1: this\n"
"                        machine only); 0.0.0.0 is every interface, open to\n"
"                        any host that can reach this machine\n"
"  -w, --workers N       worker threads, each with its own ring and\n"
"                        SO_REUSEPORT listener (default 1)\n"
"  -b, --backlog N       listen backlog (default 4096; the kernel caps it at\n"
"                        net.core.somaxconn)\n"
"      --sqpoll          a kernel thread polls each ring's submissions\n"
"                        (IORING_SETUP_SQPOLL): no io_uring_enter to submit,\n"
"                        a CPU spinning while there is work instead\n"
"      --buffers N       provided buffers per ring, a power of two\n"
"                        (default: as many as fit in one core's L2 cache,\n"
"                        %u to %u, and at least twice --conn-buffers; 32 of\n"
"                        64 KiB in a 2 MiB L2)\n"
"      --buffer-size N   bytes per buffer (default 65536: a 64 KiB message\n"
"                        in one receive, not sixteen)\n"
"      --conn-buffers N  buffers one connection may hold before its\n"
"                        receive pauses (default 16; at most half of\n"
"                        --buffers)\n"
"      --ring-entries N  submission queue entries per ring, the completion\n"
"                        queue 4 x as many (default 256)\n"
"      --min-wait USEC   batched waits: once a turn reaps --min-batch\n"
"                        completions or more, wait for as many for up to\n"
"                        USEC, then for any one (1 to 10000; Linux 6.12 or\n"
"                        later; default: off, see uring-echo/README.md)\n"
"      --min-batch N     with --min-wait: the completions a turn must reap\n"
"                        for the next wait to be a batched one (2 to 4096,\n"
"                        default %u)\n"
"      --disable LIST    switch off these features, comma-separated, to\n"
"                        measure them or to use the older path: ring-fd,\n"
"                        direct, batch-return, min-wait, or all\n"
"      --busy-poll USEC  after each batch of completions, enter the ring\n"
"                        without waiting (to submit and run its task work)\n"
"                        for up to USEC (1 to 1000000) before waiting for one:\n"
"                        no wake-up for a completion that comes sooner, a\n"
"                        busy CPU meanwhile (default: off)\n"
"  -v, --verbose         log every connection and error to stderr\n"
"  -h, --help            this text\n"
"\n"
"Needs Linux 6.0 or later (multishot receive, provided-buffer rings).\n"
"SIGINT or SIGTERM stops it. Exit status: 0 after a clean stop, 1 when it\n"
"cannot serve (port busy, io_uring missing or disabled), 2 on bad usage.\n",
		prog, BUFFERS_MIN, BUFFERS_MAX, MIN_BATCH_DEFAULT);
}

/* --disable's list: the features it names, or a usage error. */
static unsigned int parse_features(const char *list)
{
	char *copy = strdup(list), *save = NULL, *name;
	unsigned int bits = 0, i;

	if (!copy)
		usage_error("out of memory");
	for (name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		if (!strcmp(name, "all")) {
			bits = ~0u;
			continue;
		}
		for (i = 0; i < NFEATS && strcmp(name, feats[i].name); i++)
			;
		if (i == NFEATS)
			usage_error("--disable: unknown feature '%s' (ring-fd, direct, batch-return, min-wait, all)",
				    name);
		bits |= feats[i].bit;
	}
	free(copy);
	if (!bits)
		usage_error("--disable: name at least one feature");
	return bits;
}

/*
 * One core's L2 cache in bytes, as the kernel describes CPU 0's caches
 * (any architecture), else as the C library reads it; 0 when neither
 * knows.
 */
static unsigned long l2_bytes(void)
{
	char path[96], line[32];
	unsigned long size = 0;
	unsigned int i;

	for (i = 0; i < 16 && !size; i++) {
		FILE *f;
		int level = 0;
		char unit = 0;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%u/level", i);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%d", &level) != 1)
			level = 0;
		fclose(f);
		if (level != 2)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%u/type", i);
		f = fopen(path, "r");
		if (f && fgets(line, sizeof(line), f) &&
		    !strncmp(line, "Instruction", 11)) {
			fclose(f);
			continue;
		}
		if (f)
			fclose(f);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%u/size", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%lu%c", &size, &unit) >= 1)
			size <<= unit == 'K' ? 10 : unit == 'M' ? 20 : 0;
		fclose(f);
	}
	if (!size) {
		long n = sysconf(_SC_LEVEL2_CACHE_SIZE);

		size = n > 0 ? (unsigned long)n : 0;
	}
	return size;
}

/*
 * --buffers' default: as many buffers as one core's L2 holds. The kernel
 * hands out a ring's buffers in turn, so every receive lands in the next
 * one: 256 buffers of 64 KiB are 16 MiB walked through, where user reads
 * into one 256 KiB buffer. At 16 KiB and 14,400 msg/s that made uring's
 * two copies 2.27 us an echo against user's 1.69, and 32 buffers (2 MiB,
 * this machine's L2) 1.71 (results/history.md, "Why uring's copies cost
 * more"). Never fewer than twice --conn-buffers, nor than 16: a ring no
 * larger than one connection's share is one that a client that never
 * reads holds whole, and every other connection's receive waits (dry)
 * until it leaves (a 512 KiB L2 gave 8, raised to 16, --conn-buffers'
 * default: a well-behaved client's echo took 2.9 s beside one, every
 * time). Never more than 256.
 */
static unsigned int default_buffers(void)
{
	unsigned long l2 = l2_bytes();
	unsigned int n = BUFFERS_MAX, least = BUFFERS_MIN;

	if (!l2)
		l2 = L2_UNKNOWN;
	while (n > 1 && (unsigned long)n * opt.buffer_size > l2)
		n /= 2;
	while (least < 2 * opt.conn_buffers)	/* a power of two, as n is */
		least *= 2;
	return n < least ? least : n;
}

enum { OPT_SQPOLL = 256, OPT_BUFFERS, OPT_BUFFER_SIZE, OPT_CONN_BUFFERS,
       OPT_BUSY_POLL, OPT_RING_ENTRIES, OPT_MIN_WAIT, OPT_MIN_BATCH,
       OPT_DISABLE };

static bool min_batch_given;

/* The options of this server alone; server.c parses the shared ones. */
static void own_option(int c, const char *arg)
{
	switch (c) {
	case OPT_SQPOLL:
		opt.sqpoll = true;
		break;
	case OPT_BUFFERS:
		opt.buffers = parse_num("--buffers", arg, 1, 32768);
		if (opt.buffers & (opt.buffers - 1))
			usage_error("--buffers: %u is not a power of two",
				    opt.buffers);
		break;
	case OPT_BUFFER_SIZE:
		opt.buffer_size = parse_num("--buffer-size", arg, 64, 1 << 20);
		break;
	case OPT_CONN_BUFFERS:
		opt.conn_buffers = parse_num("--conn-buffers", arg, 2, 16384);
		break;
	case OPT_BUSY_POLL:
		opt.busy_poll_us = parse_num("--busy-poll", arg, 1,
					     BUSY_POLL_MAX_US);
		break;
	case OPT_RING_ENTRIES:
		opt.ring_entries = parse_num("--ring-entries", arg, 8, 32768);
		break;
	case OPT_MIN_WAIT:
		opt.min_wait_us = parse_num("--min-wait", arg, 1, 10000);
		break;
	case OPT_MIN_BATCH:
		opt.min_batch = parse_num("--min-batch", arg, 2, 4096);
		min_batch_given = true;
		break;
	case OPT_DISABLE:
		opt.disabled |= parse_features(arg);
		break;
	}
}

static void parse_args(int argc, char **argv)
{
	static const struct option own[] = {
		{ "sqpoll",       no_argument,       NULL, OPT_SQPOLL },
		{ "buffers",      required_argument, NULL, OPT_BUFFERS },
		{ "buffer-size",  required_argument, NULL, OPT_BUFFER_SIZE },
		{ "conn-buffers", required_argument, NULL, OPT_CONN_BUFFERS },
		{ "busy-poll",    required_argument, NULL, OPT_BUSY_POLL },
		{ "ring-entries", required_argument, NULL, OPT_RING_ENTRIES },
		{ "min-wait",     required_argument, NULL, OPT_MIN_WAIT },
		{ "min-batch",    required_argument, NULL, OPT_MIN_BATCH },
		{ "disable",      required_argument, NULL, OPT_DISABLE },
		{ NULL, 0, NULL, 0 },
	};

	server_parse_args(argc, argv, &opt.srv, own, own_option, usage);
	if (!opt.buffers)
		opt.buffers = default_buffers();
	if (min_batch_given && !opt.min_wait_us)
		usage_error("--min-batch goes with --min-wait USEC (batched waits are off without it)");
	if (!opt.min_wait_us)
		opt.disabled |= FEAT_MIN_WAIT;	/* asked for, or not used */
	if (opt.conn_buffers > opt.buffers / 2)
		usage_error("--conn-buffers %u is more than half of --buffers %u: "
			    "one client that never reads would hold the whole ring",
			    opt.conn_buffers, opt.buffers);
}

/* ---- the ring --------------------------------------------------------- */

static inline uint64_t tag(void *p, enum op op)
{
	return (uint64_t)(uintptr_t)p | op;
}

/* A free submission slot; a full queue is submitted first. */
static struct io_uring_sqe *get_sqe(struct worker *w)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

	while (!sqe) {
		io_uring_submit(&w->ring);
		w->enters++;
		sqe = io_uring_get_sqe(&w->ring);
	}
	return sqe;
}

static inline bool direct(const struct worker *w)
{
	return w->feats & FEAT_DIRECT;
}

/* A request on the connection's socket: by its direct descriptor, if so. */
static void on_socket(struct worker *w, struct io_uring_sqe *sqe)
{
	if (direct(w))
		sqe->flags |= IOSQE_FIXED_FILE;
}

static void arm_accept(struct worker *w)
{
	struct io_uring_sqe *sqe = get_sqe(w);

	/* Direct: the kernel picks a free slot of the table for each. */
	if (direct(w))
		io_uring_prep_multishot_accept_direct(sqe, w->listen_fd, NULL,
						      NULL, 0);
	else
		io_uring_prep_multishot_accept(sqe, w->listen_fd, NULL, NULL,
					       SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, tag(w, OP_ACCEPT));
}

static void arm_recv(struct worker *w, struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe(w);

	io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
	on_socket(w, sqe);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BUF_GROUP;
	io_uring_sqe_set_data64(sqe, tag(c, OP_RECV));
	c->receiving = true;
	c->paused = false;
	c->inflight++;
}

static unsigned char *buffer(struct worker *w, uint16_t bid)
{
	return w->bufs + (size_t)bid * opt.buffer_size;
}

/* Where a chunk's bytes are. */
static unsigned char *chunk_bytes(struct worker *w, const struct chunk *ch)
{
	return ch->copy ? ch->copy : buffer(w, ch->bid);
}

/*
 * Sends the chunks queued, from the head: one send of the head alone, or
 * one sendmsg of up to SEND_IOV of them when more have come (the rest of
 * a large message, received into several buffers while the first was
 * being sent), instead of a send and a completion each.
 */
static void send_queued(struct worker *w, struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe(w);
	unsigned int i, n = c->count < SEND_IOV ? c->count : SEND_IOV;

	if (n > 1 && !c->iov)
		c->iov = malloc(SEND_IOV * sizeof(*c->iov));
	if (n == 1 || !c->iov) {
		struct chunk *ch = &c->q[c->head];

		io_uring_prep_send(sqe, c->fd, chunk_bytes(w, ch) + ch->off,
				   ch->len, MSG_NOSIGNAL);
		n = 1;
	} else {
		for (i = 0; i < n; i++) {
			struct chunk *ch = &c->q[(c->head + i) % c->cap];

			c->iov[i].iov_base = chunk_bytes(w, ch) + ch->off;
			c->iov[i].iov_len = ch->len;
		}
		/* Both stay as they are until the completion (one send in
		 * flight per connection). */
		c->msg = (struct msghdr){ .msg_iov = c->iov,
					  .msg_iovlen = n };
		io_uring_prep_sendmsg(sqe, c->fd, &c->msg, MSG_NOSIGNAL);
		w->sendmsgs++;
	}
	on_socket(w, sqe);
	io_uring_sqe_set_data64(sqe, tag(c, OP_SEND));
	c->in_send = n;
	c->sending = true;
	c->inflight++;
}

/* Cancels every request on the connection's socket. */
static void cancel_all(struct worker *w, struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe(w);

	io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL |
				(direct(w) ? IORING_ASYNC_CANCEL_FD_FIXED : 0));
	io_uring_sqe_set_data64(sqe, tag(c, OP_CANCEL));
	c->inflight++;
}

/* Cancels the connection's receive only. */
static void cancel_recv(struct worker *w, struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe(w);

	io_uring_prep_cancel64(sqe, tag(c, OP_RECV), 0);
	io_uring_sqe_set_data64(sqe, tag(c, OP_CANCEL));
	c->inflight++;
}

/* ---- buffers ------------------------------------------------------------ */

/* The buffer goes back to the ring; batch-return publishes it with the
 * turn's others (publish_buffers), otherwise at once. */
static void give_back(struct worker *w, uint16_t bid)
{
	io_uring_buf_ring_add(w->br, buffer(w, bid), opt.buffer_size, bid,
			      io_uring_buf_ring_mask(opt.buffers),
			      (int)w->returning);
	if (w->feats & FEAT_BATCH_RETURN)
		w->returning++;
	else
		io_uring_buf_ring_advance(w->br, 1);
	w->held--;
}

/* One tail update for every buffer given back this turn. */
static void publish_buffers(struct worker *w)
{
	if (w->returning) {
		io_uring_buf_ring_advance(w->br, (int)w->returning);
		w->returning = 0;
	}
}

/* A chunk is done with: its buffer goes back, or its copy is freed. */
static void chunk_release(struct worker *w, struct chunk *ch)
{
	if (ch->copy) {
		free(ch->copy);
		ch->copy = NULL;
	} else {
		give_back(w, ch->bid);
	}
}

static void conn_put(struct worker *w, struct conn *c);

/* A receive that ran dry waits here (holding a reference) for buffers. */
static void starve(struct worker *w, struct conn *c)
{
	if (c->starved)
		return;
	c->starved = true;
	c->inflight++;
	c->next_starved = NULL;
	if (w->starved_tail)
		w->starved_tail->next_starved = c;
	else
		w->starved_head = c;
	w->starved_tail = c;
}

/* Buffers are free again: up to n dry receives go again, oldest first. */
static void feed_starved(struct worker *w, unsigned int n)
{
	while (w->starved_head && n) {
		struct conn *c = w->starved_head;

		w->starved_head = c->next_starved;
		if (!w->starved_head)
			w->starved_tail = NULL;
		c->starved = false;
		if (!c->closing && !c->eof && !c->receiving && !c->paused) {
			arm_recv(w, c);
			n--;
		}
		conn_put(w, c);
	}
}

static int setup_buffers(struct worker *w)
{
	struct io_uring_buf_reg reg = { 0 };
	unsigned int i;
	int err;

	w->br_bytes = opt.buffers * sizeof(struct io_uring_buf);
	w->br = mmap(NULL, w->br_bytes, PROT_READ | PROT_WRITE,
		     MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	if (w->br == MAP_FAILED) {
		w->br = NULL;
		return -errno;
	}
	w->bufs = malloc((size_t)opt.buffers * opt.buffer_size);
	if (!w->bufs)
		return -ENOMEM;
	reg.ring_addr = (unsigned long)w->br;
	reg.ring_entries = opt.buffers;
	reg.bgid = BUF_GROUP;
	err = io_uring_register_buf_ring(&w->ring, &reg, 0);
	if (err)
		return err;
	io_uring_buf_ring_init(w->br);
	for (i = 0; i < opt.buffers; i++)
		io_uring_buf_ring_add(w->br, buffer(w, (uint16_t)i),
				      opt.buffer_size, (uint16_t)i,
				      io_uring_buf_ring_mask(opt.buffers),
				      (int)i);
	io_uring_buf_ring_advance(w->br, (int)opt.buffers);
	return 0;
}

/* ---- connections -------------------------------------------------------- */

/* A connection's socket: a direct one is closed by the ring, its slot
 * free once that runs, before any accept queued after it. */
static void close_socket(struct worker *w, int fd)
{
	if (direct(w)) {
		struct io_uring_sqe *sqe = get_sqe(w);

		io_uring_prep_close_direct(sqe, (unsigned int)fd);
		io_uring_sqe_set_data64(sqe, tag(w, OP_CLOSE));
	} else {
		close(fd);
	}
}

/* Once nothing names it: the socket closes, the memory goes. */
static void conn_put(struct worker *w, struct conn *c)
{
	if (--c->inflight || !c->closing)
		return;
	logv("worker %u: close %s %d\n", w->id, direct(w) ? "slot" : "fd",
	     c->fd);
	close_socket(w, c->fd);
	w->conns[c->fd] = NULL;
	free(c->q);
	free(c->iov);
	free(c);
	w->closed++;
	if (w->accept_paused) {
		w->accept_paused = false;	/* a descriptor is free again */
		arm_accept(w);
	}
}

/* Starts closing: its buffers go back, its requests are cancelled. */
static void conn_close(struct worker *w, struct conn *c)
{
	unsigned int i, keep;

	if (c->closing)
		return;
	c->closing = true;
	/* The send in flight still reads its chunks: on_send gives them
	 * back. The rest go now. */
	keep = c->sending ? c->in_send : 0;
	for (i = keep; i < c->count; i++)
		chunk_release(w, &c->q[(c->head + i) % c->cap]);
	c->count = keep;
	c->inflight++;
	if (c->receiving || c->sending)
		cancel_all(w, c);
	conn_put(w, c);
}

static bool enqueue(struct conn *c, uint16_t bid, uint32_t len,
		    unsigned char *copy)
{
	if (c->count == c->cap) {
		unsigned int ncap = c->cap ? 2 * c->cap : 8, i;
		struct chunk *nq = malloc(ncap * sizeof(*nq));

		if (!nq)
			return false;
		for (i = 0; i < c->count; i++)
			nq[i] = c->q[(c->head + i) % c->cap];
		free(c->q);
		c->q = nq;
		c->head = 0;
		c->cap = ncap;
	}
	c->q[(c->head + c->count++) % c->cap] = (struct chunk){ bid, 0, len, copy };
	return true;
}

/*
 * Queues what a receive brought, in buffer bid, to be sent; false when it
 * cannot (no memory: the connection is closed, the buffer back). Past the
 * connection's share (--conn-buffers), which its receive still fills until
 * its cancel lands, the bytes are copied out and the buffer goes back at
 * once (see the top).
 */
static bool enqueue_received(struct worker *w, struct conn *c, uint16_t bid,
			     uint32_t len)
{
	unsigned char *copy = NULL;

	if (c->count >= opt.conn_buffers) {
		copy = malloc(len);
		if (copy)
			memcpy(copy, buffer(w, bid), len);
		w->overflows++;
		give_back(w, bid);
		if (!copy)
			return false;
	}
	if (enqueue(c, bid, len, copy))
		return true;
	if (copy)
		free(copy);
	else
		give_back(w, bid);
	return false;
}

static void on_recv(struct worker *w, struct conn *c, int res,
		    unsigned int flags)
{
	/* The last completion of the multishot receive: its reference goes
	 * at the end (conn_put), after we are done with c. */
	if (!(flags & IORING_CQE_F_MORE))
		c->receiving = false;
	if (res > 0) {
		uint16_t bid = (uint16_t)(flags >> IORING_CQE_BUFFER_SHIFT);

		w->held++;
		w->recvs++;
		if (c->closing) {
			give_back(w, bid);
		} else if (!enqueue_received(w, c, bid, (uint32_t)res)) {
			conn_close(w, c);
		} else {
			if (!c->sending)
				send_queued(w, c);
			if (c->count >= opt.conn_buffers && !c->paused) {
				c->paused = true;	/* see the top */
				w->pauses++;
				if (c->receiving)
					cancel_recv(w, c);
			}
		}
	} else if (res == 0) {
		c->eof = true;		/* echo what came, then close */
		if (!c->count && !c->sending)
			conn_close(w, c);
	} else if (res == -ENOBUFS) {
		w->dry++;
		if (!c->closing)
			starve(w, c);
	} else if (res == -EINVAL && !c->closing) {
		fprintf(stderr, "%s: this kernel's io_uring has no multishot receive (Linux 6.0 or later needed); use the user server\n",
			prog);
		w->error = EINVAL;
		w->running = false;
	} else if (res != -ECANCELED) {
		if (res == -ECONNRESET)
			w->resets++;
		logv("worker %u: recv fd %d: %s\n", w->id, c->fd,
		     strerror(-res));
		conn_close(w, c);
	}
	/* Armed again when it ended by itself, or was paused and what it
	 * held has been sent meanwhile. */
	if (!c->receiving && !c->closing && !c->eof && !c->starved &&
	    (!c->paused || c->count <= opt.conn_buffers / 2))
		arm_recv(w, c);
	if (!(flags & IORING_CQE_F_MORE))
		conn_put(w, c);
}

/* The chunks at the head give up n bytes sent; those all sent go back. */
static void consume(struct worker *w, struct conn *c, size_t n)
{
	while (n && c->count) {
		struct chunk *ch = &c->q[c->head];
		uint32_t k = n < ch->len ? (uint32_t)n : ch->len;

		ch->off += k;
		ch->len -= k;
		n -= k;
		if (!ch->len) {
			chunk_release(w, ch);
			c->head = (c->head + 1) % c->cap;
			c->count--;
		}
	}
}

static void on_send(struct worker *w, struct conn *c, int res)
{
	c->sending = false;
	if (c->closing) {
		/* conn_close left the chunks this send read: they go back. */
		for (; c->count; c->count--, c->head = (c->head + 1) % c->cap)
			chunk_release(w, &c->q[c->head]);
	} else if (res < 0) {
		if (res == -ECONNRESET || res == -EPIPE)
			w->resets++;
		if (res != -ECANCELED)
			logv("worker %u: send fd %d: %s\n", w->id, c->fd,
			     strerror(-res));
		conn_close(w, c);
	} else {
		w->bytes += (unsigned int)res;
		w->sends++;
		consume(w, c, (size_t)res);
		if (c->count)
			send_queued(w, c);
		else if (c->eof)
			conn_close(w, c);
		if (c->paused && !c->receiving && !c->closing &&
		    c->count <= opt.conn_buffers / 2)
			arm_recv(w, c);
	}
	conn_put(w, c);
}

static void on_accept(struct worker *w, int res, unsigned int flags)
{
	bool more = flags & IORING_CQE_F_MORE;
	struct conn *c;
	int one = 1;

	if (res >= 0) {
		if (res >= w->nconns) {
			int n = w->nconns ? w->nconns : 1024, i;
			struct conn **nc;

			while (n <= res)
				n *= 2;
			nc = realloc(w->conns, (size_t)n * sizeof(*nc));
			if (!nc) {
				close_socket(w, res);
				goto rearm;
			}
			for (i = w->nconns; i < n; i++)
				nc[i] = NULL;
			w->conns = nc;
			w->nconns = n;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close_socket(w, res);
			goto rearm;
		}
		c->fd = res;
		/* Direct: no descriptor to set it on; it came from the
		 * listener (worker_setup). */
		if (!direct(w))
			setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
		w->conns[res] = c;
		w->accepted++;
		logv("worker %u: accept %s %d\n", w->id,
		     direct(w) ? "slot" : "fd", res);
		arm_recv(w, c);
	} else if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS ||
		   res == -ENOMEM) {
		/* The clients wait in the backlog: go on when a connection
		 * closes, or after a short while. */
		if (!w->accept_paused)
			fprintf(stderr, "%s: worker %u: accept: %s; pausing accepts\n",
				prog, w->id, strerror(-res));
		if (!more) {
			struct io_uring_sqe *sqe = get_sqe(w);
			static struct __kernel_timespec ts = {
				.tv_nsec = ACCEPT_RETRY_MS * 1000000,
			};

			w->accept_paused = true;
			io_uring_prep_timeout(sqe, &ts, 0, 0);
			io_uring_sqe_set_data64(sqe, tag(w, OP_RETRY));
		}
		return;
	} else if (res == -EINVAL) {
		fprintf(stderr, "%s: this kernel's io_uring has no multishot accept (Linux 5.19 or later needed); use the user server\n",
			prog);
		w->error = EINVAL;
		w->running = false;
		return;
	} else {
		logv("worker %u: accept: %s\n", w->id, strerror(-res));
	}
rearm:
	if (!more && w->running)
		arm_accept(w);
}

static void on_cqe(struct worker *w, struct io_uring_cqe *cqe)
{
	uint64_t data = io_uring_cqe_get_data64(cqe);
	void *p = (void *)(uintptr_t)(data & ~OP_MASK);

	switch (data & OP_MASK) {
	case OP_ACCEPT:
		on_accept(w, cqe->res, cqe->flags);
		break;
	case OP_RECV:
		on_recv(w, p, cqe->res, cqe->flags);
		break;
	case OP_SEND:
		on_send(w, p, cqe->res);
		break;
	case OP_CANCEL:
		conn_put(w, p);
		break;
	case OP_RETRY:
		if (w->accept_paused && w->running) {
			w->accept_paused = false;
			arm_accept(w);
		}
		break;
	case OP_STOP:
		w->running = false;
		break;
	case OP_CLOSE:
		if (cqe->res < 0)
			logv("worker %u: close: %s\n", w->id,
			     strerror(-cqe->res));
		break;
	}
}

/* ---- workers ------------------------------------------------------------ */

/* liburing 2.3 declares io_uring_enable_rings() but does not export it. */
static int enable_ring(struct io_uring *ring)
{
	return syscall(__NR_io_uring_register, ring->ring_fd,
		       IORING_REGISTER_ENABLE_RINGS, NULL, 0);
}

/*
 * Submits what is queued and waits for wait_nr completions; once
 * min_wait_us have passed, for any one (Linux 6.12). liburing 2.3
 * cannot pass the minimum wait, so this enters the kernel itself: the
 * queued entries are published as liburing does (the ring's index array
 * slot for each, then the tail), and the ring is named as liburing names
 * it, by its registered index when it has one.
 */
static int enter_min_wait(struct worker *w, unsigned int wait_nr,
			  unsigned int min_wait_us)
{
	struct io_uring_sq *sq = &w->ring.sq;
	struct io_uring_getevents_arg arg = {
		.sigmask_sz = _NSIG / 8,
	};
	unsigned int mask = *sq->kring_mask, ktail = *sq->ktail, n = 0;
	unsigned int flags = IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG;
	int fd = w->ring.ring_fd, ret;

	/* The field the kernel reads as min_wait_usec; 6.1 insists on 0. */
	arg.pad = min_wait_us;
	while (sq->sqe_head != sq->sqe_tail) {
		sq->array[(ktail + n) & mask] = sq->sqe_head & mask;
		sq->sqe_head++;
		n++;
	}
	io_uring_smp_store_release(sq->ktail, ktail + n);
	if (w->feats & FEAT_RING_FD) {
		fd = w->ring.enter_ring_fd;
		flags |= IORING_ENTER_REGISTERED_RING;
	}
	ret = (int)syscall(__NR_io_uring_enter, fd, n, wait_nr, flags, &arg,
			   sizeof(arg));
	return ret < 0 ? -errno : ret;
}

/* Whether this kernel takes a minimum wait: 6.1 refuses the field. */
static bool has_min_wait(struct worker *w)
{
	return (w->ring.features & IORING_FEAT_MIN_TIMEOUT) &&
	       enter_min_wait(w, 0, 1) >= 0;
}

/* The features the worker's own thread sets up: those the kernel lacks
 * are dropped, and counted for the start line. */
static void worker_features(struct worker *w)
{
	if (w->feats & FEAT_RING_FD) {
		/* Registered with this thread: only it enters the ring. */
		if (io_uring_register_ring_fd(&w->ring) != 1) {
			w->feats &= ~FEAT_RING_FD;
			w->no_kernel |= FEAT_RING_FD;
		}
	}
	if ((w->feats & FEAT_MIN_WAIT) && !has_min_wait(w)) {
		w->feats &= ~FEAT_MIN_WAIT;
		w->no_kernel |= FEAT_MIN_WAIT;
	}
}

/* One turn's wait: for one completion, or, after a turn that reaped
 * --min-batch or more, for as many within the minimum wait. */
static int wait_turn(struct worker *w, bool spin)
{
	unsigned int batch = w->last_reaped;

	/* Busy polling enters without waiting: with DEFER_TASKRUN,
	 * completions are posted only when this task enters the kernel, so a
	 * spin on the completion queue alone would never see one. */
	if (spin)
		return io_uring_submit_and_get_events(&w->ring);
	if ((w->feats & FEAT_MIN_WAIT) && batch >= opt.min_batch) {
		w->batch_waits++;
		return enter_min_wait(w, batch, opt.min_wait_us);
	}
	return io_uring_submit_and_wait(&w->ring, 1);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct io_uring_sqe *sqe;

	/* A SINGLE_ISSUER ring belongs to the task that enables it: this
	 * one, before anything is queued on it. */
	if (w->disabled && enable_ring(&w->ring)) {
		w->error = errno;
		fprintf(stderr, "%s: worker %u: cannot enable its ring: %s\n",
			prog, w->id, strerror(errno));
		ready_worker();
		kill(getpid(), SIGTERM);
		return NULL;
	}
	worker_features(w);
	ready_worker();
	arm_accept(w);
	/* Polled, not read: every worker sees the one write. */
	sqe = get_sqe(w);
	io_uring_prep_poll_add(sqe, stop_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, tag(w, OP_STOP));
	w->running = true;
	w->poll.budget_ns = opt.busy_poll_us * 1000ull;
	while (w->running) {
		struct io_uring_cqe *cqe;
		unsigned int head, n = 0;
		bool spin = busy_poll_spin(&w->poll);
		int ret;

		publish_buffers(w);
		ret = wait_turn(w, spin);
		w->enters++;
		/* -ETIME: a batched wait's minimum wait ran out. */
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN &&
		    ret != -EBUSY && ret != -ETIME) {
			fprintf(stderr, "%s: worker %u: io_uring_enter: %s\n",
				prog, w->id, strerror(-ret));
			w->error = -ret;
			break;
		}
		io_uring_for_each_cqe(&w->ring, head, cqe) {
			on_cqe(w, cqe);
			n++;
		}
		io_uring_cq_advance(&w->ring, n);
		w->last_reaped = n;
		busy_poll_done(&w->poll, n, spin);
		if (w->starved_head && w->held < opt.buffers) {
			publish_buffers(w);
			feed_starved(w, opt.buffers - w->held);
		}
	}
	if (w->feats & FEAT_RING_FD)
		io_uring_unregister_ring_fd(&w->ring);
	/* A worker that cannot go on stops the server: main waits in sigwait. */
	if (w->error)
		kill(getpid(), SIGTERM);
	return NULL;
}

/* The ring: with the newest setup flags this kernel takes. */
static int setup_ring(struct worker *w)
{
	/* DEFER_TASKRUN (6.1): the kernel's completion work runs only when
	 * this worker enters to wait, in one batch, never interrupting it;
	 * it needs SINGLE_ISSUER, a ring used by one thread, and that thread
	 * is the worker, so the ring starts disabled. COOP_TASKRUN (5.19),
	 * the fallback: completions wait for our next io_uring_enter instead
	 * of interrupting the loop. */
	static const unsigned int tries[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			IORING_SETUP_R_DISABLED,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct io_uring_params p;
	unsigned int entries = opt.ring_entries, i;
	int err = -EINVAL;

	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = tries[i];
		if (opt.sqpoll) {
			p.flags = IORING_SETUP_SQPOLL;
			p.sq_thread_idle = 100;	/* ms before it sleeps */
		}
		p.flags |= IORING_SETUP_CQSIZE;
		p.cq_entries = 4 * entries;
		err = io_uring_queue_init_params(entries, &w->ring, &p);
		if (err != -EINVAL || opt.sqpoll)
			break;
	}
	w->disabled = !err && (p.flags & IORING_SETUP_R_DISABLED);
	w->mode = opt.sqpoll ? "sqpoll" :
		  w->disabled ? "defer-taskrun" :
		  (p.flags & IORING_SETUP_COOP_TASKRUN) ? "coop-taskrun" :
		  "plain";
	return err;
}

static const char *uring_hint(int err)
{
	switch (err) {
	case ENOSYS:
		return "this kernel has no io_uring (CONFIG_IO_URING=n): use the user server";
	case EPERM:
		return "io_uring is disabled here (sysctl kernel.io_uring_disabled): use the user server, or set it to 0";
	case ENOMEM:
		return "locked memory is short for the ring (ulimit -l), or the machine is out of memory";
	default:
		return "see 'uring-echo-server --help' for what it needs";
	}
}

/*
 * The connections by direct slot, one entry for each slot of the table,
 * resident from the start. The kernel hands slots out in turn over the
 * whole table, not the lowest free one as with descriptors, so a table
 * grown to the highest slot seen grew for the first 65,536 connections:
 * run.sh soak saw the server's RSS rise by 128 KiB every other run of
 * 10,000 connections.
 */
static int setup_conns(struct worker *w, unsigned int n)
{
	volatile struct conn **touch;
	size_t i, step = 4096 / sizeof(*w->conns);

	w->conns = calloc(n, sizeof(*w->conns));
	if (!w->conns)
		return -ENOMEM;
	touch = (volatile struct conn **)w->conns;
	for (i = 0; i < n; i += step)
		touch[i] = NULL;
	w->nconns = (int)n;
	return 0;
}

/* The direct descriptor table: as large as the descriptor limit allows,
 * and the connections' table beside it. */
static int setup_direct(struct worker *w)
{
	struct rlimit rl;
	unsigned int n = MAX_DIRECT;
	int err;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < n)
		n = (unsigned int)rl.rlim_cur;
	err = io_uring_register_files_sparse(&w->ring, n);
	return err ? err : setup_conns(w, n);
}

static int worker_setup(struct worker *w)
{
	int err, one = 1;

	w->feats = ~opt.disabled & (FEAT_RING_FD | FEAT_DIRECT |
				    FEAT_BATCH_RETURN | FEAT_MIN_WAIT);
	if (opt.sqpoll)
		w->feats &= ~FEAT_MIN_WAIT;	/* the kernel thread submits */
	err = setup_ring(w);
	if (err) {
		fprintf(stderr, "%s: worker %u: cannot set up io_uring: %s\n%s: %s\n",
			prog, w->id, strerror(-err), prog, uring_hint(-err));
		return err;
	}
	err = setup_buffers(w);
	if (err) {
		fprintf(stderr, "%s: worker %u: cannot register %u provided buffers: %s\n%s: %s\n",
			prog, w->id, opt.buffers, strerror(-err), prog,
			err == -EINVAL ? "this kernel has no provided-buffer rings (Linux 5.19 or later needed); use the user server"
				       : uring_hint(-err));
		return err;
	}
	if ((w->feats & FEAT_DIRECT) && setup_direct(w)) {
		w->feats &= ~FEAT_DIRECT;
		w->no_kernel |= FEAT_DIRECT;
	}
	w->listen_fd = open_listener(opt.srv.addr, opt.srv.port, opt.srv.backlog, 0);
	if (w->listen_fd < 0) {
		err = w->listen_fd;
		fprintf(stderr, "%s: worker %u: cannot listen on port %u: %s\n%s: %s\n",
			prog, w->id, opt.srv.port, strerror(-err), prog,
			bind_hint(-err));
		return err;
	}
	/* Every accepted socket inherits it (tests/uring.t checks that on
	 * each kernel): with direct descriptors there is no other place. */
	setsockopt(w->listen_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

/*
 * The listener stops listening at once: the kernel drops the ring's
 * requests, and the file references they hold, only after we have gone,
 * and the port must be free when we exit. Then the ring, which cancels
 * what is still in flight.
 */
static void worker_teardown(struct worker *w)
{
	int fd;

	if (w->listen_fd > 0)
		shutdown(w->listen_fd, SHUT_RDWR);
	if (w->ring.ring_fd > 0)
		io_uring_queue_exit(&w->ring);
	for (fd = 0; fd < w->nconns; fd++) {
		struct conn *c = w->conns[fd];
		unsigned int i;

		if (!c)
			continue;
		if (!direct(w))		/* direct ones closed with the ring */
			close(fd);
		for (i = 0; i < c->count; i++)	/* the ring's go with it */
			free(c->q[(c->head + i) % c->cap].copy);
		free(c->q);
		free(c);
	}
	free(w->conns);
	if (w->br)
		munmap(w->br, w->br_bytes);
	free(w->bufs);
	if (w->listen_fd > 0)
		close(w->listen_fd);
}

/* bits as --disable names them, comma-separated; "none" for none. */
static void feature_list(char *out, size_t size, unsigned int bits)
{
	size_t len = 0;
	unsigned int i;

	out[0] = 0;
	for (i = 0; i < NFEATS; i++)
		if (bits & feats[i].bit)
			len += (size_t)snprintf(out + len, size - len, "%s%s",
						len ? "," : "", feats[i].name);
	if (!len)
		snprintf(out, size, "none");
}

int main(int argc, char **argv)
{
	static struct worker workers[MAX_WORKERS];
	unsigned long long accepted = 0, closed = 0, resets = 0, bytes = 0,
			   dry = 0, pauses = 0, enters = 0, empty_polls = 0,
			   batch_waits = 0, sendmsgs = 0, recvs = 0, sends = 0,
			   overflows = 0;
	unsigned int i, started = 0;
	sigset_t sigs;
	int err, status = 0;

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	parse_args(argc, argv);
	if (server_prepare(&opt.srv, &sigs, &stop_fd, EFD_CLOEXEC))
		return 1;

	for (i = 0; i < opt.srv.workers; i++) {
		struct worker *w = &workers[i];

		w->id = i;
		w->listen_fd = -1;
		err = worker_setup(w);
		if (!err)
			err = -pthread_create(&w->tid, NULL, worker_main, w);
		if (err) {
			worker_teardown(w);
			status = 1;
			break;
		}
		started++;
	}

	if (!status) {
		char used[128], lacked[128];

		wait_workers(started);
		feature_list(used, sizeof(used), workers[0].feats);
		feature_list(lacked, sizeof(lacked), workers[0].no_kernel);
		fprintf(stderr, "%s: listening on %s port %u (workers=%u backlog=%d buffers=%ux%u ring=%s ring_entries=%u features=%s not_in_kernel=%s min_wait_us=%u busy_poll_us=%u)\n",
			prog, inet_ntoa(opt.srv.addr), opt.srv.port, opt.srv.workers,
			opt.srv.backlog, opt.buffers, opt.buffer_size,
			workers[0].mode, opt.ring_entries, used, lacked,
			(workers[0].feats & FEAT_MIN_WAIT) ? opt.min_wait_us : 0,
			opt.busy_poll_us);
		server_wait(&opt.srv, &sigs);
	}

	eventfd_write(stop_fd, 1);
	for (i = 0; i < started; i++) {
		struct worker *w = &workers[i];

		pthread_join(w->tid, NULL);
		if (w->error)
			status = 1;
		accepted += w->accepted;
		closed += w->closed;
		resets += w->resets;
		bytes += w->bytes;
		dry += w->dry;
		pauses += w->pauses;
		overflows += w->overflows;
		enters += w->enters;
		batch_waits += w->batch_waits;
		sendmsgs += w->sendmsgs;
		recvs += w->recvs;
		sends += w->sends;
		empty_polls += w->poll.empty;
		worker_teardown(w);
	}
	close(stop_fd);
	if (!status || started)
		fprintf(stderr, "%s: stopped: connections=%llu open=%llu resets=%llu bytes=%llu enobufs=%llu pauses=%llu recvs=%llu sends=%llu sendmsgs=%llu enters=%llu batch_waits=%llu empty_polls=%llu overflows=%llu\n",
			prog, accepted, accepted - closed, resets, bytes, dry,
			pauses, recvs, sends, sendmsgs, enters, batch_waits,
			empty_polls, overflows);
	return status;
}
