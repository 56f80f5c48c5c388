// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>

#include "stats.h"

int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats_percentile(const double *sorted, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return NAN;
	/* The small epsilon keeps 99.9% of 1000 at rank 999, not 1000. */
	rank = (size_t)ceil(p / 100.0 * (double)n - 1e-9);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

void stats_compute(double *v, size_t n, struct stats *s)
{
	double mean = 0.0, m2 = 0.0;
	size_t i;

	s->n = n;
	if (n == 0) {
		s->min = s->max = s->mean = s->sd = NAN;
		s->p50 = s->p90 = s->p99 = s->p999 = NAN;
		return;
	}

	qsort(v, n, sizeof(*v), stats_cmp_double);

	/* Welford: one pass, no catastrophic cancellation on large sums. */
	for (i = 0; i < n; i++) {
		double d = v[i] - mean;

		mean += d / (double)(i + 1);
		m2 += d * (v[i] - mean);
	}

	s->min = v[0];
	s->max = v[n - 1];
	s->mean = mean;
	s->sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0.0;
	s->p50 = stats_percentile(v, n, 50.0);
	s->p90 = stats_percentile(v, n, 90.0);
	s->p99 = stats_percentile(v, n, 99.0);
	s->p999 = stats_percentile(v, n, 99.9);
}

bool stats_push(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		double *nv = realloc(*v, ncap * sizeof(**v));

		if (!nv)
			return false;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = x;
	return true;
}
