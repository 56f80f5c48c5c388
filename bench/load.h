/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The threads engine: each load thread keeps one connection at a time and
 * one message out on it, for --rounds x --messages, or for --duration,
 * closed loop or at --rate. bench.c picks it when there is no
 * --connections.
 */
#ifndef BENCH_LOAD_H
#define BENCH_LOAD_H

#include "worker.h"

/* This thread's load, every sample to w->rec. */
void load_run(struct worker *w);

#endif
