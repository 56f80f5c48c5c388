/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event engine (--connections): each load thread drives its share of
 * the connections from one epoll set. bench.c picks it with --connections.
 */
#ifndef BENCH_EVENT_H
#define BENCH_EVENT_H

#include "worker.h"

/* This thread's share of --connections, every sample to w->rec. */
void event_run(struct worker *w);

#endif
