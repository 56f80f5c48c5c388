// SPDX-License-Identifier: GPL-2.0
/*
 * bench - TCP echo load client.
 *
 * N threads start together. Each opens a connection per round (or keeps one
 * for the whole run with --duration), sends a message, reads the whole echo
 * back, checks it byte for byte and records the response time twice: when
 * recv() returned it (rtt_us, the client's view) and when the echo's last
 * bytes reached the client's kernel (arrival_us, the kernel's software
 * receive timestamp: the server's view). Every sample is kept: rows go to a
 * raw file (rawfile.h) as they finish, and the summary line is computed
 * from all of them at the end.
 *
 * The load threads run at SCHED_IDLE unless --sched normal: the server gets
 * the machine and the client what is left, as if it ran on another one.
 * Closed loop by default; --rate N sends N messages a second in total and
 * counts each response time from the message's intended send time.
 *
 * Per message the hot path is: clock_gettime (vDSO) twice, sendmsg,
 * recvmsg (looped on partial reads; its control message carries the
 * stamp), memcmp, clock_gettime, and a row formatted into a thread-local
 * buffer. The buffer is written out once it holds ~16 KiB and the times
 * are kept in 64 Ki-sample chunks, so writes and allocations happen once
 * per hundreds or tens of thousands of messages.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "rawfile.h"
#include "stats.h"

#define STATE_DIR	"/run/echolab"	/* where run.sh keeps the server's state */
#define OUTBUF_SIZE	(16 * 1024)	/* per-thread row buffer */
#define RECVBUF_MAX	(64 * 1024)	/* per-thread receive buffer */
#define CHUNK_SAMPLES	65536
#define HDR_MAGIC	0x6563686fu	/* "echo" */
#define FD_RESERVE	32		/* descriptors besides the sockets */
#define TW_WARN		1000		/* TIME_WAIT sockets that skew a run */
/*
 * The client dominated a run when most echoes, once in its kernel, waited
 * over CLIENT_DELAY_US for their thread to read them (a wakeup and a
 * recvmsg cost microseconds; a millisecond is queueing for a CPU), and that
 * wait made up at least CLIENT_DELAY_SHARE of the response times it
 * reported. Measured: 2000 threads x 20 messages against ebpf, p50 delay
 * 11-20 ms and 31-68% of rtt_us; a 1-thread ping-pong, 6 us and 51%; 1000
 * threads against user at SCHED_IDLE, 7 ms and 8% (the server's queue).
 * Without stamps: when the threads waited CLIENT_BOUND_SHARE of their time
 * for a CPU.
 */
#define CLIENT_DELAY_US    1000.0
#define CLIENT_DELAY_SHARE 0.25
#define CLIENT_BOUND_SHARE 0.5
#define NO_TIME		RAW_NO_TIME
#define NSEC		1000000000ull

enum status {
	ST_OK,
	ST_TIMEOUT,	/* no answer within --timeout */
	ST_REFUSED,	/* nothing listening */
	ST_RESET,	/* server reset the connection */
	ST_EOF,		/* server closed before the whole echo came back */
	ST_MISMATCH,	/* the echo differs from what was sent */
	ST_NOPORT,	/* out of local ports */
	ST_ERROR,	/* any other socket error */
	ST_ABORTED,	/* not sent: an earlier message on this connection failed */
	ST_INTERRUPTED,	/* cut short by SIGINT/SIGTERM: not recorded */
};

static const char *const status_name[] = {
	[ST_OK] = "ok",		[ST_TIMEOUT] = "timeout",
	[ST_REFUSED] = "refused",	[ST_RESET] = "reset",
	[ST_EOF] = "eof",		[ST_MISMATCH] = "mismatch",
	[ST_NOPORT] = "noport",	[ST_ERROR] = "error",
	[ST_ABORTED] = "aborted",	[ST_INTERRUPTED] = "interrupted",
};

struct config {
	unsigned int threads;
	unsigned int rounds;
	unsigned int messages;
	unsigned int duration;		/* seconds; 0 = rounds mode */
	unsigned int rate;		/* messages/s in total; 0 = closed loop */
	bool sched_idle;		/* load threads at SCHED_IDLE */
	size_t size;
	const char *host;
	unsigned int port;
	const char *output;
	char label[64];
	unsigned int timeout_ms;
	bool quiet;
	const char *meta[32];
	unsigned int nmeta;
};

/* The first bytes of every message say who sent it and which one it is. */
struct msg_header {
	uint32_t magic;
	uint32_t thread;
	uint32_t round;
	uint32_t message;
};

/* The two response times of an ok sample, µs; arrival NAN without a stamp. */
struct times_us {
	double rtt, arrival;
};

struct chunk {
	struct chunk *next;
	size_t n, cap;
	struct times_us v[];
};

/* What one message measured, ns (NO_TIME: none). */
struct times_ns {
	uint64_t rtt, arrival, lag;
};

struct worker {
	pthread_t tid;
	unsigned int id;
	int out_fd;
	struct msg_header hdr;		/* header of the message in flight */
	unsigned char *rbuf;
	size_t rbuf_size;
	char *out;			/* rows not yet written */
	size_t out_len;
	struct chunk *head, *tail;	/* response times of ok samples */
	uint64_t stamp_ns;		/* last receive stamp, CLOCK_REALTIME */
	uint64_t unstamped;		/* ok samples without a stamp */
	uint64_t clock_steps;		/* stamps dropped: the clock stepped */
	bool stamps_refused;		/* SO_TIMESTAMPING failed */
	int sched_err;			/* SCHED_IDLE refused: its errno */
	struct env_cpu cpu0, cpu1;	/* scheduler statistics, start and end */
	bool have_cpu;
	uint64_t begin_ns, end_ns;	/* when this thread ran the load */
	/* Read by the main thread for progress; written only here. */
	uint64_t done;
	uint64_t failed;
	int write_errno;
	uint64_t last_ns;		/* when the last echo completed */
} __attribute__((aligned(64)));

static struct config cfg = {
	.threads = 1000,
	.rounds = 10,
	.messages = 1,
	.size = 64,
	.host = "127.0.0.1",
	.port = 12345,
	.timeout_ms = 5000,
	.sched_idle = true,
};

static struct sockaddr_storage server_addr;
static socklen_t server_addrlen;
static unsigned char *body;		/* shared, read-only message body */
static size_t hdr_len;			/* min(size, sizeof(struct msg_header)) */
static uint64_t start_ns;		/* the gate opened, CLOCK_MONOTONIC */
static uint64_t deadline_ns;		/* --duration mode */

static volatile sig_atomic_t stop;
static unsigned int threads_ready;	/* their scheduling is set */
static unsigned int threads_finished;

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate;			/* 1: go, -1: abort */

