// SPDX-License-Identifier: GPL-2.0
/*
 * The threads engine (load.h): one connection at a time per thread, one
 * message at a time on it, in the load shapes a client thread runs,
 * timing every message twice (bench.c says what the times are) and
 * handing every sample to the recorder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "load.h"
#include "mismatch.h"
#include "record.h"
#include "settings.h"
#include "worker.h"

/* ---- one connection, one message -------------------------------------- */

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
	fd = socket(cfg.server_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return status_from_errno(errno);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &stamping,
		       sizeof(stamping)))
		w->stamps_refused = true;	/* no arrival_us, said at the end */

	t0 = now_ns();
	if (connect(fd, (struct sockaddr *)&cfg.server_addr, cfg.server_addrlen))
		goto fail;
	*connect_ns = now_ns() - t0;
	*fdp = fd;
	return ST_OK;
fail:
	err = errno;
	if (t0)
		*connect_ns = now_ns() - t0;
	close(fd);
	return status_from_errno(err);
}

/* Checks len received bytes that belong at offset off of the message. */
static bool echo_matches(const struct worker *w, size_t off,
			 const unsigned char *data, size_t len)
{
	if (off < cfg.hdr_len) {
		size_t n = cfg.hdr_len - off < len ? cfg.hdr_len - off : len;

		if (memcmp(data, (const unsigned char *)&w->hdr + off, n))
			return false;
		off += n;
		data += n;
		len -= n;
	}
	return len == 0 || !memcmp(data, cfg.body + (off - cfg.hdr_len), len);
}

/* Sends the part of the message that starts at offset off. */
static ssize_t send_from(struct worker *w, int fd, size_t off, int flags)
{
	struct iovec iov[2];
	struct msghdr mh = { .msg_iov = iov };

	if (off < cfg.hdr_len) {
		iov[mh.msg_iovlen].iov_base = (unsigned char *)&w->hdr + off;
		iov[mh.msg_iovlen++].iov_len = cfg.hdr_len - off;
		off = cfg.hdr_len;
	}
	if (off < cfg.size) {
		iov[mh.msg_iovlen].iov_base = cfg.body + (off - cfg.hdr_len);
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
			return status_from_errno(errno);
		}
		if (sent < cfg.size && (pfd.revents & POLLOUT)) {
			ssize_t n = send_from(w, fd, sent, MSG_DONTWAIT);

			if (n < 0 && errno != EAGAIN)
				return status_from_errno(errno);
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
				return status_from_errno(errno);
			}
			if (!echo_matches(w, got, w->rbuf, (size_t)n)) {
				mismatch_report(w->id, &w->hdr, got, w->rbuf, (size_t)n);
				return ST_MISMATCH;
			}
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
		st = status_from_errno(errno);
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
			st = status_from_errno(errno);
			break;
		}
		if (!echo_matches(w, got, w->rbuf, (size_t)n)) {
			mismatch_report(w->id, &w->hdr, got, w->rbuf, (size_t)n);
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
	t->sent = t0;
	t->done = w->last_ns;
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
		record_sample(&w->rec, w->id, round, NO_TIME, NULL, ST_ABORTED);
}

/* Opens round's connection; a failure is recorded as the round's first
 * sample. ST_OK, ST_INTERRUPTED (not recorded) or the failure. */
static enum status open_round(struct worker *w, unsigned int round, int *fd,
			      uint64_t *connect_ns)
{
	enum status st = open_conn(w, fd, connect_ns);

	if (st != ST_OK && st != ST_INTERRUPTED)
		record_sample(&w->rec, w->id, round, *connect_ns, NULL, st);
	return st;
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

		st = open_round(w, round, &fd, &connect_ns);
		if (st == ST_INTERRUPTED)
			return;
		if (st != ST_OK) {
			record_aborted(w, round, 1);
			continue;
		}
		for (msg = 0; msg < cfg.messages; msg++) {
			st = echo_once(w, fd, round, msg, 0, &t);
			if (st == ST_INTERRUPTED)
				break;
			record_sample(&w->rec, w->id, round,
				      msg ? NO_TIME : connect_ns, &t, st);
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
 * the deadline; with --messages N a new one after every N messages. Closed
 * loop: the next message leaves when the echo is back. With --rate,
 * message i of thread k is due at k/rate + i*threads/rate seconds after
 * the start, and is timed from then even when it leaves late.
 */
static void run_duration(struct worker *w)
{
	uint64_t interval = 0, due = 0;
	unsigned int round, msg;
	bool over = false;

	if (cfg.rate) {
		interval = (uint64_t)cfg.threads * NSEC / cfg.rate;
		due = cfg.start_ns + (uint64_t)w->id * NSEC / cfg.rate;
	}
	for (round = 0; !over && !stopping() && now_ns() < cfg.deadline_ns;
	     round++) {
		uint64_t connect_ns;
		struct times_ns t;
		enum status st;
		int fd;

		st = open_round(w, round, &fd, &connect_ns);
		if (st == ST_INTERRUPTED)
			return;
		if (st != ST_OK) {
			usleep(10000);	/* do not spin on a dead server */
			continue;
		}
		for (msg = 0; !cfg.messages || msg < cfg.messages; msg++) {
			if (stopping() ||
			    (cfg.rate && (due >= cfg.deadline_ns ||
					  !sleep_until(due)))) {
				over = true;
				break;
			}
			st = echo_once(w, fd, round, msg, due, &t);
			if (st == ST_INTERRUPTED) {
				over = true;
				break;
			}
			record_sample(&w->rec, w->id, round,
				      msg ? NO_TIME : connect_ns, &t, st);
			due += interval;
			if (st != ST_OK)	/* a new connection */
				break;
			if (w->last_ns >= cfg.deadline_ns) {
				over = true;
				break;
			}
		}
		close(fd);
	}
}

void load_run(struct worker *w)
{
	if (cfg.duration)
		run_duration(w);
	else
		run_rounds(w);
}
