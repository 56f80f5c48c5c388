// SPDX-License-Identifier: GPL-2.0
/* Intervals over repeated runs; what they are and why: interval.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interval.h"
#include "stats.h"

double interval_median(const double *sorted, size_t n)
{
	if (n == 0)
		return NAN;
	if (n % 2)
		return sorted[n / 2];
	return (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

/* P(Binomial(n, 1/2) = i), in logs: exact enough for any n of runs. */
static double binom_half(size_t n, size_t i)
{
	return exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
		   lgamma((double)(n - i) + 1) - (double)n * log(2.0));
}

double interval_median_ranks(size_t n, double conf, size_t *lo, size_t *hi)
{
	double tail, next;
	size_t k = 1;

	if (n == 0) {
		*lo = *hi = 0;
		return 0.0;
	}
	/* [x_(k), x_(n+1-k)] misses the median when k - 1 or fewer runs
	 * fall below it, or as few above: tail is P(B <= k - 1), B the
	 * number of runs below the median, Binomial(n, 1/2). Narrow the
	 * interval while the next one still covers conf. */
	tail = binom_half(n, 0);
	while (2 * (k + 1) <= n + 1) {
		next = tail + binom_half(n, k);
		if (1.0 - 2.0 * next < conf - 1e-12)
			break;
		tail = next;
		k++;
	}
	*lo = k;
	*hi = n + 1 - k;
	return 1.0 - 2.0 * tail > 0.0 ? 1.0 - 2.0 * tail : 0.0;
}

uint64_t interval_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniform index in [0, n): the high half of a 128-bit product (its bias,
 * n / 2^64, is far below anything a bootstrap can see). */
static size_t draw(uint64_t *state, size_t n)
{
	return (size_t)(((unsigned __int128)interval_random(state) * n) >> 64);
}

/* The median of a resample of v (n values) drawn into buf. */
static double resample_median(const double *v, size_t n, double *buf,
			      uint64_t *state)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = v[draw(state, n)];
	qsort(buf, n, sizeof(*buf), stats_cmp_double);
	return interval_median(buf, n);
}

int interval_ratio_bootstrap(const double *a, size_t na, const double *b,
			     size_t nb, unsigned int resamples, double conf,
			     uint64_t seed, double *lo, double *hi)
{
	double *ratios, *buf;
	uint64_t state = seed;
	unsigned int r;

	*lo = *hi = NAN;
	if (!na || !nb || !resamples)
		return 0;
	ratios = malloc(resamples * sizeof(*ratios));
	buf = malloc((na > nb ? na : nb) * sizeof(*buf));
	if (!ratios || !buf) {
		free(ratios);
		free(buf);
		return -1;
	}
	for (r = 0; r < resamples; r++) {
		double ma = resample_median(a, na, buf, &state);
		double mb = resample_median(b, nb, buf, &state);

		/* Both zero: equal. A zero below a figure: no finite ratio,
		 * but one that still sorts above every other. */
		if (mb == 0.0)
			ratios[r] = ma == 0.0 ? 1.0 : INFINITY;
		else
			ratios[r] = ma / mb;
	}
	qsort(ratios, resamples, sizeof(*ratios), stats_cmp_double);
	*lo = stats_percentile(ratios, resamples, 50.0 * (1.0 - conf));
	*hi = stats_percentile(ratios, resamples, 50.0 * (1.0 + conf));
	free(ratios);
	free(buf);
	return 0;
}