static const char *prog = "bench";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [options]\n"
"TCP echo load client: every thread sends a message, waits for the whole\n"
"echo, checks it byte for byte and records two response times: until the\n"
"echo reached this machine's kernel (arrival_us, the server's time) and\n"
"until recv() returned it (rtt_us, what the client saw).\n"
"\n"
"  -t, --threads N     concurrent client threads (default 1000)\n"
"  -r, --rounds N      rounds per thread (default 10)\n"
"  -m, --messages N    messages per connection (default 1: every round is\n"
"                      connect, send, receive, close; more keeps the\n"
"                      connection open for N messages)\n"
"  -d, --duration SEC  throughput mode: each thread keeps one connection and\n"
"                      sends as fast as echoes return for SEC seconds\n"
"                      (excludes --rounds and --messages)\n"
"  -R, --rate N        open loop, with --duration: N messages a second in\n"
"                      total, spread evenly over the threads; each response\n"
"                      time counts from the message's intended send time,\n"
"                      so a stalled server cannot hide its stall\n"
"  -s, --size BYTES    message size (default 64)\n"
"  -H, --host ADDR     server address (default 127.0.0.1)\n"
"  -p, --port N        server port (default 12345)\n"
"  -o, --output FILE   raw samples, TSV (default: results/runs/DATE/LABEL-TIME.tsv\n"
"                      in this repository, where 'make plots' finds them)\n"
"  -l, --label NAME    server name written into the file (default: the\n"
"                      server ./run.sh started on this port, else 'unknown')\n"
"  -T, --timeout MS    connect/send/receive timeout (default 5000)\n"
"      --sched POLICY  the load threads' scheduling: idle (default: SCHED_IDLE,\n"
"                      the server gets the CPUs, the client what is left, as\n"
"                      if it ran on another machine) or normal (compete with\n"
"                      the server as an ordinary process does)\n"
"  -q, --quiet         print only the summary line\n"
"      --meta K=V      add a '# K=V' metadata line to the file (repeatable)\n"
"      --summarize FILE...  print the summary line of raw files (samples\n"
"                      pooled) instead of running; nothing is sent\n"
"      --samples METRIC FILE...  print 'thread<TAB>time' of every ok sample\n"
"                      of raw files, METRIC rtt or arrival (for plots)\n"
"  -h, --help          this text\n"
"\n"
"Output: the raw file (format in bench/rawfile.h), one row per sample,\n"
"'thread round connect_us rtt_us arrival_us lag_us status', under '# key=value'\n"
"metadata lines; then on stdout one line:\n"
"summary label= threads= rounds= samples= ok= failed= p50_us= p90_us=\n"
"        p99_us= p999_us= max_us= mean_us= sd_us= rps= arrival_n=\n"
"        arrival_p50_us= arrival_p90_us= arrival_p99_us= arrival_p999_us=\n"
"        arrival_max_us= client_rq_share=\n"
"(p*_us: rtt_us; arrival_*: arrival_us over the arrival_n samples that have\n"
"it; client_rq_share: the share of the load threads' time spent waiting\n"
"for a CPU). When the client dominated the run, stderr says so.\n"
"Exit status: 0 if every sample was ok, 1 if any failed, 2 on bad usage.\n",
		prog);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(2);
}

static unsigned long parse_num(const char *opt, const char *s,
			       unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (*s == '-' || *s == '+')
		usage_error("%s: '%s' is not a number", opt, s);
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end)
		usage_error("%s: '%s' is not a number", opt, s);
	if (v < min || v > max)
		usage_error("%s: %lu is out of range [%lu, %lu]", opt, v, min,
			    max);
	return v;
}

