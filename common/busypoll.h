/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --busy-poll USEC, alike in both userspace servers: after a completion,
 * a worker polls for the next without sleeping (epoll_wait with a zero
 * timeout; io_uring_enter without waiting) for up to USEC, then sleeps as
 * usual. A request that arrives within USEC of the last one finds the
 * worker running: no wake-up, no context switch, at the price of a CPU
 * kept busy for USEC after every completion. A quiet server sleeps again
 * USEC after its last completion.
 */
#ifndef ECHOLAB_BUSYPOLL_H
#define ECHOLAB_BUSYPOLL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define BUSY_POLL_MAX_US	1000000u	/* --busy-poll's upper bound: 1 s */

struct busy_poll {
	uint64_t budget_ns;	/* 0: off */
	uint64_t last_ns;	/* the last turn that found work */
	unsigned long long empty;	/* polls that found nothing */
};

static inline uint64_t busy_poll_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether this turn polls without sleeping: within the budget of the last
 * completion. */
static inline bool busy_poll_spin(const struct busy_poll *bp)
{
	return bp->budget_ns && busy_poll_now() - bp->last_ns < bp->budget_ns;
}

/* After a turn: it found n completions (it polled when spun is true). */
static inline void busy_poll_done(struct busy_poll *bp, unsigned int n,
				  bool spun)
{
	if (!bp->budget_ns)
		return;
	if (n)
		bp->last_ns = busy_poll_now();
	else if (spun)
		bp->empty++;
}

#endif
