// SPDX-License-Identifier: GPL-2.0
/* The statistics bench reports, on data whose answers are known. TAP.
 *
 * stats-test [CASE...]: those cases (all without one), in this order:
 * empty, single, 1-to-100, 1-to-1000, known, offset, percentile; each
 * result's name starts with its case. A case it does not have: exit 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tap.h"


static void assert_near(double got, double want, const char *name)
{
	int good = (isnan(want) && isnan(got)) || fabs(got - want) < 1e-9;

	if (!good)
		printf("# %s: got %.12g, want %.12g\n", name, got, want);
	ok(good, name);
}

static void test_empty(void)
{
	struct stats s;

	stats_compute(NULL, 0, &s);
	ok(s.n == 0, "empty/n");
	assert_near(s.p50, NAN, "empty/p50 is nan");
	assert_near(s.mean, NAN, "empty/mean is nan");
	assert_near(s.sd, NAN, "empty/sd is nan");
	assert_near(s.max, NAN, "empty/max is nan");
}

static void test_single(void)
{
	double v[] = { 42.5 };
	struct stats s;

	stats_compute(v, 1, &s);
	assert_near(s.min, 42.5, "single/min");
	assert_near(s.p50, 42.5, "single/p50");
	assert_near(s.p999, 42.5, "single/p99.9");
	assert_near(s.mean, 42.5, "single/mean");
	assert_near(s.sd, 0.0, "single/sd is 0");
}

/* 1..100 shuffled: nearest rank gives p50=50, p90=90, p99=99, p99.9=100. */
static void test_one_to_hundred(void)
{
	double v[100];
	struct stats s;
	int i;

	for (i = 0; i < 100; i++)
		v[i] = (double)((i * 37) % 100 + 1);	/* a permutation */
	stats_compute(v, 100, &s);
	assert_near(s.min, 1, "1-to-100/min");
	assert_near(s.max, 100, "1-to-100/max");
	assert_near(s.p50, 50, "1-to-100/p50");
	assert_near(s.p90, 90, "1-to-100/p90");
	assert_near(s.p99, 99, "1-to-100/p99");
	assert_near(s.p999, 100, "1-to-100/p99.9");
	assert_near(s.mean, 50.5, "1-to-100/mean");
	/* Sample sd of 1..n is sqrt(n(n+1)/12). */
	assert_near(s.sd, sqrt(100.0 * 101.0 / 12.0), "1-to-100/sd");
	/* Every element, not the ends only: a sort that leaves the middle
	 * shuffled still gets min and max right. */
	for (i = 0; i < 100 && v[i] == i + 1; i++)
		;
	if (i < 100)
		printf("# 1-to-100/sorted in place: v[%d] = %g, want %d\n", i, v[i], i + 1);
	ok(i == 100, "1-to-100/sorted in place");
}

/* 1000 samples: p99.9 must be rank 999, not the maximum. */
static void test_thousand(void)
{
	double *v = malloc(1000 * sizeof(*v));
	struct stats s;
	int i;

	for (i = 0; i < 1000; i++)
		v[i] = 1000 - i;
	stats_compute(v, 1000, &s);
	assert_near(s.p999, 999, "1-to-1000/p99.9 is rank 999");
	assert_near(s.p99, 990, "1-to-1000/p99");
	assert_near(s.p50, 500, "1-to-1000/p50");
	free(v);
}

static void test_known_sd(void)
{
	/* Mean 5, squared deviations sum to 32, n-1 = 7: sd = sqrt(32/7). */
	double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct stats s;

	stats_compute(v, 8, &s);
	assert_near(s.mean, 5, "known/mean");
	assert_near(s.sd, sqrt(32.0 / 7.0), "known/sd");
	assert_near(s.p50, 4, "known/p50 (rank 4 of 8)");
	assert_near(s.p90, 9, "known/p90 (rank 8 of 8)");
}

static void test_large_offset(void)
{
	/* Naive sum-of-squares loses this; Welford does not. */
	double v[] = { 1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16 };
	struct stats s;

	stats_compute(v, 4, &s);
	assert_near(s.mean, 1e9 + 10, "offset/mean");
	assert_near(s.sd, sqrt(30.0), "offset/sd");
}

static void test_percentile_edges(void)
{
	double v[] = { 10, 20, 30, 40 };

	assert_near(stats_percentile(v, 4, 0), 10, "percentile/p0 is min");
	assert_near(stats_percentile(v, 4, 25), 10, "percentile/p25 rank 1");
	assert_near(stats_percentile(v, 4, 26), 20, "percentile/p26 rank 2");
	assert_near(stats_percentile(v, 4, 100), 40, "percentile/p100 is max");
}

static const struct tap_case cases[] = {
	{ "empty", test_empty },
	{ "single", test_single },
	{ "1-to-100", test_one_to_hundred },
	{ "1-to-1000", test_thousand },
	{ "known", test_known_sd },
	{ "offset", test_large_offset },
	{ "percentile", test_percentile_edges },
};

int main(int argc, char **argv)
{
	return tap_run("stats-test", cases, sizeof(cases) / sizeof(cases[0]),
		       argc, argv);
}