static bool valid_label(const char *s)
{
	if (!*s || strlen(s) >= sizeof(cfg.label))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline bool stopping(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

/* ---- samples ---------------------------------------------------------- */

static int keep_times(struct worker *w, double rtt_us, double arrival_us)
{
	struct chunk *c = w->tail;

	if (!c || c->n == c->cap) {
		size_t cap = CHUNK_SAMPLES;

		/* Size the first chunk to the run, so 1000 threads x 10
		 * rounds do not reserve 64 Ki samples each. */
		if (!c && !cfg.duration &&
		    (size_t)cfg.rounds * cfg.messages < cap)
			cap = (size_t)cfg.rounds * cfg.messages;
		c = malloc(sizeof(*c) + cap * sizeof(c->v[0]));
		if (!c)
			return -1;
		c->next = NULL;
		c->n = 0;
		c->cap = cap;
		if (w->tail)
			w->tail->next = c;
		else
			w->head = c;
		w->tail = c;
	}
	c->v[c->n].rtt = rtt_us;
	c->v[c->n++].arrival = arrival_us;
	return 0;
}

static void flush_rows(struct worker *w)
{
	size_t off = 0;

	while (off < w->out_len) {
		ssize_t n = write(w->out_fd, w->out + off, w->out_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!w->write_errno)
				w->write_errno = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	w->out_len = 0;
}

static void record(struct worker *w, unsigned int round, uint64_t connect_ns,
		   const struct times_ns *t, enum status st)
{
	static const struct times_ns none = { NO_TIME, NO_TIME, NO_TIME };
	struct raw_sample row = {
		.thread = w->id,
		.round = round,
		.connect_ns = connect_ns,
	};

	if (!t)
		t = &none;
	/* Out of memory for the statistics: a failure, never a lost sample. */
	if (st == ST_OK &&
	    keep_times(w, (double)t->rtt / 1e3,
		       t->arrival == NO_TIME ? NAN : (double)t->arrival / 1e3))
		st = ST_ERROR;
	if (st == ST_OK && t->arrival == NO_TIME)
		w->unstamped++;
	row.rtt_ns = t->rtt;
	row.arrival_ns = t->arrival;
	row.lag_ns = t->lag;
	row.status = status_name[st];
	w->out_len = (size_t)(raw_put_row(w->out + w->out_len, &row) - w->out);
	if (w->out_len > OUTBUF_SIZE - RAW_ROW_MAX)
		flush_rows(w);

	__atomic_store_n(&w->done, w->done + 1, __ATOMIC_RELAXED);
	if (st != ST_OK)
		__atomic_store_n(&w->failed, w->failed + 1, __ATOMIC_RELAXED);
}

/* ---- one connection, one message -------------------------------------- */

static enum status errno_status(int err)
{
	switch (err) {
	case EAGAIN:
	case EINPROGRESS:	/* connect() timed out via SO_SNDTIMEO */
	case ETIMEDOUT:
		return ST_TIMEOUT;
	case ECONNREFUSED:
		return ST_REFUSED;
	case ECONNRESET:
	case EPIPE:
		return ST_RESET;
	case EADDRNOTAVAIL:
		return ST_NOPORT;
	case EINTR:
		return stopping() ? ST_INTERRUPTED : ST_ERROR;
	default:
		return ST_ERROR;
	}
}

static enum status open_conn(struct worker *w, int *fdp,
			     uint64_t *connect_ns)
{
	/* The kernel stamps each received skb; recvmsg hands us the stamp. */
	int stamping = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	struct timeval tv = {
		.tv_sec = cfg.timeout_ms / 1000,
		.tv_usec = (cfg.timeout_ms % 1000) * 1000,
	};
	int one = 1, fd, err;
	uint64_t t0 = 0;

	*connect_ns = NO_TIME;
	fd = socket(server_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno_status(errno);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &stamping,
		       sizeof(stamping)))
		w->stamps_refused = true;	/* no arrival_us, said at the end */

	t0 = now_ns();
	if (connect(fd, (struct sockaddr *)&server_addr, server_addrlen))
		goto fail;
	*connect_ns = now_ns() - t0;
	*fdp = fd;
	return ST_OK;
fail:
	err = errno;
	if (t0)
		*connect_ns = now_ns() - t0;
	close(fd);
	return errno_status(err);
}

/* Checks len received bytes that belong at offset off of the message. */
static bool echo_matches(const struct worker *w, size_t off,
			 const unsigned char *data, size_t len)
{
	if (off < hdr_len) {
		size_t n = hdr_len - off < len ? hdr_len - off : len;

		if (memcmp(data, (const unsigned char *)&w->hdr + off, n))
			return false;
		off += n;
		data += n;
		len -= n;
	}
	return len == 0 || !memcmp(data, body + (off - hdr_len), len);
}

/* Sends the part of the message that starts at offset off. */
static ssize_t send_from(struct worker *w, int fd, size_t off, int flags)
{
	struct iovec iov[2];
	struct msghdr mh = { .msg_iov = iov };

	if (off < hdr_len) {
		iov[mh.msg_iovlen].iov_base = (unsigned char *)&w->hdr + off;
		iov[mh.msg_iovlen++].iov_len = hdr_len - off;
		off = hdr_len;
	}
	if (off < cfg.size) {
		iov[mh.msg_iovlen].iov_base = body + (off - hdr_len);
		iov[mh.msg_iovlen++].iov_len = cfg.size - off;
	}
	return sendmsg(fd, &mh, flags | MSG_NOSIGNAL);
}

/* recv() that also keeps the kernel's receive stamp of the bytes read. */
static ssize_t recv_stamped(struct worker *w, int fd, size_t want, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { .iov_base = w->rbuf, .iov_len = want };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctrl.buf,
		.msg_controllen = sizeof(ctrl.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	n = recvmsg(fd, &mh, flags);
	if (n <= 0)
		return n;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		const struct scm_timestamping *ts;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_TIMESTAMPING)
			continue;
		ts = (const struct scm_timestamping *)CMSG_DATA(cm);
		/* ts[0]: software; the last skb read when a read spans several. */
		if (ts->ts[0].tv_sec || ts->ts[0].tv_nsec)
			w->stamp_ns = (uint64_t)ts->ts[0].tv_sec * NSEC +
				      (uint64_t)ts->ts[0].tv_nsec;
	}
	return n;
}

/*
 * A message larger than the socket buffers cannot be sent whole before the
 * echo is read (both sides would block on full buffers), so it is sent and
 * received in step, driven by poll().
 */
static enum status echo_interleaved(struct worker *w, int fd, size_t sent)
{
	struct pollfd pfd = { .fd = fd };
	size_t got = 0;

	while (got < cfg.size) {
		int r;

		pfd.events = POLLIN | (sent < cfg.size ? POLLOUT : 0);
		r = poll(&pfd, 1, (int)cfg.timeout_ms);
		if (r == 0)
			return ST_TIMEOUT;
		if (r < 0) {
			if (errno == EINTR && !stopping())
				continue;
			return errno_status(errno);
		}
		if (sent < cfg.size && (pfd.revents & POLLOUT)) {
			ssize_t n = send_from(w, fd, sent, MSG_DONTWAIT);

			if (n < 0 && errno != EAGAIN)
				return errno_status(errno);
			if (n > 0)
				sent += (size_t)n;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			size_t want = cfg.size - got;
			ssize_t n;

			if (want > w->rbuf_size)
				want = w->rbuf_size;
			n = recv_stamped(w, fd, want, MSG_DONTWAIT);
			if (n == 0)
				return ST_EOF;
			if (n < 0) {
				if (errno == EAGAIN)
					continue;
				return errno_status(errno);
			}
			if (!echo_matches(w, got, w->rbuf, (size_t)n))
				return ST_MISMATCH;
			got += (size_t)n;
		}
	}
	return ST_OK;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

/*
 * Sends one message and reads its whole echo. Times count from intended_ns
 * (rate mode), else from the send. The kernel's stamps are CLOCK_REALTIME,
 * so arrival is measured against CLOCK_REALTIME readings at the send and
 * when recv() returned.
 */
static enum status echo_once(struct worker *w, int fd, unsigned int round,
			     unsigned int message, uint64_t intended_ns,
			     struct times_ns *t)
{
	enum status st = ST_OK;
	uint64_t t0, from, real0, real1;
	size_t got = 0;
	ssize_t n;

	w->hdr.round = round;
	w->hdr.message = message;
	w->stamp_ns = 0;

	t0 = now_ns();
	real0 = realtime_ns();
	from = intended_ns && intended_ns < t0 ? intended_ns : t0;
	n = send_from(w, fd, 0, MSG_DONTWAIT);
	if (n < 0 && errno != EAGAIN) {
		st = errno_status(errno);
		goto out;
	}
	if (n < (ssize_t)cfg.size) {
		st = echo_interleaved(w, fd, n < 0 ? 0 : (size_t)n);
		goto out;
	}

	/* Fast path: the message is on its way; block for the echo. */
	while (got < cfg.size) {
		size_t want = cfg.size - got;

		if (want > w->rbuf_size)
			want = w->rbuf_size;
		n = recv_stamped(w, fd, want, 0);
		if (n == 0) {
			st = ST_EOF;
			break;
		}
		if (n < 0) {
			if (errno == EINTR && !stopping())
				continue;
			st = errno_status(errno);
			break;
		}
		if (!echo_matches(w, got, w->rbuf, (size_t)n)) {
			st = ST_MISMATCH;
			break;
		}
		got += (size_t)n;
	}
out:
	w->last_ns = now_ns();
	real1 = realtime_ns();
	t->rtt = w->last_ns - from;
	t->lag = intended_ns ? t0 - from : NO_TIME;
	t->arrival = NO_TIME;
	if (st == ST_OK && w->stamp_ns) {
		/* A stamp outside [send, recv return] on its own clock means
		 * CLOCK_REALTIME was stepped meanwhile: no honest arrival. */
		if (w->stamp_ns >= real0 && w->stamp_ns <= real1) {
			t->arrival = w->stamp_ns - real0 + (t0 - from);
			/* The two clocks are read nanoseconds apart. */
			if (t->arrival > t->rtt)
				t->arrival = t->rtt;
		} else {
			w->clock_steps++;
		}
	}
	return st;
}

/* ---- the load shapes -------------------------------------------------- */

/* Records the messages of a round that were never sent. */
static void record_aborted(struct worker *w, unsigned int round,
			   unsigned int from)
{
	for (; from < cfg.messages; from++)
		record(w, round, NO_TIME, NULL, ST_ABORTED);
}

/* Closed loop, --rounds x --messages: a connection per round. */
static void run_rounds(struct worker *w)
{
	unsigned int round, msg;

	for (round = 0; round < cfg.rounds && !stopping(); round++) {
		struct times_ns t;
		uint64_t connect_ns;
		enum status st;
		int fd;

		st = open_conn(w, &fd, &connect_ns);
		if (st == ST_INTERRUPTED)
			return;
		if (st != ST_OK) {
			record(w, round, connect_ns, NULL, st);
			record_aborted(w, round, 1);
			continue;
		}
		for (msg = 0; msg < cfg.messages; msg++) {
			st = echo_once(w, fd, round, msg, 0, &t);
			if (st == ST_INTERRUPTED)
				break;
			record(w, round, msg ? NO_TIME : connect_ns, &t, st);
			if (st != ST_OK) {
				record_aborted(w, round, msg + 1);
				break;
			}
		}
		close(fd);
		if (st == ST_INTERRUPTED)
			return;
	}
}

/* Sleeps until CLOCK_MONOTONIC reaches ns; false when told to stop. */
static bool sleep_until(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC),
		.tv_nsec = (long)(ns % NSEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		if (stopping())
			return false;
	return !stopping();
}

/*
 * --duration: one connection per thread (a new one after a failure) until
 * the deadline. Closed loop: the next message leaves when the echo is back.
 * With --rate, message i of thread k is due at k/rate + i*threads/rate
 * seconds after the start, and is timed from then even when it leaves late.
 */
static void run_duration(struct worker *w)
{
	uint64_t interval = 0, due = 0;
	unsigned int round, msg;

	if (cfg.rate) {
		interval = (uint64_t)cfg.threads * NSEC / cfg.rate;
		due = start_ns + (uint64_t)w->id * NSEC / cfg.rate;
	}
	for (round = 0; !stopping() && now_ns() < deadline_ns; round++) {
		uint64_t connect_ns;
		struct times_ns t;
		enum status st;
		int fd;

		st = open_conn(w, &fd, &connect_ns);
		if (st == ST_INTERRUPTED)
			return;
		if (st != ST_OK) {
			record(w, round, connect_ns, NULL, st);
			usleep(10000);	/* do not spin on a dead server */
			continue;
		}
		for (msg = 0; !stopping(); msg++) {
			if (cfg.rate) {
				if (due >= deadline_ns)
					break;
				if (!sleep_until(due))
					break;
			}
			st = echo_once(w, fd, round, msg, due, &t);
			if (st == ST_INTERRUPTED)
				break;
			record(w, round, msg ? NO_TIME : connect_ns, &t, st);
			due += interval;
			if (st != ST_OK || w->last_ns >= deadline_ns)
				break;
		}
		close(fd);
		if (st == ST_OK)	/* the deadline, not a failure */
			break;
	}
}

static void *worker_main(void *arg)
{
	struct sched_param idle = { .sched_priority = 0 };
	struct worker *w = arg;

	/* pid 0: this thread. The server gets the CPUs, we what is left. */
	if (cfg.sched_idle && sched_setscheduler(0, SCHED_IDLE, &idle))
		w->sched_err = errno;
	__atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);

	pthread_mutex_lock(&gate_lock);
	while (!gate)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);

	if (gate > 0) {
		w->have_cpu = env_thread_cpu(&w->cpu0);
		w->begin_ns = now_ns();
		if (cfg.duration)
			run_duration(w);
		else
			run_rounds(w);
		w->end_ns = now_ns();
		w->have_cpu = w->have_cpu && env_thread_cpu(&w->cpu1);
	}
	flush_rows(w);
	__atomic_add_fetch(&threads_finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- summaries ------------------------------------------------------- */

/* A run's (or pooled runs') samples, ready for the summary line. */
struct summary {
	const char *label;
	unsigned int threads, rounds;
	uint64_t samples, failed;
	double *rtt;			/* every ok sample's rtt_us */
	size_t n;
	double *arrival;		/* the arrival_us of those that have one */
	size_t narrival;
	double elapsed_s;
	double *delay;			/* rtt_us - arrival_us, where stamped */
	double delay_share;		/* sum(delay) / sum(rtt); NAN: not known */
	double rq_share;		/* NAN: not known */
};

/*
 * Was the client the bottleneck (see CLIENT_DELAY_US)? Fills *delay with
 * the statistics of its own delay (rtt_us - arrival_us); sorts s->delay.
 */
static bool client_bound(struct summary *s, struct stats *delay)
{
	double rtt_sum = 0, delay_sum = 0;
	size_t i;

	stats_compute(s->delay, s->narrival, delay);
	if (s->narrival && s->narrival == s->n) {
		for (i = 0; i < s->n; i++) {
			rtt_sum += s->rtt[i];
			delay_sum += s->delay[i];
		}
		s->delay_share = delay_sum / rtt_sum;
		return delay->p50 >= CLIENT_DELAY_US &&
		       s->delay_share >= CLIENT_DELAY_SHARE;
	}
	return !isnan(s->rq_share) && s->rq_share >= CLIENT_BOUND_SHARE;
}

/* The one line scripts parse: keep its keys and their order; new keys go
 * at the end. Sorts the sample arrays. */
static void print_summary(struct summary *s)
{
	struct stats rtt, arr;

	stats_compute(s->rtt, s->n, &rtt);
	stats_compute(s->arrival, s->narrival, &arr);
	printf("summary label=%s threads=%u rounds=%u samples=%llu ok=%zu "
	       "failed=%llu p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	       "p999_us=%.1f max_us=%.1f mean_us=%.1f sd_us=%.1f rps=%.0f "
	       "arrival_n=%zu arrival_p50_us=%.1f arrival_p90_us=%.1f "
	       "arrival_p99_us=%.1f arrival_p999_us=%.1f arrival_max_us=%.1f "
	       "client_rq_share=%.2f\n",
	       s->label, s->threads, s->rounds,
	       (unsigned long long)s->samples, s->n,
	       (unsigned long long)s->failed, rtt.p50, rtt.p90, rtt.p99,
	       rtt.p999, rtt.max, rtt.mean, rtt.sd,
	       s->elapsed_s > 0 ? (double)s->n / s->elapsed_s : 0.0,
	       s->narrival, arr.p50, arr.p90, arr.p99, arr.p999, arr.max,
	       s->rq_share);
}

/* Appends v to a growing array; false when out of memory. */
static bool push(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		double *nv = realloc(*v, ncap * sizeof(**v));

		if (!nv)
			return false;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = x;
	return true;
}

/*
 * --summarize FILE...: the summary line of raw files, samples pooled (the
 * repetitions of one server, say), rps over their summed elapsed time.
 * --samples METRIC FILE...: 'thread<TAB>time' of every ok sample instead.
 * Reads only the files; run.sh compare and results/plot.sh read them so.
 */
static int read_raw_files(int nfiles, char **files, const char *metric)
{
	struct summary s = { .rq_share = NAN };
	size_t cap = 0, acap = 0;
	double wait_s = 0, thread_s = 0;
	char label[64] = "";
	int i, rc = 0;

	for (i = 0; i < nfiles && !rc; i++) {
		struct raw_reader r;
		struct raw_entry e;
		int got;

		if (raw_open(&r, files[i])) {
			fprintf(stderr, "%s: cannot read '%s': %s\n", prog,
				files[i], strerror(errno));
			rc = 2;
			break;
		}
		while (!rc && (got = raw_next(&r, &e)) > 0) {
			if (e.kind == RAW_META) {
				if (!strcmp(e.key, "label")) {
					if (label[0] && strcmp(label, e.value)) {
						fprintf(stderr, "%s: '%s' is of server '%s', not '%s': summarize one server at a time\n",
							prog, files[i], e.value, label);
						rc = 2;
					}
					snprintf(label, sizeof(label), "%s", e.value);
				} else if (!strcmp(e.key, "threads")) {
					s.threads = (unsigned int)atoi(e.value);
				} else if (!strcmp(e.key, "rounds")) {
					s.rounds = (unsigned int)atoi(e.value);
				} else if (!strcmp(e.key, "elapsed_s")) {
					s.elapsed_s += strtod(e.value, NULL);
				} else if (!strcmp(e.key, "client_rq_wait_s")) {
					wait_s += strtod(e.value, NULL);
				} else if (!strcmp(e.key, "client_thread_s")) {
					thread_s += strtod(e.value, NULL);
				}
				continue;
			}
			s.samples++;
			if (strcmp(e.status, "ok")) {
				s.failed++;
				continue;
			}
			if (metric) {
				double v = strcmp(metric, "rtt") ? e.arrival_us
								 : e.rtt_us;

				if (!isnan(v))
					printf("%u\t%.1f\n", e.thread, v);
				continue;
			}
			if (!push(&s.rtt, &s.n, &cap, e.rtt_us) ||
			    (!isnan(e.arrival_us) &&
			     !push(&s.arrival, &s.narrival, &acap,
				   e.arrival_us))) {
				fprintf(stderr, "%s: out of memory\n", prog);
				rc = 1;
			}
		}
		if (!rc && got < 0) {
			fprintf(stderr, "%s: %s\n", prog, r.err);
			rc = 2;
		}
		raw_close(&r);
	}
	if (!rc && !metric) {
		s.label = label[0] ? label : "unknown";
		if (thread_s > 0)
			s.rq_share = wait_s / thread_s;
		print_summary(&s);
	}
	free(s.rtt);
	free(s.arrival);
	return rc;
}

/* ---- setup ------------------------------------------------------------ */

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads",  required_argument, NULL, 't' },
		{ "rounds",   required_argument, NULL, 'r' },
		{ "messages", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "rate",     required_argument, NULL, 'R' },
		{ "sched",    required_argument, NULL, 'P' },
		{ "size",     required_argument, NULL, 's' },
		{ "host",     required_argument, NULL, 'H' },
		{ "port",     required_argument, NULL, 'p' },
		{ "output",   required_argument, NULL, 'o' },
		{ "label",    required_argument, NULL, 'l' },
		{ "timeout",  required_argument, NULL, 'T' },
		{ "quiet",    no_argument,       NULL, 'q' },
		{ "meta",     required_argument, NULL, 'M' },
		{ "summarize", no_argument,      NULL, 'S' },
		{ "samples",  required_argument, NULL, 'A' },
		{ "help",     no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool rounds_set = false, messages_set = false, summarize_mode = false;
	const char *metric = NULL;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:r:m:d:R:s:H:p:o:l:T:qh",
				longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			cfg.threads = parse_num("--threads", optarg, 1, 100000);
			break;
		case 'r':
			cfg.rounds = parse_num("--rounds", optarg, 1, 100000000);
			rounds_set = true;
			break;
		case 'm':
			cfg.messages = parse_num("--messages", optarg, 1,
						 100000000);
			messages_set = true;
			break;
		case 'd':
			cfg.duration = parse_num("--duration", optarg, 1, 86400);
			break;
		case 'R':
			cfg.rate = parse_num("--rate", optarg, 1, 10000000);
			break;
		case 'P':
			if (!strcmp(optarg, "idle"))
				cfg.sched_idle = true;
			else if (!strcmp(optarg, "normal"))
				cfg.sched_idle = false;
			else
				usage_error("--sched: '%s' is not idle or normal",
					    optarg);
			break;
		case 's':
			cfg.size = parse_num("--size", optarg, 1, 1UL << 30);
			break;
		case 'H':
			cfg.host = optarg;
			break;
		case 'p':
			cfg.port = parse_num("--port", optarg, 1, 65535);
			break;
		case 'o':
			if (!*optarg)
				usage_error("--output: empty file name");
			cfg.output = optarg;
			break;
		case 'l':
			if (!valid_label(optarg))
				usage_error("--label: '%s' must be 1-63 characters of A-Z a-z 0-9 . _ -",
					    optarg);
			strcpy(cfg.label, optarg);
			break;
		case 'T':
			cfg.timeout_ms = parse_num("--timeout", optarg, 1,
						   3600000);
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'M':
			if (!strchr(optarg, '=') || *optarg == '=' ||
			    strpbrk(optarg, "\n"))
				usage_error("--meta: '%s' is not KEY=VALUE",
					    optarg);
			if (cfg.nmeta == sizeof(cfg.meta) / sizeof(cfg.meta[0]))
				usage_error("--meta: at most %zu of them",
					    sizeof(cfg.meta) / sizeof(cfg.meta[0]));
			cfg.meta[cfg.nmeta++] = optarg;
			break;
		case 'S':
			summarize_mode = true;
			break;
		case 'A':
			if (strcmp(optarg, "rtt") && strcmp(optarg, "arrival"))
				usage_error("--samples: '%s' is not rtt or arrival",
					    optarg);
			metric = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (summarize_mode || metric) {
		if (optind == argc)
			usage_error("%s needs raw files",
				    metric ? "--samples" : "--summarize");
		exit(read_raw_files(argc - optind, argv + optind, metric));
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (cfg.duration && (rounds_set || messages_set))
		usage_error("--duration cannot be combined with --rounds or --messages");
	if (cfg.rate && !cfg.duration)
		usage_error("--rate needs --duration: an open-loop run is timed, e.g. -R 5000 -d 10");
	if (cfg.rate && cfg.rate > cfg.threads * 1000000ULL)
		usage_error("--rate %u over %u threads is more than one message per microsecond each",
			    cfg.rate, cfg.threads);
	if (cfg.duration)
		cfg.rounds = cfg.messages = 0;
	else if ((unsigned long long)cfg.threads * cfg.rounds * cfg.messages >
		 1000000000ULL)
		usage_error("threads x rounds x messages is over 10^9 samples; use --duration for long runs");
}

static void resolve_server(void)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV,
	};
	struct addrinfo *res, *ai;
	char port[8];
	int err;

	snprintf(port, sizeof(port), "%u", cfg.port);
	err = getaddrinfo(cfg.host, port, &hints, &res);
	if (err)
		usage_error("--host: cannot resolve '%s': %s", cfg.host,
			    gai_strerror(err));
	/* The servers listen on IPv4: prefer it when a name has both. */
	for (ai = res; ai; ai = ai->ai_next)
		if (ai->ai_family == AF_INET)
			break;
	if (!ai)
		ai = res;
	memcpy(&server_addr, ai->ai_addr, ai->ai_addrlen);
	server_addrlen = ai->ai_addrlen;
	freeaddrinfo(res);
}

/* Without --label, name the server that ./run.sh started on this port. */
static void default_label(void)
{
	char name[64] = "", port[16] = "";
	FILE *f;

	if (cfg.label[0])
		return;
	strcpy(cfg.label, "unknown");
	f = fopen(STATE_DIR "/server", "r");
	if (!f)
		return;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	f = fopen(STATE_DIR "/port", "r");
	if (f) {
		if (!fgets(port, sizeof(port), f))
			port[0] = '\0';
		fclose(f);
	}
	name[strcspn(name, "\n")] = '\0';
	if (valid_label(name) && strtoul(port, NULL, 10) == cfg.port)
		strcpy(cfg.label, name);
}

static void raise_nofile(struct rlimit *rl)
{
	uint64_t need = (uint64_t)cfg.threads + FD_RESERVE;

	if (env_raise_nofile(need, rl))
		return;
	fprintf(stderr,
		"%s: --threads %u needs %llu open files, but RLIMIT_NOFILE allows %llu (hard limit %llu).\n"
		"Use fewer threads, or raise the hard limit as root (ulimit -Hn, /etc/security/limits.conf).\n",
		prog, cfg.threads, (unsigned long long)need,
		(unsigned long long)rl->rlim_cur,
		(unsigned long long)rl->rlim_max);
	exit(2);
}

/* Under sudo, what bench creates in the repository belongs to the user. */
static void give_to_sudo_user(const char *path)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");

	/* A failure is not worth a word: root keeps the file then. */
	if (uid && gid && geteuid() == 0 &&
	    chown(path, (uid_t)atoi(uid), (gid_t)atoi(gid)) < 0)
		return;
}

