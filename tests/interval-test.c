// SPDX-License-Identifier: GPL-2.0
/* judge's interval math (analysis/interval.c) on data whose answers are
 * known, and the coverage of its intervals where the theory gives it. TAP.
 *
 * interval-test [CASE...]: those cases (all without one), in this order:
 * median, ranks, coverage, random, bootstrap; each result's name starts
 * with its case. A case it does not have: exit 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interval.h"
#include "stats.h"
#include "tap.h"


static void assert_near(double got, double want, double tol, const char *name)
{
	int good = (isnan(want) && isnan(got)) || fabs(got - want) <= tol;

	if (!good)
		printf("# %s: got %.12g, want %.12g\n", name, got, want);
	ok(good, name);
}

static void test_median(void)
{
	double odd[] = { 1, 2, 7 }, even[] = { 1, 2, 7, 10 };

	assert_near(interval_median(NULL, 0), NAN, 0, "median/empty is nan");
	assert_near(interval_median(odd, 1), 1, 0, "median/one");
	assert_near(interval_median(odd, 3), 2, 0, "median/odd: the middle");
	assert_near(interval_median(even, 4), 4.5, 0,
		    "median/even: mean of the two middle");
}

/* ranks and coverage against sums of binomial coefficients by hand. */
static void check_ranks(size_t n, size_t want_lo, double want_cov)
{
	char name[96];
	size_t lo, hi;
	double cov = interval_median_ranks(n, 0.95, &lo, &hi);

	snprintf(name, sizeof(name), "ranks/n=%zu: [x_(%zu), x_(%zu)]", n,
		 want_lo, n ? n + 1 - want_lo : 0);
	if (lo != want_lo || hi != (n ? n + 1 - want_lo : 0))
		printf("# got [%zu, %zu]\n", lo, hi);
	ok(lo == want_lo && hi == (n ? n + 1 - want_lo : 0), name);
	snprintf(name, sizeof(name), "ranks/n=%zu: coverage %.6f", n, want_cov);
	assert_near(cov, want_cov, 1e-9, name);
}

static void test_ranks(void)
{
	check_ranks(0, 0, 0);
	check_ranks(1, 1, 0);			/* one run: no interval */
	check_ranks(3, 1, 0.75);		/* 1 - 2/8 */
	check_ranks(5, 1, 0.9375);		/* 1 - 2/32: below 95% */
	check_ranks(6, 1, 0.96875);		/* 1 - 2/64 */
	check_ranks(8, 1, 1 - 2.0 / 256);	/* k=2 gives 1 - 18/256 < .95 */
	check_ranks(9, 2, 1 - 20.0 / 512);	/* C(9,0) + C(9,1) = 10 */
	check_ranks(10, 2, 1 - 22.0 / 1024);
	/* C(20,0..5) = 1 + 20 + 190 + 1140 + 4845 + 15504 = 21700 */
	check_ranks(20, 6, 1 - 43400.0 / 1048576);
}

/* The interval's coverage, measured: n uniform runs, median 0.5. */
static void test_coverage(size_t n)
{
	uint64_t state = 7;
	double v[64], want;
	size_t lo, hi, i;
	int t, hit = 0, trials = 20000;
	char name[96];

	want = interval_median_ranks(n, 0.95, &lo, &hi);
	for (t = 0; t < trials; t++) {
		for (i = 0; i < n; i++)
			v[i] = (double)(interval_random(&state) >> 11) * 0x1.0p-53;
		qsort(v, n, sizeof(*v), stats_cmp_double);
		hit += v[lo - 1] <= 0.5 && 0.5 <= v[hi - 1];
	}
	/* 20000 trials: the standard error is under 0.0035. */
	snprintf(name, sizeof(name),
		 "coverage/n=%zu: measured within 0.015 of %.4f", n, want);
	assert_near((double)hit / trials, want, 0.015, name);
}

static void test_coverages(void)
{
	test_coverage(5);
	test_coverage(9);
	test_coverage(20);
}

