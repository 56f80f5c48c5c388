/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Intervals over repeated runs: each run of a comparison gives one figure
 * (its p50, its requests per second, ...), and these say what the runs of
 * one server agree on and how two servers' runs differ. judge uses them.
 *
 * A median's interval is distribution-free: the order statistics
 * [x_(k), x_(n+1-k)] cover the population median with probability
 * 1 - 2 P(Binomial(n, 1/2) <= k - 1), for any continuous distribution of
 * the runs, with no resampling. The widest, [min, max], covers it with
 * 1 - 2^(1-n): below 95% for n <= 5 (93.75% at n = 5), which
 * interval_median_ranks reports rather than hides.
 *
 * A ratio of two groups' medians has no such exact interval: its interval
 * is the percentile bootstrap (resample each group's runs with
 * replacement, take the ratio of the resamples' medians, read the 2.5th
 * and 97.5th percentiles of the ratios), from a seeded generator so that
 * the same runs always give the same interval.
 */
#ifndef ANALYSIS_INTERVAL_H
#define ANALYSIS_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

/* The median of n ascending values: the middle one, or the mean of the
 * two middle ones when n is even. NAN when n == 0. */
double interval_median(const double *sorted, size_t n);

/*
 * The order statistics that bound a confidence interval for the median of
 * n runs: the narrowest [x_(k), x_(n+1-k)] whose coverage is at least
 * conf (0.95, say), or [x_(1), x_(n)] when none reaches it. Sets the
 * 1-based ranks *lo and *hi (both 0 when n == 0) and returns the exact
 * coverage of that interval (0 when n < 2).
 */
double interval_median_ranks(size_t n, double conf, size_t *lo, size_t *hi);

/* splitmix64: a small generator with a 64-bit state, enough for the
 * bootstrap's draws. */
uint64_t interval_random(uint64_t *state);

/*
 * The percentile-bootstrap interval of median(a) / median(b) at confidence
 * conf: resamples times, each group resampled with replacement to its own
 * size, drawing from a generator seeded with seed. Fills *lo and *hi (NAN
 * when either group is empty or resamples is 0). Returns 0, or -1 when
 * out of memory.
 */
int interval_ratio_bootstrap(const double *a, size_t na, const double *b,
			     size_t nb, unsigned int resamples, double conf,
			     uint64_t seed, double *lo, double *hi);

#endif