/*
 * Without --output: results/runs/YYYYMMDD/LABEL-HHMMSS.tsv in the
 * repository this bench was built in (ECHOLAB_RUNS_DIR replaces
 * results/runs), where 'make plots' finds the day's runs; the current
 * directory when bench lives outside a repository.
 */
static void default_output(char *path, size_t len)
{
	char exe[PATH_MAX], base[PATH_MAX], day[16], stamp[16];
	const char *runs = getenv("ECHOLAB_RUNS_DIR");
	time_t t = time(NULL);
	struct stat sb;
	ssize_t n;

	strftime(day, sizeof(day), "%Y%m%d", localtime(&t));
	strftime(stamp, sizeof(stamp), "%H%M%S", localtime(&t));
	if (runs && *runs) {
		snprintf(base, sizeof(base), "%s", runs);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		/* exe is ROOT/bench/bench */
		snprintf(base, sizeof(base), "%s/results",
			 dirname(dirname(exe)));
		if (n <= 0 || stat(base, &sb) || !S_ISDIR(sb.st_mode)) {
			snprintf(path, len, "bench-%s-%s-%s.tsv", cfg.label,
				 day, stamp);
			return;
		}
		strncat(base, "/runs", sizeof(base) - strlen(base) - 1);
	}
	if (mkdir(base, 0755) == 0)
		give_to_sudo_user(base);
	snprintf(path, len, "%s/%s", base, day);
	if (mkdir(path, 0755) == 0)
		give_to_sudo_user(path);
	snprintf(path + strlen(path), len - strlen(path), "/%s-%s.tsv",
		 cfg.label, stamp);
}