static void test_random(void)
{
	uint64_t state = 0, again = 0;
	int counts[5] = { 0 }, i, good = 1;

	/* splitmix64's published first output from a zero state. */
	ok(interval_random(&state) == 0xe220a8397b1dcdafull,
	   "random/splitmix64's first value from 0");
	state = 0;
	for (i = 0; i < 100; i++)
		good &= interval_random(&state) == interval_random(&again);
	ok(good, "random/the same seed, the same sequence");
	for (i = 0; i < 50000; i++)
		counts[(interval_random(&state) >> 32) % 5]++;
	for (i = 0, good = 1; i < 5; i++)
		good &= abs(counts[i] - 10000) < 500;
	ok(good, "random/five bins of 50000 draws even within 5%");
}

static void test_bootstrap(void)
{
	double a[] = { 2, 2, 2 }, b[] = { 1, 1, 1 };
	double one[] = { 1, 2, 3 }, five[] = { 1, 2, 3, 4, 5 };
	double x[] = { 10, 11, 12, 13, 14 }, y[] = { 5, 5.5, 6, 6.5, 7 };
	double lo, hi, lo2, hi2;

	interval_ratio_bootstrap(a, 3, b, 3, 2000, 0.95, 1, &lo, &hi);
	assert_near(lo, 2, 0, "bootstrap/constant runs: lo is the ratio");
	assert_near(hi, 2, 0, "bootstrap/constant runs: hi is the ratio");

	/* Three runs: a resample's median is the lowest run with
	 * probability 7/27, so the 2.5th percentile of the ratio is
	 * min/max (probability (7/27)^2 = 0.067): the interval is the
	 * range's, [1/3, 3]. */
	interval_ratio_bootstrap(one, 3, one, 3, 10000, 0.95, 1, &lo, &hi);
	assert_near(lo, 1.0 / 3, 1e-12, "bootstrap/n=3: lo is min/max");
	assert_near(hi, 3, 1e-12, "bootstrap/n=3: hi is max/min");

	/* Five runs: P(ratio <= 1/4) = 0.018, P(ratio <= 1/3) = 0.040. */
	interval_ratio_bootstrap(five, 5, five, 5, 10000, 0.95, 1, &lo, &hi);
	assert_near(lo, 1.0 / 3, 1e-12, "bootstrap/n=5: lo is 1/3");
	assert_near(hi, 3, 1e-12, "bootstrap/n=5: hi is 3");

	interval_ratio_bootstrap(x, 5, y, 5, 10000, 0.95, 99, &lo, &hi);
	ok(lo < 2 && hi > 2 && lo > 1.4 && hi < 2.8,
	   "bootstrap/twice the runs: the interval holds 2, not 1");
	interval_ratio_bootstrap(x, 5, y, 5, 10000, 0.95, 99, &lo2, &hi2);
	ok(lo == lo2 && hi == hi2, "bootstrap/the same seed, the same interval");

	interval_ratio_bootstrap(x, 5, x, 5, 10000, 0.95, 5, &lo, &hi);
	ok(lo <= 1 && hi >= 1, "bootstrap/the same runs twice: holds 1");

	interval_ratio_bootstrap(x, 0, y, 5, 2000, 0.95, 1, &lo, &hi);
	ok(isnan(lo) && isnan(hi), "bootstrap/an empty group: nan");
	b[0] = b[1] = b[2] = 0;
	interval_ratio_bootstrap(a, 3, b, 3, 2000, 0.95, 1, &lo, &hi);
	ok(isinf(lo) && isinf(hi), "bootstrap/a zero below: infinite, not nan");
}

static const struct tap_case cases[] = {
	{ "median", test_median },
	{ "ranks", test_ranks },
	{ "coverage", test_coverages },
	{ "random", test_random },
	{ "bootstrap", test_bootstrap },
};

int main(int argc, char **argv)
{
	return tap_run("interval-test", cases, sizeof(cases) / sizeof(cases[0]),
		       argc, argv);
}
