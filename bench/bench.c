// SPDX-License-Identifier: GPL-2.0
/*
 * bench - closed-loop TCP echo load client.
 *
 * N threads start together. Each opens a connection per round (or keeps one
 * for the whole run with --duration), sends a message, reads the whole echo
 * back, checks it byte for byte and records the response time. Every sample
 * is kept: rows go to a TSV file as they finish, and the summary line is
 * computed from all of them at the end.
 *
 * Per message the hot path is: clock_gettime (vDSO), sendmsg, recv (looped
 * on partial reads), memcmp, clock_gettime, and a row formatted into a
 * thread-local buffer. The buffer is written out once it holds ~16 KiB and
 * the response times are kept in 64 Ki-sample chunks, so writes and
 * allocations happen once per hundreds or tens of thousands of messages.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

#define STATE_DIR	"/run/echolab"	/* where run.sh keeps the server's state */
#define OUTBUF_SIZE	(16 * 1024)	/* per-thread row buffer */
#define ROW_MAX		96		/* longest row we ever format */
#define RECVBUF_MAX	(64 * 1024)	/* per-thread receive buffer */
#define CHUNK_SAMPLES	65536
#define HDR_MAGIC	0x6563686fu	/* "echo" */
#define FD_RESERVE	32		/* descriptors besides the sockets */
#define TW_WARN		1000		/* TIME_WAIT sockets that skew a run */

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

struct chunk {
	struct chunk *next;
	size_t n, cap;
	double v[];
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
	struct chunk *head, *tail;	/* response times of ok samples, µs */
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
};

static struct sockaddr_storage server_addr;
static socklen_t server_addrlen;
static unsigned char *body;		/* shared, read-only message body */
static size_t hdr_len;			/* min(size, sizeof(struct msg_header)) */
static uint64_t deadline_ns;		/* --duration mode, CLOCK_MONOTONIC */

static volatile sig_atomic_t stop;
static unsigned int threads_finished;

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate;			/* 1: go, -1: abort */

static const char *prog = "bench";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [options]\n"
"Closed-loop TCP echo load client: every thread sends a message, waits for\n"
"the whole echo, checks it byte for byte and records the response time.\n"
"\n"
"  -t, --threads N     concurrent client threads (default 1000)\n"
"  -r, --rounds N      rounds per thread (default 10)\n"
"  -m, --messages N    messages per connection (default 1: every round is\n"
"                      connect, send, receive, close; more keeps the\n"
"                      connection open for N messages)\n"
"  -d, --duration SEC  throughput mode: each thread keeps one connection and\n"
"                      sends as fast as echoes return for SEC seconds\n"
"                      (excludes --rounds and --messages)\n"
"  -s, --size BYTES    message size (default 64)\n"
"  -H, --host ADDR     server address (default 127.0.0.1)\n"
"  -p, --port N        server port (default 12345)\n"
"  -o, --output FILE   raw samples, TSV (default bench-LABEL-DATE.tsv)\n"
"  -l, --label NAME    server name written into the file (default: the\n"
"                      server ./run.sh started on this port, else 'unknown')\n"
"  -T, --timeout MS    connect/send/receive timeout (default 5000)\n"
"  -q, --quiet         print only the summary line\n"
"      --meta K=V      add a '# K=V' metadata line to the file (repeatable)\n"
"      --summarize FILE...  print the summary line of raw files (samples\n"
"                      pooled) instead of running; nothing is sent\n"
"  -h, --help          this text\n"
"\n"
"Output: one row per sample, 'thread round connect_us rtt_us status',\n"
"under '# key=value' metadata lines, then on stdout one line:\n"
"summary label= threads= rounds= samples= ok= failed= p50_us= p90_us=\n"
"        p99_us= p999_us= max_us= mean_us= sd_us= rps=\n"
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

static int keep_rtt(struct worker *w, double us)
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
	c->v[c->n++] = us;
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

