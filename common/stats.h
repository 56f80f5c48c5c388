/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Summary statistics over a set of samples (response times in µs).
 *
 * Percentiles use the nearest-rank method: the p-th percentile of n sorted
 * samples is the one at rank ceil(p/100 * n), so it is always a value that
 * was actually measured. Every field is NAN when there are no samples.
 */
#ifndef ECHOLAB_STATS_H
#define ECHOLAB_STATS_H

#include <stdbool.h>
#include <stddef.h>

struct stats {
	size_t n;
	double min, max;
	double mean;
	double sd;		/* sample standard deviation (n - 1); 0 for n = 1 */
	double p50, p90, p99, p999;
};

/* Sorts v in place, then fills *s. */
void stats_compute(double *v, size_t n, struct stats *s);

/* p in [0, 100]; sorted must be ascending. NAN when n == 0. */
double stats_percentile(const double *sorted, size_t n, double p);

/* Appends x to *v (n values, room for *cap), growing it; false when out
 * of memory (*v is then as it was). */
bool stats_push(double **v, size_t *n, size_t *cap, double x);

/* qsort's comparison of two doubles, ascending. */
int stats_cmp_double(const void *a, const void *b);

#endif
