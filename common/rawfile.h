/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The raw file: bench's one output format, described here once. bench
 * writes it; analysis/summarize and analysis/judge (what cmd/plot.sh and
 * run.sh compare read through) parse it with the reader below.
 *
 *   # key=value                  metadata: before the rows, and those
 *   ...                          known at the end (elapsed_s, the CPU
 *                                per echo, client_*) after them
 *   # columns=thread<TAB>round<TAB>connect_us<TAB>rtt_us<TAB>arrival_us<TAB>lag_us<TAB>sent_us<TAB>status
 *   0<TAB>0<TAB>41.2<TAB>88.0<TAB>61.5<TAB>-<TAB>1204.3<TAB>ok
 *
 * One row per sample (message). Times are microseconds with one decimal;
 * '-' where there is none.
 *
 *   thread      client thread, 0 .. threads-1; with the event engine
 *               (engine=event, --connections): the connection's index,
 *               0 .. connections-1
 *   round       connection number within that thread (that index)
 *   connect_us  connect() time, on a connection's first message only
 *   rtt_us      send -> the whole echo returned by recv(): the response
 *               time as the client's thread saw it (client side)
 *   arrival_us  send -> the kernel's software receive timestamp of the
 *               echo's last bytes (SO_TIMESTAMPING): when the echo reached
 *               the client's kernel (server side). '-' where the kernel
 *               gave no stamp (the sk_msg bypass hands the client no skb).
 *               rtt_us - arrival_us is the client's own delay.
 *   lag_us      rate mode (--rate): how late the message left against its
 *               intended send time; '-' in closed loop
 *   sent_us     when the message was sent, from the moment the threads
 *               were let go (CLOCK_MONOTONIC); '-' for a sample never
 *               sent (a failed connect, an aborted message). The measured
 *               span, first send to last completion, is
 *               max(sent_us + rtt_us - lag_us) - min(sent_us) ('-' lag: 0):
 *               what elapsed_s holds and analysis/summarize divides by.
 *   status      ok, or why the sample failed (timeout, refused, reset,
 *               eof, mismatch, noport, error, aborted)
 *
 * A --warmup run writes no row for a message sent in the warm-up: every
 * row is measured (the count left out is the metadata's warmup_samples).
 *
 * In rate mode rtt_us and arrival_us count from the intended send time, so
 * a server stall shows in full (no coordinated omission); from the actual
 * send they are rtt_us - lag_us and arrival_us - lag_us.
 *
 * Readers find the columns by name in the columns line; status is always
 * the last one (scripts' awk reads it as $NF). Files from before sent_us
 * have seven columns and take their span from elapsed_s; files from
 * before arrival_us and lag_us existed have no columns line and five
 * columns: thread, round, connect_us, rtt_us, status.
 */
#ifndef ECHOLAB_RAWFILE_H
#define ECHOLAB_RAWFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#define RAW_COLUMNS "thread\tround\tconnect_us\trtt_us\tarrival_us\tlag_us\tsent_us\tstatus"
#define RAW_ROW_MAX 160			/* longest row raw_put_row writes */
#define RAW_NO_TIME UINT64_MAX		/* a time written as '-' */

/* One row to write; times in nanoseconds or RAW_NO_TIME. */
struct raw_sample {
	unsigned int thread, round;
	uint64_t connect_ns, rtt_ns, arrival_ns, lag_ns, sent_ns;
	const char *status;
};

/* Formats s as one row, newline included, at p; returns the end. */
char *raw_put_row(char *p, const struct raw_sample *s);

/* ---- reading ---------------------------------------------------------- */

/* What raw_next found; times in µs, NAN for '-' or an absent column. */
struct raw_entry {
	enum { RAW_META, RAW_ROW } kind;
	const char *key, *value;	/* RAW_META: '# key=value' */
	unsigned int thread;		/* RAW_ROW */
	double connect_us, rtt_us, arrival_us, lag_us, sent_us;
	const char *status;
};

struct raw_reader {
	gzFile f;			/* a raw file, gzipped or not */
	const char *path;
	char *line;
	size_t cap;
	int col_thread, col_connect, col_rtt, col_arrival, col_lag,
	    col_status, col_sent, ncols;
	char err[256];			/* why raw_next returned -1 */
};

/* 0, or -1 with errno set. */
int raw_open(struct raw_reader *r, const char *path);
/* 1 with *e filled (valid until the next call), 0 at the end, -1 on a
 * malformed file (r->err says where). */
int raw_next(struct raw_reader *r, struct raw_entry *e);
void raw_close(struct raw_reader *r);

/* A metadata value (raw_entry's value) as a number: NAN when it is not
 * one, or not finite. */
double raw_number(const char *s);

#endif
