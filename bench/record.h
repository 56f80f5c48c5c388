/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder: the one way a sample leaves an engine. Both engines hand
 * it every message's times and status; it writes the sample's row into
 * the raw file (rawfile.h) through a per-thread buffer, keeps an ok
 * sample's times for the summary line, and counts what the main thread
 * shows and sums. It calls no engine back.
 */
#ifndef BENCH_RECORD_H
#define BENCH_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rawfile.h"

#define OUTBUF_SIZE	(16 * 1024)	/* per-thread row buffer */
#define CHUNK_SAMPLES	65536
#define NO_TIME		RAW_NO_TIME

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

extern const char *const status_name[];

/* What a socket call's errno means for the sample. */
enum status status_from_errno(int err);

/* What one message measured, ns (NO_TIME: none); sent and done are
 * CLOCK_MONOTONIC readings at the send and when the echo was complete. */
struct times_ns {
	uint64_t rtt, arrival, lag;
	uint64_t sent, done;
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

/* One load thread's samples. */
struct recorder {
	int out_fd;
	char *out;			/* rows not yet written, OUTBUF_SIZE */
	size_t out_len;
	struct chunk *head, *tail;	/* response times of ok samples */
	uint64_t unstamped;		/* ok samples without a stamp */
	/* Read by the main thread for progress; written only here. */
	uint64_t done;
	uint64_t failed;
	int write_errno;
	/* The measured samples' span: the first send, the last completion
	 * (UINT64_MAX and 0 while there is none); the warm-up's samples. */
	uint64_t first_sent_ns, last_done_ns;
	uint64_t warmup_samples;
};

/* An empty recorder that writes its rows to out_fd through out. */
void record_init(struct recorder *r, int out_fd, char *out);

/* Records one sample of connection (the raw file's thread column) id:
 * its row, and its times for the statistics. t NULL: never sent. */
void record_sample(struct recorder *r, unsigned int id, unsigned int round,
		   uint64_t connect_ns, const struct times_ns *t,
		   enum status st);

/* Writes the rows still in the buffer. */
void record_flush(struct recorder *r);

#endif