/* Appends ns as microseconds with one decimal; returns the end. */
static char *put_us(char *p, uint64_t ns)
{
	char tmp[24];
	uint64_t tenths = (ns + 50) / 100;
	int i = 0;

	tmp[i++] = (char)('0' + tenths % 10);
	tmp[i++] = '.';
	tenths /= 10;
	do {
		tmp[i++] = (char)('0' + tenths % 10);
		tenths /= 10;
	} while (tenths);
	while (i)
		*p++ = tmp[--i];
	return p;
}

static char *put_uint(char *p, uint64_t v)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (i)
		*p++ = tmp[--i];
	return p;
}

#define NO_TIME UINT64_MAX	/* written as '-' */

static void record(struct worker *w, unsigned int round, uint64_t connect_ns,
		   uint64_t rtt_ns, enum status st)
{
	char *p = w->out + w->out_len;
	const char *name;

	/* Out of memory for the statistics: a failure, never a lost sample. */
	if (st == ST_OK && keep_rtt(w, (double)rtt_ns / 1000.0))
		st = ST_ERROR;
	name = status_name[st];

	p = put_uint(p, w->id);
	*p++ = '\t';
	p = put_uint(p, round);
	*p++ = '\t';
	p = connect_ns == NO_TIME ? (*p = '-', p + 1) : put_us(p, connect_ns);
	*p++ = '\t';
	p = rtt_ns == NO_TIME ? (*p = '-', p + 1) : put_us(p, rtt_ns);
	*p++ = '\t';
	while (*name)
		*p++ = *name++;
	*p++ = '\n';
	w->out_len = (size_t)(p - w->out);
	if (w->out_len > OUTBUF_SIZE - ROW_MAX)
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

static enum status open_conn(int *fdp, uint64_t *connect_ns)
{
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
			n = recv(fd, w->rbuf, want, MSG_DONTWAIT);
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

static enum status echo_once(struct worker *w, int fd, unsigned int round,
			     unsigned int message, uint64_t *rtt_ns)
{
	enum status st = ST_OK;
	size_t got = 0;
	uint64_t t0;
	ssize_t n;

	w->hdr.round = round;
	w->hdr.message = message;

	t0 = now_ns();
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
		n = recv(fd, w->rbuf, want, 0);
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
	*rtt_ns = w->last_ns - t0;
	return st;
}

/* ---- the two load shapes ---------------------------------------------- */

static void run_rounds(struct worker *w)
{
	unsigned int round, msg;

	for (round = 0; round < cfg.rounds && !stopping(); round++) {
		uint64_t connect_ns, rtt_ns;
		enum status st;
		int fd;

		st = open_conn(&fd, &connect_ns);
		if (st == ST_INTERRUPTED)
			return;
		if (st != ST_OK) {
			record(w, round, connect_ns, NO_TIME, st);
			for (msg = 1; msg < cfg.messages; msg++)
				record(w, round, NO_TIME, NO_TIME, ST_ABORTED);
			continue;
		}
		for (msg = 0; msg < cfg.messages; msg++) {
			st = echo_once(w, fd, round, msg, &rtt_ns);
			if (st == ST_INTERRUPTED)
				break;
			record(w, round, msg ? NO_TIME : connect_ns, rtt_ns,
			       st);
			if (st != ST_OK) {
				while (++msg < cfg.messages)
					record(w, round, NO_TIME, NO_TIME,
					       ST_ABORTED);
				break;
			}
		}
		close(fd);
		if (st == ST_INTERRUPTED)
			return;
	}
}


static void run_duration(struct worker *w)
{
	unsigned int round, msg;

	for (round = 0; !stopping() && now_ns() < deadline_ns; round++) {
		uint64_t connect_ns, rtt_ns;
		enum status st;
		int fd;

		st = open_conn(&fd, &connect_ns);
		if (st == ST_INTERRUPTED)
			return;
		if (st != ST_OK) {
			record(w, round, connect_ns, NO_TIME, st);
			usleep(10000);	/* do not spin on a dead server */
			continue;
		}
		for (msg = 0; !stopping(); msg++) {
			st = echo_once(w, fd, round, msg, &rtt_ns);
			if (st == ST_INTERRUPTED)
				break;
			record(w, round, msg ? NO_TIME : connect_ns, rtt_ns,
			       st);
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
	struct worker *w = arg;

	pthread_mutex_lock(&gate_lock);
	while (!gate)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);

	if (gate > 0) {
		if (cfg.duration)
			run_duration(w);
		else
			run_rounds(w);
	}
	flush_rows(w);
	__atomic_add_fetch(&threads_finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- summaries ---------------------------------------------------- */

/* The one line scripts parse: keep its keys and their order. */
static void print_summary(const char *label, unsigned int threads,
			  unsigned int rounds, uint64_t samples, size_t ok,
			  uint64_t failed, const struct stats *st, double rps)
{
	printf("summary label=%s threads=%u rounds=%u samples=%llu ok=%zu "
	       "failed=%llu p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	       "p999_us=%.1f max_us=%.1f mean_us=%.1f sd_us=%.1f rps=%.0f\n",
	       label, threads, rounds, (unsigned long long)samples, ok,
	       (unsigned long long)failed, st->p50, st->p90, st->p99,
	       st->p999, st->max, st->mean, st->sd, rps);
}

/*
 * --summarize FILE...: the summary line of raw files, samples pooled (the
 * repetitions of one server, say), rps over their summed elapsed time.
 * Reads only the files; used by run.sh compare and the plots.
 */
static int summarize(int nfiles, char **files)
{
	unsigned int threads = 0, rounds = 0;
	uint64_t samples = 0, failed = 0;
	double *v = NULL, elapsed = 0.0;
	size_t n = 0, cap = 0, len = 0;
	char label[64] = "", *line = NULL;
	struct stats st;
	int i;

	for (i = 0; i < nfiles; i++) {
		FILE *f = fopen(files[i], "r");
		ssize_t got;

		if (!f) {
			fprintf(stderr, "%s: cannot read '%s': %s\n", prog,
				files[i], strerror(errno));
			return 2;
		}
		while ((got = getline(&line, &len, f)) > 0) {
			char *cols[5], *p = line, status[16];
			int c;

			line[strcspn(line, "\n")] = '\0';
			if (line[0] == '#') {
				char l[64];

				if (sscanf(line, "# label=%63s", l) == 1) {
					if (label[0] && strcmp(label, l)) {
						fprintf(stderr, "%s: '%s' is of server '%s', not '%s': summarize one server at a time\n",
							prog, files[i], l, label);
						fclose(f);
						return 2;
					}
					strcpy(label, l);
				}
				sscanf(line, "# threads=%u", &threads);
				sscanf(line, "# rounds=%u", &rounds);
				if (!strncmp(line, "# elapsed_s=", 12))
					elapsed += strtod(line + 12, NULL);
				continue;
			}
			for (c = 0; c < 5 && p; c++)
				cols[c] = strsep(&p, "\t");
			if (c < 5 || !cols[4]) {
				fprintf(stderr, "%s: '%s': not a bench raw file (row '%s')\n",
					prog, files[i], line);
				fclose(f);
				return 2;
			}
			snprintf(status, sizeof(status), "%s", cols[4]);
			samples++;
			if (strcmp(status, "ok")) {
				failed++;
				continue;
			}
			if (n == cap) {
				double *nv;

				cap = cap ? cap * 2 : 4096;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					fprintf(stderr, "%s: out of memory\n", prog);
					fclose(f);
					return 1;
				}
				v = nv;
			}
			v[n++] = strtod(cols[3], NULL);
		}
		fclose(f);
	}
	free(line);
	stats_compute(v, n, &st);
	print_summary(label[0] ? label : "unknown", threads, rounds, samples,
		      n, failed, &st, elapsed > 0 ? (double)n / elapsed : 0.0);
	free(v);
	return 0;
}

/* ---- setup ------------------------------------------------------------ */

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads",  required_argument, NULL, 't' },
		{ "rounds",   required_argument, NULL, 'r' },
		{ "messages", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "size",     required_argument, NULL, 's' },
		{ "host",     required_argument, NULL, 'H' },
		{ "port",     required_argument, NULL, 'p' },
		{ "output",   required_argument, NULL, 'o' },
		{ "label",    required_argument, NULL, 'l' },
		{ "timeout",  required_argument, NULL, 'T' },
		{ "quiet",    no_argument,       NULL, 'q' },
		{ "meta",     required_argument, NULL, 'M' },
		{ "summarize", no_argument,      NULL, 'S' },
		{ "help",     no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool rounds_set = false, messages_set = false, summarize_mode = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:r:m:d:s:H:p:o:l:T:qh",
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
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (summarize_mode) {
		if (optind == argc)
			usage_error("--summarize needs raw files");
		exit(summarize(argc - optind, argv + optind));
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (cfg.duration && (rounds_set || messages_set))
		usage_error("--duration cannot be combined with --rounds or --messages");
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
	rlim_t need = (rlim_t)cfg.threads + FD_RESERVE;

	getrlimit(RLIMIT_NOFILE, rl);
	if (rl->rlim_cur < rl->rlim_max) {
		rl->rlim_cur = rl->rlim_max;
		setrlimit(RLIMIT_NOFILE, rl);
		getrlimit(RLIMIT_NOFILE, rl);
	}
	if (rl->rlim_cur < need) {
		fprintf(stderr,
			"%s: --threads %u needs %llu open files, but RLIMIT_NOFILE allows %llu (hard limit %llu).\n"
			"Use fewer threads, or raise the hard limit as root (ulimit -Hn, /etc/security/limits.conf).\n",
			prog, cfg.threads, (unsigned long long)need,
			(unsigned long long)rl->rlim_cur,
			(unsigned long long)rl->rlim_max);
		exit(2);
	}
}

/* TIME_WAIT sockets now (the "tw" of /proc/net/sockstat), -1 if unknown. */
static long time_wait_sockets(void)
{
	char line[256];
	long tw = -1;
	FILE *f = fopen("/proc/net/sockstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " tw ");

		if (!strncmp(line, "TCP:", 4) && p)
			tw = strtol(p + 4, NULL, 10);
	}
	fclose(f);
	return tw;
}

static void read_sysctl(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	if (fgets(buf, (int)len, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		for (char *p = buf; *p; p++)
			if (*p == '\t')
				*p = '-';
	}
	fclose(f);
}

static int open_output(char *path, size_t len)
{
	int fd;

	if (cfg.output) {
		snprintf(path, len, "%s", cfg.output);
	} else {
		char stamp[32];
		time_t t = time(NULL);

		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&t));
		snprintf(path, len, "bench-%s-%s.tsv", cfg.label, stamp);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path,
			strerror(errno));
		exit(2);
	}
	return fd;
}

static void write_metadata(int fd, const struct rlimit *rl)
{
	static const struct { const char *key, *path; } sysctls[] = {
		{ "somaxconn", "/proc/sys/net/core/somaxconn" },
		{ "tcp_max_syn_backlog", "/proc/sys/net/ipv4/tcp_max_syn_backlog" },
		{ "ip_local_port_range", "/proc/sys/net/ipv4/ip_local_port_range" },
		{ "tcp_tw_reuse", "/proc/sys/net/ipv4/tcp_tw_reuse" },
		{ "tcp_max_tw_buckets", "/proc/sys/net/ipv4/tcp_max_tw_buckets" },
	};
	char date[32], host[256] = "unknown", val[64];
	struct utsname u;
	time_t t = time(NULL);
	unsigned int i;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	dprintf(fd, "# label=%s\n# kernel=%s\n# date=%s\n# hostname=%s\n",
		cfg.label, u.release, date, host);
	dprintf(fd, "# threads=%u\n# rounds=%u\n# messages=%u\n# duration=%u\n"
		"# size=%zu\n# host=%s\n# port=%u\n# timeout_ms=%u\n",
		cfg.threads, cfg.rounds, cfg.messages, cfg.duration, cfg.size,
		cfg.host, cfg.port, cfg.timeout_ms);
	dprintf(fd, "# nofile_soft=%llu\n# nofile_hard=%llu\n",
		(unsigned long long)rl->rlim_cur,
		(unsigned long long)rl->rlim_max);
	for (i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		read_sysctl(sysctls[i].path, val, sizeof(val));
		dprintf(fd, "# %s=%s\n", sysctls[i].key, val);
	}
	dprintf(fd, "# time_wait=%ld\n", time_wait_sockets());
	for (i = 0; i < cfg.nmeta; i++)
		dprintf(fd, "# %s\n", cfg.meta[i]);
	dprintf(fd, "# columns=thread\tround\tconnect_us\trtt_us\tstatus\n");
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

int main(int argc, char **argv)
{
	uint64_t t_start, t_end, samples = 0, failed = 0;
	unsigned int i, started = 0;
	struct rusage ru0, ru1;
	pthread_attr_t attr;
	struct worker *w;
	char path[PATH_MAX];
	struct rlimit rl;
	struct stats st;
	double *all, secs, cpu, rps;
	size_t nall = 0;
	int out_fd, err;
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

	tw = time_wait_sockets();
	if (tw > TW_WARN && !cfg.quiet)
		fprintf(stderr,
			"%s: warning: %ld sockets in TIME_WAIT. connect() scans past them for a free port, which slows the\n"
			"client and inflates the tail (1000 x 10 on our 2-core machine: p99 56 ms -> 476 ms). Wait a minute\n"
			"for them to expire for a clean run.\n",
			prog, tw);
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
	if (started < cfg.threads) {
		open_gate(-1);
		for (i = 0; i < started; i++)
			pthread_join(w[i].tid, NULL);
		fprintf(stderr, "%s: no samples taken; '%s' has only metadata\n",
			prog, path);
		return 1;
	}

	getrusage(RUSAGE_SELF, &ru0);
	t_start = now_ns();
	deadline_ns = t_start + (uint64_t)cfg.duration * 1000000000u;
	open_gate(1);	/* all threads start together */
	wait_workers(w, cfg.threads, t_start);
	t_end = now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	for (i = 0; i < cfg.threads; i++)
		pthread_join(w[i].tid, NULL);

	/* Gather every ok response time for the statistics. */
	for (i = 0; i < cfg.threads; i++) {
		samples += w[i].done;
		failed += w[i].failed;
		if (w[i].write_errno && !cfg.quiet)
			fprintf(stderr, "%s: writing '%s': %s\n", prog, path,
				strerror(w[i].write_errno));
	}
	all = malloc((samples - failed + 1) * sizeof(*all));
	if (!all) {
		fprintf(stderr, "%s: out of memory for statistics\n", prog);
		return 1;
	}
	for (i = 0; i < cfg.threads; i++) {
		for (struct chunk *c = w[i].head, *next; c; c = next) {
			memcpy(all + nall, c->v, c->n * sizeof(*all));
			nall += c->n;
			next = c->next;
			free(c);
		}
		free(w[i].rbuf);
		free(w[i].out);
	}
	stats_compute(all, nall, &st);
	secs = (double)(t_end - t_start) / 1e9;
	rps = secs > 0 ? (double)nall / secs : 0.0;
	cpu = cpu_seconds(&ru1) - cpu_seconds(&ru0);

	dprintf(out_fd, "# elapsed_s=%.6f\n# client_cpu_s=%.3f\n%s",
		secs, cpu, stop ? "# interrupted=1\n" : "");
	print_summary(cfg.label, cfg.threads, cfg.rounds, samples, nall, failed,
		      &st, rps);
	fflush(stdout);
	dprintf(out_fd, "# summary label=%s samples=%llu ok=%zu failed=%llu\n",
		cfg.label, (unsigned long long)samples, nall,
		(unsigned long long)failed);
	close(out_fd);
	if (!cfg.quiet) {
		fprintf(stderr, "client cpu: %.2f s (%.2f us per sample)\n",
			cpu, samples ? cpu * 1e6 / (double)samples : 0.0);
		fprintf(stderr, "raw samples: %s%s\n", path,
			stop ? " (interrupted run: every finished sample is in it)" : "");
	}
	free(all);
	free(w);
	free(body);
	return failed ? 1 : 0;
}
