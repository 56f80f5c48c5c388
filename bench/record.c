// SPDX-License-Identifier: GPL-2.0
/* The recorder (record.h): every sample's row and, if ok, its times. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "record.h"
#include "settings.h"

const char *const status_name[] = {
	[ST_OK] = "ok",		[ST_TIMEOUT] = "timeout",
	[ST_REFUSED] = "refused",	[ST_RESET] = "reset",
	[ST_EOF] = "eof",		[ST_MISMATCH] = "mismatch",
	[ST_NOPORT] = "noport",	[ST_ERROR] = "error",
	[ST_ABORTED] = "aborted",	[ST_INTERRUPTED] = "interrupted",
};

enum status status_from_errno(int err)
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

void record_init(struct recorder *r, int out_fd, char *out)
{
	r->out_fd = out_fd;
	r->out = out;
	r->first_sent_ns = UINT64_MAX;
	r->last_done_ns = 0;
}

static int keep_times(struct recorder *r, double rtt_us, double arrival_us)
{
	struct chunk *c = r->tail;

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
		if (r->tail)
			r->tail->next = c;
		else
			r->head = c;
		r->tail = c;
	}
	c->v[c->n].rtt = rtt_us;
	c->v[c->n++].arrival = arrival_us;
	return 0;
}

void record_flush(struct recorder *r)
{
	size_t off = 0;

	while (off < r->out_len) {
		ssize_t n = write(r->out_fd, r->out + off, r->out_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!r->write_errno)
				r->write_errno = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	r->out_len = 0;
}

void record_sample(struct recorder *r, unsigned int id, unsigned int round,
		   uint64_t connect_ns, const struct times_ns *t,
		   enum status st)
{
	static const struct times_ns none = {
		NO_TIME, NO_TIME, NO_TIME, NO_TIME, NO_TIME
	};
	struct raw_sample row = {
		.thread = id,
		.round = round,
		.connect_ns = connect_ns,
	};

	/* Sent in the warm-up (a sample never sent: failed then): counted,
	 * not measured. */
	if ((t ? t->sent : now_ns()) < cfg.measure_ns) {
		r->warmup_samples++;
		return;
	}
	if (t) {
		if (t->sent < r->first_sent_ns)
			r->first_sent_ns = t->sent;
		if (t->done > r->last_done_ns)
			r->last_done_ns = t->done;
	} else {
		t = &none;
	}
	/* Out of memory for the statistics: a failure, never a lost sample. */
	if (st == ST_OK &&
	    keep_times(r, (double)t->rtt / 1e3,
		       t->arrival == NO_TIME ? NAN : (double)t->arrival / 1e3))
		st = ST_ERROR;
	if (st == ST_OK && t->arrival == NO_TIME)
		r->unstamped++;
	row.rtt_ns = t->rtt;
	row.arrival_ns = t->arrival;
	row.lag_ns = t->lag;
	row.sent_ns = t->sent == NO_TIME ? NO_TIME : t->sent - cfg.start_ns;
	row.status = status_name[st];
	r->out_len = (size_t)(raw_put_row(r->out + r->out_len, &row) - r->out);
	if (r->out_len > OUTBUF_SIZE - RAW_ROW_MAX)
		record_flush(r);

	__atomic_store_n(&r->done, r->done + 1, __ATOMIC_RELAXED);
	if (st != ST_OK)
		__atomic_store_n(&r->failed, r->failed + 1, __ATOMIC_RELAXED);
}