static int open_output(char *path, size_t len)
{
	int fd;

	if (cfg.output)
		snprintf(path, len, "%s", cfg.output);
	else
		default_output(path, len);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path,
			strerror(errno));
		exit(2);
	}
	if (!cfg.output)
		give_to_sudo_user(path);
	return fd;
}

static void write_metadata(int fd, const struct rlimit *rl)
{
	dprintf(fd, "# label=%s\n", cfg.label);
	env_write_metadata(fd);
	dprintf(fd, "# threads=%u\n# rounds=%u\n# messages=%u\n# duration=%u\n"
		"# size=%zu\n# host=%s\n# port=%u\n# timeout_ms=%u\n",
		cfg.threads, cfg.rounds, cfg.messages, cfg.duration, cfg.size,
		cfg.host, cfg.port, cfg.timeout_ms);
	dprintf(fd, "# loop=%s\n# rate=%u\n", cfg.rate ? "open" : "closed",
		cfg.rate);
	dprintf(fd, "# sched=%s\n", cfg.sched_idle ? "idle" : "normal");
	dprintf(fd, "# nofile_soft=%llu\n# nofile_hard=%llu\n",
		(unsigned long long)rl->rlim_cur,
		(unsigned long long)rl->rlim_max);
	for (unsigned int i = 0; i < cfg.nmeta; i++)
		dprintf(fd, "# %s\n", cfg.meta[i]);
	dprintf(fd, "# columns=%s\n", RAW_COLUMNS);
}

