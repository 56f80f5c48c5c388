/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The load threads: each waits at the gate until the main thread opens it,
 * runs the engine bench.c chose for it (load.c's threads, or event.c's
 * connections) and hands every sample to its recorder (record.h). What a
 * thread shares with the main thread is here.
 */
#ifndef BENCH_WORKER_H
#define BENCH_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "env.h"
#include "record.h"
#include "settings.h"

struct worker {
	pthread_t tid;
	unsigned int id;
	void (*engine)(struct worker *w);	/* load_run or event_run */
	struct recorder rec;			/* its samples */
	/* The threads engine's: the message in flight and its echo. */
	struct msg_header hdr;
	unsigned char *rbuf;
	size_t rbuf_size;
	uint64_t stamp_ns;		/* last receive stamp, CLOCK_REALTIME */
	uint64_t clock_steps;		/* stamps dropped: the clock stepped */
	bool stamps_refused;		/* SO_TIMESTAMPING failed */
	int sched_err;			/* SCHED_IDLE refused: its errno */
	int setup_errno;		/* the event engine could not start */
	struct env_cpu cpu0, cpu1;	/* scheduler statistics, start and end */
	bool have_cpu;
	uint64_t begin_ns, end_ns;	/* when this thread ran the load */
	uint64_t last_ns;		/* when the last echo completed */
} __attribute__((aligned(64)));

/* Threads whose scheduling is set (they wait at the gate). */
extern unsigned int threads_ready;

/* A load thread (pthread_create's start routine); arg: its worker. */
void *worker_thread(void *arg);

/* Lets the threads go (1) or sends them home without a run (-1). */
void worker_open_gate(int value);

/* Waits until n threads have finished or CLOCK_MONOTONIC reaches
 * until_ns, whichever comes first; true when they have finished. A
 * finishing thread wakes it at once, so the end of a run is seen within
 * microseconds, not at the next poll. */
bool worker_wait_finished(unsigned int n, uint64_t until_ns);

#endif