static unsigned char *make_body(size_t size)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned char *b = malloc(size ? size : 1);
	size_t i;

	if (!b)
		return NULL;
	for (i = 0; i < size; i++) {	/* xorshift64: binary, every byte */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (unsigned char)(x >> 32);
	}
	return b;
}

/*
 * The kernel stamps received packets only while some socket asks for it,
 * and turns that on from a work item, a moment after the first one asks:
 * the first echoes of a run, or of a round after all its sockets closed,
 * would go unstamped. One socket that asks for the whole run keeps it on.
 */
static int hold_stamping_on(void)
{
	int on = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &on, sizeof(on));
	return fd;
}

/* ---- the run ---------------------------------------------------------- */

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_wake(int sig)
{
	(void)sig;	/* only interrupts a blocking call */
}

static void open_gate(int value)
{
	pthread_mutex_lock(&gate_lock);
	gate = value;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

static void progress(const struct worker *w, unsigned int n, double elapsed,
		     bool final)
{
	uint64_t done = 0, failed = 0, total;
	unsigned int i;

	for (i = 0; i < n; i++) {
		done += __atomic_load_n(&w[i].done, __ATOMIC_RELAXED);
		failed += __atomic_load_n(&w[i].failed, __ATOMIC_RELAXED);
	}
	if (cfg.duration) {
		fprintf(stderr, "\r%s: %.1f/%u s, %llu samples, %llu failed   ",
			prog, elapsed, cfg.duration,
			(unsigned long long)done, (unsigned long long)failed);
	} else {
		total = (uint64_t)n * cfg.rounds * cfg.messages;
		fprintf(stderr,
			"\r%s: %llu/%llu samples (%.0f%%), %llu failed, %.1f s   ",
			prog, (unsigned long long)done,
			(unsigned long long)total,
			total ? 100.0 * (double)done / (double)total : 0.0,
			(unsigned long long)failed, elapsed);
	}
	if (final)
		fputc('\n', stderr);
}

/* Waits for the workers; on SIGINT/SIGTERM wakes them so they stop soon. */
static void wait_workers(struct worker *w, unsigned int n, uint64_t t_start)
{
	bool show = !cfg.quiet && isatty(STDERR_FILENO), shown = false;
	uint64_t last = t_start;

	while (__atomic_load_n(&threads_finished, __ATOMIC_ACQUIRE) < n) {
		uint64_t t;

		usleep(50000);
		t = now_ns();
		if (stop) {
			unsigned int i;

			/* Repeat: a worker may have been between its check
			 * of the flag and a blocking call the first time. */
			for (i = 0; i < n; i++)
				pthread_kill(w[i].tid, SIGUSR1);
		}
		if (show && t - last >= 500000000ull &&
		    t - t_start >= 1000000000ull) {
			progress(w, n, (double)(t - t_start) / 1e9, false);
			last = t;
			shown = true;
		}
	}
	if (shown)
		progress(w, n, (double)(now_ns() - t_start) / 1e9, true);
}

static void install_signals(void)
{
	struct sigaction sa = { 0 };

	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;	/* no SA_RESTART: interrupt syscalls */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_wake;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static double cpu_seconds(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* Waits until every started thread has set its scheduling; 0, or the
 * errno of a thread the kernel refused SCHED_IDLE. */
static int wait_threads_ready(const struct worker *w, unsigned int n)
{
	unsigned int i;

	while (__atomic_load_n(&threads_ready, __ATOMIC_ACQUIRE) < n)
		usleep(1000);
	for (i = 0; i < n; i++)
		if (w[i].sched_err)
			return w[i].sched_err;
	return 0;
}

/* What the run's threads cost and waited, summed; see client_bound(). */
struct client_load {
	uint64_t unstamped, clock_steps;
	bool stamps_refused, have_cpu;
	double run_s, wait_s, thread_s;
};

static void sum_client_load(const struct worker *w, unsigned int n,
			    struct client_load *l)
{
	unsigned int i;

	memset(l, 0, sizeof(*l));
	l->have_cpu = true;
	for (i = 0; i < n; i++) {
		l->unstamped += w[i].unstamped;
		l->clock_steps += w[i].clock_steps;
		l->stamps_refused |= w[i].stamps_refused;
		l->have_cpu &= w[i].have_cpu;
		if (!w[i].have_cpu)
			continue;
		l->run_s += (double)(w[i].cpu1.run_ns - w[i].cpu0.run_ns) / 1e9;
		l->wait_s += (double)(w[i].cpu1.wait_ns - w[i].cpu0.wait_ns) / 1e9;
		l->thread_s += (double)(w[i].end_ns - w[i].begin_ns) / 1e9;
	}
}

/* Says why some ok samples have no arrival_us. */
static void explain_unstamped(const struct client_load *l, size_t ok)
{
	if (!l->unstamped)
		return;
	if (l->stamps_refused)
		fprintf(stderr, "%s: the kernel refused SO_TIMESTAMPING: no arrival_us; rtt_us includes the client's own delay\n",
			prog);
	else if (l->unstamped == ok)
		fprintf(stderr, "%s: the kernel stamped none of the %zu echoes: arrival_us is '-' and only rtt_us (the client's view) is known.\n"
			"  The sk_msg bypass does this: it hands the client's socket the bytes without an skb to stamp.\n",
			prog, ok);
	else
		fprintf(stderr, "%s: %llu of %zu echoes had no receive timestamp (%llu of them because CLOCK_REALTIME was stepped): their arrival_us is '-'\n",
			prog, (unsigned long long)l->unstamped, ok,
			(unsigned long long)l->clock_steps);
}

int main(int argc, char **argv)
{
	uint64_t t_end, samples = 0, failed = 0;
	unsigned int i, started = 0;
	struct summary sum = { .rq_share = NAN, .delay_share = NAN };
	struct client_load load;
	struct rusage ru0, ru1;
	pthread_attr_t attr;
	struct worker *w;
	char path[PATH_MAX];
	struct rlimit rl;
	struct stats delay;
	bool bound;
	double cpu;
	int out_fd, stamp_fd, err;
	long tw;

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	parse_args(argc, argv);
	resolve_server();
	default_label();
	raise_nofile(&rl);

	hdr_len = cfg.size < sizeof(struct msg_header) ?
		  cfg.size : sizeof(struct msg_header);
	body = make_body(cfg.size);
	w = calloc(cfg.threads, sizeof(*w));
	if (!body || !w) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}

	tw = env_time_wait_sockets();
	if (tw > TW_WARN && !cfg.quiet)
		fprintf(stderr,
			"%s: warning: %ld sockets in TIME_WAIT. connect() scans past them for a free port, which slows the\n"
			"client and inflates the tail (1000 x 10 on our 2-core machine: p99 56 ms -> 476 ms). Wait a minute\n"
			"for them to expire for a clean run.\n",
			prog, tw);
	stamp_fd = hold_stamping_on();
	out_fd = open_output(path, sizeof(path));
	write_metadata(out_fd, &rl);
	install_signals();

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	for (i = 0; i < cfg.threads; i++) {
		w[i].id = i;
		w[i].out_fd = out_fd;
		w[i].hdr.magic = HDR_MAGIC;
		w[i].hdr.thread = i;
		w[i].rbuf_size = cfg.size < RECVBUF_MAX ? cfg.size : RECVBUF_MAX;
		w[i].rbuf = malloc(w[i].rbuf_size);
		w[i].out = malloc(OUTBUF_SIZE);
		if (!w[i].rbuf || !w[i].out) {
			fprintf(stderr, "%s: out of memory for thread %u\n",
				prog, i);
			break;
		}
		err = pthread_create(&w[i].tid, &attr, worker_main, &w[i]);
		if (err) {
			fprintf(stderr,
				"%s: cannot start thread %u of %u: %s (check ulimit -u and free memory)\n",
				prog, i + 1, cfg.threads, strerror(err));
			break;
		}
		started++;
	}
	pthread_attr_destroy(&attr);
	err = wait_threads_ready(w, started);
	if (err)
		fprintf(stderr, "%s: the kernel refused SCHED_IDLE for the load threads: %s; run with --sched normal\n",
			prog, strerror(err));
	if (started < cfg.threads || err) {
		open_gate(-1);
		for (i = 0; i < started; i++)
			pthread_join(w[i].tid, NULL);
		fprintf(stderr, "%s: no samples taken; '%s' has only metadata\n",
			prog, path);
		return 1;
	}

	getrusage(RUSAGE_SELF, &ru0);
	start_ns = now_ns();
	deadline_ns = start_ns + (uint64_t)cfg.duration * NSEC;
	open_gate(1);	/* all threads start together */
	wait_workers(w, cfg.threads, start_ns);
	t_end = now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	for (i = 0; i < cfg.threads; i++)
		pthread_join(w[i].tid, NULL);

	/* Gather every ok sample's times for the statistics. */
	for (i = 0; i < cfg.threads; i++) {
		samples += w[i].done;
		failed += w[i].failed;
		if (w[i].write_errno && !cfg.quiet)
			fprintf(stderr, "%s: writing '%s': %s\n", prog, path,
				strerror(w[i].write_errno));
	}
	sum.rtt = malloc((samples - failed + 1) * sizeof(double));
	sum.arrival = malloc((samples - failed + 1) * sizeof(double));
	sum.delay = malloc((samples - failed + 1) * sizeof(double));
	if (!sum.rtt || !sum.arrival || !sum.delay) {
		fprintf(stderr, "%s: out of memory for statistics\n", prog);
		return 1;
	}
	for (i = 0; i < cfg.threads; i++) {
		for (struct chunk *c = w[i].head, *next; c; c = next) {
			for (size_t k = 0; k < c->n; k++) {
				sum.rtt[sum.n++] = c->v[k].rtt;
				if (isnan(c->v[k].arrival))
					continue;
				sum.delay[sum.narrival] =
					c->v[k].rtt - c->v[k].arrival;
				sum.arrival[sum.narrival++] = c->v[k].arrival;
			}
			next = c->next;
			free(c);
		}
		free(w[i].rbuf);
		free(w[i].out);
	}
	sum_client_load(w, cfg.threads, &load);
	cpu = cpu_seconds(&ru1) - cpu_seconds(&ru0);
	sum.label = cfg.label;
	sum.threads = cfg.threads;
	sum.rounds = cfg.rounds;
	sum.samples = samples;
	sum.failed = failed;
	sum.elapsed_s = (double)(t_end - start_ns) / 1e9;
	if (load.have_cpu && load.thread_s > 0)
		sum.rq_share = load.wait_s / load.thread_s;
	bound = client_bound(&sum, &delay);

	dprintf(out_fd, "# elapsed_s=%.6f\n# client_cpu_s=%.3f\n",
		sum.elapsed_s, cpu);
	if (load.have_cpu)
		dprintf(out_fd, "# client_run_s=%.3f\n# client_rq_wait_s=%.3f\n"
			"# client_thread_s=%.3f\n# client_rq_share=%.3f\n",
			load.run_s, load.wait_s, load.thread_s, sum.rq_share);
	if (!isnan(sum.delay_share))
		dprintf(out_fd, "# client_delay_p50_us=%.1f\n# client_delay_share=%.3f\n",
			delay.p50, sum.delay_share);
	dprintf(out_fd, "# bottleneck=%s\n%s",
		bound ? "client" :
		isnan(sum.delay_share) && isnan(sum.rq_share) ? "unknown" : "server",
		stop ? "# interrupted=1\n" : "");
	if (load.unstamped)
		dprintf(out_fd, "# unstamped=%llu\n",
			(unsigned long long)load.unstamped);
	print_summary(&sum);
	fflush(stdout);
	dprintf(out_fd, "# summary label=%s samples=%llu ok=%zu failed=%llu\n",
		cfg.label, (unsigned long long)samples, sum.n,
		(unsigned long long)failed);
	close(out_fd);
	if (bound && !isnan(sum.delay_share))
		fprintf(stderr,
			"%s: warning: the client was the bottleneck: half the echoes waited over %.1f ms in its kernel\n"
			"  for their thread to read them, %.0f%% of the response time it saw (its threads waited for a CPU\n"
			"  %.0f%% of the time). rtt_us measures the client's scheduling; arrival_us (the kernel's stamp)\n"
			"  still times the server. For rtt_us use fewer threads, or a client on other CPUs or machines.\n",
			prog, delay.p50 / 1e3, 100 * sum.delay_share,
			100 * sum.rq_share);
	else if (bound)
		fprintf(stderr,
			"%s: warning: the client was the bottleneck: its threads waited for a CPU %.0f%% of the time,\n"
			"  so rtt_us mostly measures the client's scheduling (no kernel stamps to tell the server's part).\n"
			"  Use fewer threads, or a client on other CPUs or another machine.\n",
			prog, 100 * sum.rq_share);
	if (!cfg.quiet) {
		explain_unstamped(&load, sum.n);
		fprintf(stderr, "client cpu: %.2f s (%.2f us per sample); threads at %s, waiting for a CPU %.0f%% of the time\n",
			cpu, samples ? cpu * 1e6 / (double)samples : 0.0,
			cfg.sched_idle ? "SCHED_IDLE" : "normal priority",
			isnan(sum.rq_share) ? NAN : 100 * sum.rq_share);
		fprintf(stderr, "raw samples: %s%s\n", path,
			stop ? " (interrupted run: every finished sample is in it)" : "");
	}
	if (stamp_fd >= 0)
		close(stamp_fd);
	free(sum.rtt);
	free(sum.arrival);
	free(sum.delay);
	free(w);
	free(body);
	return failed ? 1 : 0;
}
