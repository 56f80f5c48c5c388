// SPDX-License-Identifier: GPL-2.0
/*
 * judge - what a comparison's repeated runs support.
 *
 * Each raw file is one run of one server (its label). Per run: requests
 * per second, the p50 and p99 response times, the server's CPU per echo.
 * Per server and figure: the median over its runs and a distribution-free
 * interval for it. Per server against the baseline: the ratio, paired by
 * repetition where the runs allow it (the median of the per-repetition
 * ratios, within their order statistics), else the ratio of the medians
 * with a percentile-bootstrap interval; each interval with its coverage;
 * and one of three verdicts: a difference when the whole interval lies
 * beyond the noise threshold (criterion.rs's rule), equivalent when it
 * lies within it (an equivalence test's two one-sided bounds), else
 * inconclusive. CPU per echo falls as the load rises (wake-ups, interrupts
 * and system calls are shared by more messages), so it is judged only
 * between runs at the same achieved rate. interval.h has the statistics;
 * docs/bench.md says why these.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpulist.h"
#include "disturbed.h"
#include "interval.h"
#include "summary.h"
#include "rawfile.h"
#include "stats.h"

#define CONF		0.95		/* every interval's confidence */
#define RESAMPLES	10000		/* bootstrap resamples per ratio */
#define SEED		0x6a75646765ull	/* "judge": fixed, so reproducible */
#define MIN_RUNS	3		/* fewer on either side: no verdict */
#define MIN_PAIRS	5		/* fewer: the ratio is not paired */
#define NAME_MAX_LEN	64

const char *prog = "judge";

enum figure { P50, P99, RPS, MACHINE, CPU, NFIGURES };

static const struct {
	const char *name, *title, *unit, *fmt;
	bool lower_is_better, client_bound_out;
	const char *better, *worse;
} figures[NFIGURES] = {
	[P50] = { "p50", "p50", " (us)", "%.1f", true, true,
		  "faster", "slower" },
	[P99] = { "p99", "p99", " (us)", "%.1f", true, true,
		  "faster", "slower" },
	[RPS] = { "rps", "req/s", "", "%.0f", false, true,
		  "faster", "slower" },
	[MACHINE] = { "machine", "machine CPU", " (us/echo)", "%.2f", true,
		      false, "cheaper", "costlier" },
	[CPU] = { "cpu", "CPU", " (us/echo)", "%.2f", true, false,
		  "cheaper", "costlier" },
};

/* One run: one raw file's figures (NAN: the file does not have it). */
struct run {
	const char *path;
	char label[NAME_MAX_LEN], repeat[NAME_MAX_LEN], sweep[NAME_MAX_LEN];
	bool client_bound;
	bool disturbed;			/* the host took it: counts for nothing */
	char why[256];			/* ... and why */
	bool window;			/* rps over window_s, not elapsed_s */
	char scope[NAME_MAX_LEN];	/* cpu_scope: whose CPUs cpu counts */
	size_t ok, narrival;
	bool stamped;			/* every ok sample has an arrival_us */
	double rps, cpu;
	double machine;			/* server's and client's CPUs together */
	double p50_arrival, p99_arrival, p50_rtt, p99_rtt;
};

/* One label's runs and, per figure, what they say. */
struct group {
	const char *label;
	struct run **runs;
	size_t nruns;
	struct figure_stats {
		double *v;		/* the runs' figures, ascending */
		size_t n, excluded;
		size_t disturbed;	/* runs left out: disturbed.h */
		double median, lo, hi, coverage;
		double ratio, ratio_lo, ratio_hi, ratio_coverage;
		size_t pairs;		/* > 0: the ratio is paired by repeat */
		const char *verdict;
		char why[96];		/* a verdict that needs figures */
	} fig[NFIGURES];
};

static const char *baseline = "user";
static double threshold = 0.03;
static double rate_tolerance = 0.02;	/* CPU per echo: rates this close */
static bool markdown;
static bool by_arrival;		/* latency from arrival_us, else rtt_us */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [--baseline LABEL] [--threshold PCT] [--rate-tolerance PCT]\n"
"       [--markdown] FILE...\n"
"What a comparison's repeated runs support: per server (the label of its\n"
"raw files, each file one run) and figure, the median over its runs with a\n"
"95%% interval; per server against the baseline, a ratio with a 95%%\n"
"interval and a verdict.\n"
"\n"
"  FILE...             bench raw files, gzipped or not, one run each\n"
"      --baseline LABEL\n"
"                      the server every other is compared with (default user)\n"
"      --threshold PCT the noise threshold: a difference is declared only\n"
"                      when the whole ratio interval lies beyond 1 +- PCT%%\n"
"                      (default 3)\n"
"      --rate-tolerance PCT\n"
"                      CPU per echo is judged only where the two servers'\n"
"                      achieved rates (the medians of their runs' req/s)\n"
"                      differ by at most PCT%% (default 2): it falls as the\n"
"                      load rises, so at unequal rates it compares loads,\n"
"                      not servers\n"
"      --markdown      a table for summary.md, with a paragraph on how to\n"
"                      read it, instead of one line per server and figure\n"
"  -h, --help          this text\n"
"\n"
"Figures per run: p50 and p99 of arrival_us where every ok sample of every\n"
"run has one, else of rtt_us (source= says which); rps, ok samples per\n"
"second of window_s, else of elapsed_s; cpu, server_cpu_us_per_echo;\n"
"machine, the server's and the client's CPU per echo together (below).\n"
"A thinned file (cmd/thin.sh, thinned=K) gives its full run's p50 and p99\n"
"from its trailer (full_arrival_p50_us, full_arrival_p99_us where\n"
"full_arrival_n equals full_ok, else full_p50_us, full_p99_us), not those\n"
"of the 1 in K rows it kept; its rate from full_ok.\n"
"Client-bound runs are left out of p50, p99 and rps (excluded=) and kept\n"
"for cpu: bench's bottleneck=client, or, with server and client on CPUs of\n"
"their own (cpu_scope=split), the client's busy %.0f%% of window_s or more\n"
"and the server's less (the client could send no faster).\n"
"Runs the host disturbed are left out of every figure (disturbed=) and\n"
"listed after the verdicts: the server's or the client's CPUs lost over\n"
"%.0f%% of the window to steal, busy time went below zero, or the server's\n"
"CPU per echo is under %.0f us with echoes; a pair with one of them drops\n"
"out of the paired ratios.\n"
"The median's interval is [x_(k), x_(n+1-k)] of the runs\n"
"(exact, distribution-free; coverage= is its actual coverage, 0.938 for 5\n"
"runs). The ratio is paired (pairs= > 0) where every counted run of the\n"
"server and of the baseline has a partner of the same repeat=, %d pairs or\n"
"more: the median of the pairs' ratios, within the order statistics of\n"
"those ratios, so that a drift of the machine common to a repetition\n"
"cancels; else (pairs=0) the ratio of the medians within a percentile\n"
"bootstrap, %d resamples of each server's runs, a fixed seed.\n"
"ratio_coverage= is the ratio's interval's coverage: exact where paired\n"
"(0.938 for 5 pairs), the bootstrap's nominal 0.950 where not.\n"
"Verdicts, threshold T: a difference when the whole interval lies beyond\n"
"1 +- T: faster or slower (p50, p99: lower is faster; rps: higher is\n"
"faster), cheaper or costlier (cpu); equivalent when it lies within\n"
"[1 - T, 1 + T]; inconclusive when neither (too noisy to say); too few\n"
"runs (fewer than %d on either side). cpu is not judged where the runs\n"
"counted other CPUs than the baseline's (cpu_scope differs: 'all', every\n"
"CPU, against 'split'); machine is: the server's and the client's CPUs\n"
"together (server_cpu_us_per_echo plus client_cpu_us_per_echo where they\n"
"are apart, the server's alone where it counts every CPU, none where they\n"
"share CPUs), in compare the whole machine. Neither is judged where the\n"
"achieved rates differ by more than --rate-tolerance (closed-loop runs,\n"
"each server at its own rate).\n"
"\n"
"Output, one line per server and figure, the baseline's first:\n"
"judge label= figure= source= n= excluded= disturbed= median= lo= hi=\n"
"      coverage= ratio= ratio_lo= ratio_hi= ratio_coverage= pairs=\n"
"      verdict=WORDS (the rest of the line;\n"
"      '-' where there is nothing, as the baseline's ratio)\n"
"then a line per disturbed run:\n"
"disturbed label= repeat= file= reason=WORDS (the rest of the line)\n"
"Exit status: 0, 1 when a file cannot be read or the baseline has no\n"
"runs, 2 for bad usage.\n",
		prog, 100 * CPU_SATURATED, 100 * STEAL_BOUND, CPU_FLOOR_US,
		MIN_PAIRS, RESAMPLES, MIN_RUNS);
}

/*
 * A thinned file's record of its full run (cmd/thin.sh): its exact counts
 * and percentiles, which the 1 in K rows it kept cannot give again (a
 * run's p99 is its 1% slowest, a few dozen of its rows once thinned).
 * NAN: the file does not say.
 */
struct trailer {
	double thinned, ok, arrival_n;
	double p50, p99, arrival_p50, arrival_p99;
};

static void trailer_init(struct trailer *t)
{
	t->thinned = t->ok = t->arrival_n = NAN;
	t->p50 = t->p99 = t->arrival_p50 = t->arrival_p99 = NAN;
}

/* A '# key=value' line into t; false when it is none of the trailer's. */
static bool trailer_meta(struct trailer *t, const char *key,
			 const char *value)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "thinned", offsetof(struct trailer, thinned) },
		{ "full_ok", offsetof(struct trailer, ok) },
		{ "full_arrival_n", offsetof(struct trailer, arrival_n) },
		{ "full_p50_us", offsetof(struct trailer, p50) },
		{ "full_p99_us", offsetof(struct trailer, p99) },
		{ "full_arrival_p50_us", offsetof(struct trailer, arrival_p50) },
		{ "full_arrival_p99_us", offsetof(struct trailer, arrival_p99) },
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i].key)) {
			*(double *)((char *)t + keys[i].off) = raw_number(value);
			return true;
		}
	return false;
}

/*
 * A thinned run's percentiles are its full run's, from the trailer. From
 * the rows kept, uring-no-minwait's median p99 in
 * results/20261127-uring-minwait-load1000 read 3578.9 us, not 660.8, and
 * its verdict against user inconclusive, not faster. The arrival times
 * count where every ok sample of the full run had one (full_arrival_n ==
 * full_ok), the rule the rows follow in an unthinned file; a figure the
 * trailer lacks (a file thinned before thin.sh kept them) stays the rows'.
 */
static void trailer_apply(struct run *run, const struct trailer *t)
{
	if (!(t->thinned > 1))
		return;
	if (!isnan(t->ok) && !isnan(t->arrival_n))
		run->stamped = t->arrival_n == t->ok;
	if (!isnan(t->p50) && !isnan(t->p99)) {
		run->p50_rtt = t->p50;
		run->p99_rtt = t->p99;
	}
	if (run->stamped && !isnan(t->arrival_p50) &&
	    !isnan(t->arrival_p99)) {
		run->p50_arrival = t->arrival_p50;
		run->p99_arrival = t->arrival_p99;
	}
}

/* The samples of the file being read, kept for the next one. */
static double *rtt, *arrival;
static size_t rtt_cap, arrival_cap;

/* The CPUs in a list such as "0-1,3" (bench's server_cpus, client_cpus);
 * 1 when it names none. */
static int cpu_count(const char *list)
{
	cpu_set_t set;

	return cpu_set_parse(list, &set) && CPU_COUNT(&set) ? CPU_COUNT(&set) : 1;
}

/* Reads one raw file into *run; 0, or 1 after saying why not. */
static int read_run(const char *path, struct run *run)
{
	double elapsed = NAN, window = NAN, ok;
	double client_busy = NAN, server_busy = NAN, client_cpu = NAN;
	int server_cpus = 1, client_cpus = 1;	/* how many each side had */
	bool split = false;
	char server[NAME_MAX_LEN] = "";
	struct stats s;
	struct raw_reader r;
	struct raw_entry e;
	struct disturbance dist;
	struct trailer trailer;
	size_t nrtt = 0;
	int got;

	disturbance_init(&dist);
	trailer_init(&trailer);
	memset(run, 0, sizeof(*run));
	run->path = path;
	run->cpu = NAN;
	run->machine = NAN;
	if (raw_open(&r, path)) {
		fprintf(stderr, "%s: cannot read '%s': %s\n", prog, path,
			strerror(errno));
		return 1;
	}
	while ((got = raw_next(&r, &e)) > 0) {
		if (e.kind == RAW_META) {
			disturbance_meta(&dist, e.key, e.value);
			if (trailer_meta(&trailer, e.key, e.value))
				continue;
			if (!strcmp(e.key, "label"))
				snprintf(run->label, sizeof(run->label), "%s",
					 e.value);
			else if (!strcmp(e.key, "server"))
				snprintf(server, sizeof(server), "%s", e.value);
			else if (!strcmp(e.key, "repeat"))
				snprintf(run->repeat, sizeof(run->repeat), "%s",
					 e.value);
			else if (!strcmp(e.key, "sweep_value"))
				snprintf(run->sweep, sizeof(run->sweep), "%s",
					 e.value);
			else if (!strcmp(e.key, "elapsed_s"))
				elapsed = raw_number(e.value);
			else if (!strcmp(e.key, "window_s"))
				window = raw_number(e.value);
			else if (!strcmp(e.key, "server_cpu_us_per_echo"))
				run->cpu = raw_number(e.value);
			else if (!strcmp(e.key, "client_cpu_us_per_echo"))
				client_cpu = raw_number(e.value);
			else if (!strcmp(e.key, "bottleneck"))
				run->client_bound |= !strcmp(e.value, "client");
			else if (!strcmp(e.key, "client_busy_s"))
				client_busy = raw_number(e.value);
			else if (!strcmp(e.key, "server_busy_s"))
				server_busy = raw_number(e.value);
			else if (!strcmp(e.key, "server_cpus"))
				server_cpus = cpu_count(e.value);
			else if (!strcmp(e.key, "client_cpus"))
				client_cpus = cpu_count(e.value);
			else if (!strcmp(e.key, "cpu_scope")) {
				split = !strcmp(e.value, "split");
				snprintf(run->scope, sizeof(run->scope), "%s",
					 e.value);
			}
			continue;
		}
		if (strcmp(e.status, "ok"))
			continue;
		run->ok++;
		if ((!isnan(e.rtt_us) &&
		     !stats_push(&rtt, &nrtt, &rtt_cap, e.rtt_us)) ||
		    (!isnan(e.arrival_us) &&
		     !stats_push(&arrival, &run->narrival, &arrival_cap,
			   e.arrival_us))) {
			fprintf(stderr, "%s: out of memory reading '%s'\n",
				prog, path);
			raw_close(&r);
			return 1;
		}
	}
	if (got < 0) {
		fprintf(stderr, "%s: %s\n", prog, r.err);
		raw_close(&r);
		return 1;
	}
	raw_close(&r);

	if (!run->label[0])
		snprintf(run->label, sizeof(run->label), "%s",
			 server[0] ? server : "unknown");
	/* The host stole the run, or its CPU reading is one no server
	 * could make: not evidence (disturbed.h). */
	run->disturbed = disturbance_found(&dist, run->ok, run->why,
					   sizeof(run->why));
	/*
	 * A client whose own CPUs were busy nearly all the window while the
	 * server's were not could send no faster: the run measured the
	 * client, whatever bench's delay rule found (with 50 connections the
	 * echoes wait under its 1 ms, yet bench's CPU was 99.7% busy and the
	 * server's 90%). Only where the two sides' CPUs are apart (split).
	 */
	if (split && window > 0 &&
	    client_busy >= CPU_SATURATED * window * client_cpus &&
	    !(server_busy >= CPU_SATURATED * window * server_cpus) &&
	    server_busy >= CPU_SERVER_AT_WORK * window * server_cpus)
		run->client_bound = true;
	/* window_s, where bench gives it, is the measured window itself. A
	 * thinned file (cmd/thin.sh) keeps every Kth row and the run's count
	 * of ok samples as full_ok, its rate from every sample; its
	 * percentiles are the full run's too (trailer_apply). */
	/* The server's and the client's CPUs together: apart (split), the
	 * sum of the two; with the server's counted over every CPU (all),
	 * that figure alone (the client's CPUs are among them); sharing
	 * CPUs, not known (their time would count twice). */
	if (split)
		run->machine = run->cpu + client_cpu;
	else if (!strcmp(run->scope, "all"))
		run->machine = run->cpu;
	run->window = window > 0;
	ok = trailer.ok > 0 ? trailer.ok : (double)run->ok;
	if (run->window)
		run->rps = ok / window;
	else if (elapsed > 0)
		run->rps = ok / elapsed;
	else
		run->rps = NAN;
	stats_compute(rtt, nrtt, &s);
	run->p50_rtt = s.p50;
	run->p99_rtt = s.p99;
	stats_compute(arrival, run->narrival, &s);
	run->p50_arrival = s.p50;
	run->p99_arrival = s.p99;
	run->stamped = run->narrival == run->ok;
	trailer_apply(run, &trailer);
	return 0;
}

static double run_figure(const struct run *run, enum figure f)
{
	switch (f) {
	case P50:
		return by_arrival ? run->p50_arrival : run->p50_rtt;
	case P99:
		return by_arrival ? run->p99_arrival : run->p99_rtt;
	case RPS:
		return run->rps;
	case MACHINE:
		return run->machine;
	default:
		return run->cpu;
	}
}

/* Whether run r counts for figure f (disturbed runs for none,
 * client-bound runs not for latency and req/s) and has it. */
static bool counts(const struct run *r, enum figure f)
{
	return !r->disturbed &&
	       !(r->client_bound && figures[f].client_bound_out) &&
	       !isnan(run_figure(r, f));
}

/* A group's figure: its runs' values, their median and its interval. */
static int describe(struct group *g, enum figure f)
{
	struct figure_stats *fs = &g->fig[f];
	size_t i, lo, hi;

	fs->v = malloc((g->nruns ? g->nruns : 1) * sizeof(*fs->v));
	if (!fs->v)
		return -1;
	for (i = 0; i < g->nruns; i++) {
		if (g->runs[i]->disturbed) {
			fs->disturbed++;
			continue;
		}
		if (g->runs[i]->client_bound && figures[f].client_bound_out) {
			fs->excluded++;
			continue;
		}
		if (counts(g->runs[i], f))
			fs->v[fs->n++] = run_figure(g->runs[i], f);
	}
	qsort(fs->v, fs->n, sizeof(*fs->v), stats_cmp_double);
	fs->median = interval_median(fs->v, fs->n);
	fs->coverage = interval_median_ranks(fs->n, CONF, &lo, &hi);
	fs->lo = fs->n ? fs->v[lo - 1] : NAN;
	fs->hi = fs->n ? fs->v[hi - 1] : NAN;
	fs->ratio = fs->ratio_lo = fs->ratio_hi = fs->ratio_coverage = NAN;
	fs->verdict = NULL;
	return 0;
}

/* FNV-1a over a string, continuing from h: a seed per comparison, so that
 * adding a server to the files changes no other server's interval. */
static uint64_t hash(uint64_t h, const char *s)
{
	do {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	} while (*s++);
	return h;
}

/* Whether every run of a and of b counted the same CPUs (cpu_scope). */
static bool same_scope(const struct group *a, const struct group *b)
{
	const char *scope = a->nruns ? a->runs[0]->scope : "";
	size_t i;

	for (i = 0; i < a->nruns; i++)
		if (strcmp(a->runs[i]->scope, scope))
			return false;
	for (i = 0; i < b->nruns; i++)
		if (strcmp(b->runs[i]->scope, scope))
			return false;
	return true;
}

/* Whether a and b are runs of one repetition: the same repeat= in the same
 * directory (one compare's), so that several compares' files can be
 * judged together, each repetition paired within its own compare. */
static bool same_repetition(const struct run *a, const struct run *b)
{
	const char *sa = strrchr(a->path, '/'), *sb = strrchr(b->path, '/');
	size_t la = sa ? (size_t)(sa - a->path) : 0;
	size_t lb = sb ? (size_t)(sb - b->path) : 0;

	return a->repeat[0] && !strcmp(a->repeat, b->repeat) && la == lb &&
	       !strncmp(a->path, b->path, la);
}

/* Whether the run of other's in a's repetition was disturbed. */
static bool partner_disturbed(const struct run *a, const struct group *other)
{
	size_t j;

	for (j = 0; j < other->nruns; j++)
		if (other->runs[j]->disturbed &&
		    same_repetition(a, other->runs[j]))
			return true;
	return false;
}

/*
 * The paired design: compare runs every server once per repetition, so a
 * run of g and the baseline's run of the same repeat= were measured
 * minutes apart at most, on the same machine in the same state. Where
 * every counted run of each has its partner, the ratio is the median of
 * the per-repetition ratios and its interval the order statistics' (the
 * sign test's): whatever slows the whole machine during one repetition
 * slows both runs of the pair and cancels. Fills fs's ratio and interval
 * and returns the number of pairs, or 0 (the ratio is not paired) when a
 * run has no partner, a repeat= is missing or given twice in one
 * directory, or there are fewer than MIN_PAIRS pairs. A pair one of whose
 * runs the host disturbed drops out, the other pairs stand: the drift of
 * its repetition is measured by neither run.
 */
static size_t pair_up(const struct group *g, const struct group *base,
		      enum figure f, struct figure_stats *fs)
{
	size_t i, j, n = 0, want = 0, lo, hi;
	double *r;

	if (fs->n < MIN_PAIRS)
		return 0;
	/* The baseline's counted runs whose pair stands. */
	for (j = 0; j < base->nruns; j++)
		if (counts(base->runs[j], f) &&
		    !partner_disturbed(base->runs[j], g))
			want++;
	if (want < MIN_PAIRS)
		return 0;
	r = malloc(fs->n * sizeof(*r));
	if (!r)
		return 0;
	for (i = 0; i < g->nruns; i++) {
		const struct run *a = g->runs[i], *partner = NULL;

		if (!counts(a, f) || partner_disturbed(a, base))
			continue;
		for (j = 0; j < base->nruns; j++) {
			const struct run *b = base->runs[j];

			if (!same_repetition(a, b) || !counts(b, f))
				continue;
			if (partner)		/* the same repeat twice */
				goto unpaired;
			partner = b;
		}
		if (!partner || !(run_figure(partner, f) > 0))
			goto unpaired;
		r[n++] = run_figure(a, f) / run_figure(partner, f);
	}
	/* Each baseline run is some run's partner only once (no repeat=
	 * twice among g's runs either, or n would not match). */
	for (i = 0; i < g->nruns; i++)
		for (j = i + 1; j < g->nruns; j++)
			if (same_repetition(g->runs[i], g->runs[j]))
				goto unpaired;
	if (n != want)
		goto unpaired;
	qsort(r, n, sizeof(*r), stats_cmp_double);
	fs->ratio = interval_median(r, n);
	fs->ratio_coverage = interval_median_ranks(n, CONF, &lo, &hi);
	fs->ratio_lo = r[lo - 1];
	fs->ratio_hi = r[hi - 1];
	free(r);
	return n;
unpaired:
	free(r);
	return 0;
}

/* The median achieved rate of a group's runs that count for CPU per
 * echo (client-bound ones included: they are kept for it). */
static double cpu_rate(const struct group *g)
{
	double *v = malloc((g->nruns ? g->nruns : 1) * sizeof(*v)), m;
	size_t i, n = 0;

	if (!v)
		return NAN;
	for (i = 0; i < g->nruns; i++)
		if (counts(g->runs[i], CPU) && !isnan(g->runs[i]->rps))
			v[n++] = g->runs[i]->rps;
	qsort(v, n, sizeof(*v), stats_cmp_double);
	m = interval_median(v, n);
	free(v);
	return m;
}

/*
 * Whether CPU per echo may be compared: the two servers ran at the same
 * achieved rate, within rate_tolerance. At unequal rates the ratio
 * compares two loads: the same server costs twice as much per echo at
 * 10,000 msg/s as at 68,000. Sets fs's verdict when not.
 */
static bool equal_load(struct figure_stats *fs, const struct group *g,
		       const struct group *base)
{
	double rg = cpu_rate(g), rb = cpu_rate(base);

	if (isnan(rg) || isnan(rb) || !(rb > 0)) {
		fs->verdict = "not judged (no achieved rate to match)";
		return false;
	}
	if (fabs(rg / rb - 1.0) <= rate_tolerance + 1e-12)
		return true;
	snprintf(fs->why, sizeof(fs->why),
		 "not judged (rates differ: %.0f against %.0f req/s)", rg, rb);
	fs->verdict = fs->why;
	return false;
}

/* The verdict of a ratio interval [lo, hi] against 1 +- threshold. */
static const char *verdict(enum figure f, double lo, double hi)
{
	if (lo > 1.0 + threshold)
		return figures[f].lower_is_better ? figures[f].worse :
		       figures[f].better;
	if (hi < 1.0 - threshold)
		return figures[f].lower_is_better ? figures[f].better :
		       figures[f].worse;
	if (lo >= 1.0 - threshold && hi <= 1.0 + threshold)
		return "equivalent";
	return "inconclusive";
}

/* g's figure against the baseline's: ratio, interval, verdict. */
static int compare(struct group *g, const struct group *base, enum figure f)
{
	struct figure_stats *fs = &g->fig[f];
	const struct figure_stats *bs = &base->fig[f];
	uint64_t seed;

	/* CPU per echo over every CPU (the client's too) against one over
	 * the server's alone is no ratio of two servers' costs. */
	if (f == CPU && !same_scope(g, base)) {
		fs->verdict = "not comparable (cpu_scope differs)";
		return 0;
	}
	if (fs->n && bs->n && bs->median > 0)
		fs->ratio = fs->median / bs->median;
	if (fs->n < MIN_RUNS || bs->n < MIN_RUNS) {
		fs->verdict = "too few runs";
		return 0;
	}
	if ((f == CPU || f == MACHINE) && !equal_load(fs, g, base))
		return 0;
	if (!(bs->median > 0)) {
		fs->verdict = "no ratio (the baseline's median is 0)";
		return 0;
	}
	fs->pairs = pair_up(g, base, f, fs);
	seed = hash(hash(hash(0xcbf29ce484222325ull ^ SEED, g->label),
			 base->label), figures[f].name);
	if (!fs->pairs) {
		if (interval_ratio_bootstrap(fs->v, fs->n, bs->v, bs->n,
					     RESAMPLES, CONF, seed,
					     &fs->ratio_lo, &fs->ratio_hi))
			return -1;
		fs->ratio_coverage = CONF;
	}
	fs->verdict = verdict(f, fs->ratio_lo, fs->ratio_hi);
	return 0;
}

/* v in the figure's format, or '-'. */
static const char *fmt(char *buf, size_t len, const char *f, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, f, v);
	return buf;
}

static const char *source(const struct group *groups, size_t ngroups,
			  enum figure f)
{
	bool window = false, elapsed = false;
	size_t i, j;

	switch (f) {
	case P50:
	case P99:
		return by_arrival ? "arrival_us" : "rtt_us";
	case CPU:
		return "server_cpu_us_per_echo";
	default:
		break;
	}
	for (i = 0; i < ngroups; i++)
		for (j = 0; j < groups[i].nruns; j++) {
			if (isnan(groups[i].runs[j]->rps))
				continue;
			if (groups[i].runs[j]->window)
				window = true;
			else
				elapsed = true;
		}
	return window && elapsed ? "window_s,elapsed_s" :
	       window ? "window_s" : "elapsed_s";
}

/*
 * Each disturbed run with its reasons, after the verdicts: as lines
 * ("disturbed label= repeat= file= reason=WORDS", not "judge ...", so
 * that what reads judge's lines reads on), or as a markdown list.
 */
static void print_disturbed(const struct group *groups, size_t ngroups,
			    bool md)
{
	size_t i, j;
	bool first = true;

	for (i = 0; i < ngroups; i++)
		for (j = 0; j < groups[i].nruns; j++) {
			const struct run *r = groups[i].runs[j];

			if (!r->disturbed)
				continue;
			if (!md) {
				printf("disturbed label=%s repeat=%s file=%s reason=%s\n",
				       r->label, r->repeat[0] ? r->repeat : "-",
				       r->path, r->why);
				continue;
			}
			if (first)
				printf("\nLeft out of every figure, disturbed by the host: steal over\n"
				       "%.0f%% of the window on the server's or the client's CPUs, busy\n"
				       "time below zero, or under %.0f us of the server's CPU per echo,\n"
				       "which no server's echo costs (analysis/disturbed.h). A pair with\n"
				       "one of them drops out of the paired ratios.\n\n",
				       100 * STEAL_BOUND, CPU_FLOOR_US);
			first = false;
			printf("- `%s` (%s%s%s): %s\n",
			       strrchr(r->path, '/') ? strrchr(r->path, '/') + 1 :
			       r->path, r->label, r->repeat[0] ? ", repeat " : "",
			       r->repeat, r->why);
		}
}

static void print_lines(const struct group *groups, size_t ngroups)
{
	char m[32], lo[32], hi[32], r[32], rlo[32], rhi[32], rc[32];
	size_t i;
	int f;

	for (i = 0; i < ngroups; i++)
		for (f = 0; f < NFIGURES; f++) {
			const struct figure_stats *fs = &groups[i].fig[f];
			const char *ff = figures[f].fmt;

			printf("judge label=%s figure=%s source=%s n=%zu excluded=%zu disturbed=%zu median=%s lo=%s hi=%s coverage=%.3f ratio=%s ratio_lo=%s ratio_hi=%s ratio_coverage=%s pairs=%zu verdict=%s\n",
			       groups[i].label, figures[f].name,
			       source(groups, ngroups, (enum figure)f), fs->n,
			       fs->excluded, fs->disturbed,
			       fmt(m, sizeof(m), ff, fs->median),
			       fmt(lo, sizeof(lo), ff, fs->lo),
			       fmt(hi, sizeof(hi), ff, fs->hi), fs->coverage,
			       fmt(r, sizeof(r), "%.3f", fs->ratio),
			       fmt(rlo, sizeof(rlo), "%.3f", fs->ratio_lo),
			       fmt(rhi, sizeof(rhi), "%.3f", fs->ratio_hi),
			       fmt(rc, sizeof(rc), "%.3f", fs->ratio_coverage),
			       fs->pairs, fs->verdict ? fs->verdict : "-");
		}
	print_disturbed(groups, ngroups, false);
}

static const char *ordinal(size_t k)
{
	if (k % 100 / 10 == 1)
		return "th";
	switch (k % 10) {
	case 1:
		return "st";
	case 2:
		return "nd";
	case 3:
		return "rd";
	default:
		return "th";
	}
}

/* "93.8% for 5 runs ([min, max]); ...": the actual coverage of the
 * medians' intervals, for each number of runs in the table. */
static void print_coverages(const struct group *groups, size_t ngroups)
{
	size_t n, lo, hi, i, max = 0;
	const char *sep = "";
	int f;

	for (i = 0; i < ngroups; i++)
		for (f = 0; f < NFIGURES; f++)
			if (groups[i].fig[f].n > max)
				max = groups[i].fig[f].n;
	for (n = 1; n <= max; n++) {
		bool present = false;
		double c;

		for (i = 0; i < ngroups; i++)
			for (f = 0; f < NFIGURES; f++)
				present |= groups[i].fig[f].n == n;
		if (!present)
			continue;
		c = interval_median_ranks(n, CONF, &lo, &hi);
		printf("%s%.1f%% for %zu run%s", sep, 100.0 * c, n,
		       n == 1 ? "" : "s");
		if (lo == 1)
			printf(" ([min, max])");
		else
			printf(" (the %zu%s lowest to the %zu%s highest)", lo,
			       ordinal(lo), n + 1 - hi, ordinal(n + 1 - hi));
		sep = "; ";
	}
}

/* Whether the table has a column for f: machine CPU only where some run
 * has it (files older than bench's client CPU figure do not). */
static bool shown(const struct group *groups, size_t ngroups, enum figure f)
{
	size_t i;

	if (f != MACHINE)
		return true;
	for (i = 0; i < ngroups; i++)
		if (groups[i].fig[f].n)
			return true;
	return false;
}

static void print_markdown(const struct group *groups, size_t ngroups)
{
	char a[32], b[32], c[32];
	size_t i;
	int f;

	printf("Each figure is the median over a server's runs, with an\n"
	       "interval [lo, hi] that holds the true median with at least 95%%\n"
	       "probability whatever the runs' distribution: the runs' order\n"
	       "statistics. Below 6 runs none reaches 95%%, so it is [min, max]\n"
	       "and covers less. Their coverage here:\n");
	print_coverages(groups, ngroups);
	printf(".\n\"vs %s\" pairs the runs by repetition where it can: compare\n"
	       "runs every server once per repetition, and where each of a\n"
	       "server's runs has the baseline's of the same repetition for a\n"
	       "partner (%d pairs or more), the ratio is the median of the\n"
	       "pairs' ratios, within the order statistics of those ratios as\n"
	       "above; whatever slowed the whole machine during a repetition\n"
	       "slowed both runs of its pair, and cancels. Otherwise, marked\n"
	       "\"unpaired\", it is the ratio of the medians with a 95%%\n"
	       "percentile-bootstrap interval (%d resamples of each server's\n"
	       "runs, a fixed seed). Each ratio's interval is followed by its\n"
	       "coverage. Three verdicts, against the noise threshold of\n"
	       "±%g%%: a difference when the whole interval lies beyond 1 ± %g%%\n"
	       "(faster or slower for latency, lower is faster, and req/s,\n"
	       "higher is faster; cheaper or costlier for the server's CPU per\n"
	       "echo), \"equivalent\" when it lies within, \"inconclusive\" when\n"
	       "neither: too noisy to say. \"Too few runs\" with fewer than %d\n"
	       "on either side. CPU per echo falls as the load rises, so it is\n"
	       "judged only where both servers ran at the same achieved rate\n"
	       "(within %g%%): closed-loop runs, each server at its own rate,\n"
	       "get \"not judged\"; and CPU counted over other CPUs than the\n"
	       "baseline's (cpu_scope) is \"not comparable\"%s Client-bound runs\n"
	       "(bench found the client to be the bottleneck, or the client's\n"
	       "CPUs were busy %.0f%% of the window or more and the server's\n"
	       "were not) are left out of latency and req/s, which measured\n"
	       "the client there, and kept for CPU per echo, the server's cost\n"
	       "of each echo at the rate it ran (which the rate rule above\n"
	       "matches). Latency is %s.\n\n",
	       groups[0].label, MIN_PAIRS, RESAMPLES, 100.0 * threshold,
	       100.0 * threshold, MIN_RUNS, 100.0 * rate_tolerance,
	       shown(groups, ngroups, MACHINE) ?
	       ", while machine\nCPU, the server's and the client's CPUs together (in compare,\n"
	       "the whole machine), compares any two, and is judged as CPU is." :
	       ".",
	       100 * CPU_SATURATED,
	       by_arrival ? "server side (arrival_us)" :
	       "client side (rtt_us): not every\necho was stamped by the kernel");
	printf("| server | runs |");
	for (f = 0; f < NFIGURES; f++)
		if (shown(groups, ngroups, (enum figure)f))
			printf(" %s%s | %s vs %s |", figures[f].title,
			       figures[f].unit, figures[f].title,
			       groups[0].label);
	printf("\n|---|---|");
	for (f = 0; f < NFIGURES; f++)
		if (shown(groups, ngroups, (enum figure)f))
			printf("---|---|");
	printf("\n");
	for (i = 0; i < ngroups; i++) {
		const struct group *g = &groups[i];

		printf("| %s | %zu", g->label, g->nruns);
		if (g->fig[P50].disturbed)
			printf(", %zu disturbed", g->fig[P50].disturbed);
		if (g->fig[P50].excluded)
			printf(", %zu client-bound", g->fig[P50].excluded);
		printf(" |");
		for (f = 0; f < NFIGURES; f++) {
			const struct figure_stats *fs = &g->fig[f];
			const char *ff = figures[f].fmt;

			if (!shown(groups, ngroups, (enum figure)f))
				continue;

			if (fs->n)
				printf(" %s [%s, %s] |",
				       fmt(a, sizeof(a), ff, fs->median),
				       fmt(b, sizeof(b), ff, fs->lo),
				       fmt(c, sizeof(c), ff, fs->hi));
			else
				printf(" - |");
			if (i == 0)
				printf(" baseline |");
			else if (!isnan(fs->ratio_lo))
				printf(" %s [%s, %s] %.1f%% %s%s |",
				       fmt(a, sizeof(a), "%.3f", fs->ratio),
				       fmt(b, sizeof(b), "%.3f", fs->ratio_lo),
				       fmt(c, sizeof(c), "%.3f", fs->ratio_hi),
				       100.0 * fs->ratio_coverage, fs->verdict,
				       fs->pairs ? "" : " (unpaired)");
			else if (!isnan(fs->ratio))
				printf(" %s %s |",
				       fmt(a, sizeof(a), "%.3f", fs->ratio),
				       fs->verdict);
			else
				printf(" %s |", fs->verdict);
		}
		printf("\n");
	}
	print_disturbed(groups, ngroups, true);
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "baseline",  required_argument, NULL, 'b' },
		{ "threshold", required_argument, NULL, 't' },
		{ "rate-tolerance", required_argument, NULL, 'r' },
		{ "markdown",  no_argument,       NULL, 'm' },
		{ "help",      no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = cli_getopt(argc, argv, ":h", longopts, usage)) != -1) {
		switch (c) {
		case 'b':
			if (!*optarg)
				usage_error("--baseline: empty label");
			baseline = optarg;
			break;
		case 't':
			threshold = raw_number(optarg);
			if (isnan(threshold) || threshold < 0 ||
			    threshold >= 100)
				usage_error("--threshold: '%s' is not a percentage in [0, 100)",
					    optarg);
			threshold /= 100.0;
			break;
		case 'r':
			rate_tolerance = raw_number(optarg);
			if (isnan(rate_tolerance) || rate_tolerance < 0 ||
			    rate_tolerance >= 100)
				usage_error("--rate-tolerance: '%s' is not a percentage in [0, 100)",
					    optarg);
			rate_tolerance /= 100.0;
			break;
		case 'm':
			markdown = true;
			break;
		}
	}
	if (optind == argc)
		usage_error("no raw files: give it the runs to judge");
}

/* The runs by label, the baseline's first, the others as first seen. */
static struct group *group_runs(struct run *runs, size_t nruns,
				size_t *ngroups)
{
	struct group *groups = calloc(nruns + 1, sizeof(*groups));
	size_t i, j, k, n = 1;

	if (!groups)
		return NULL;
	groups[0].label = baseline;
	for (i = 0; i < nruns; i++) {
		struct group *g;

		k = strcmp(runs[i].label, baseline) ? n : 0;
		for (j = 1; j < n && k; j++)
			if (!strcmp(groups[j].label, runs[i].label))
				k = j;
		g = &groups[k];
		if (k == n) {
			g->label = runs[i].label;
			n++;
		}
		if (!g->runs) {
			g->runs = calloc(nruns, sizeof(*g->runs));
			if (!g->runs)
				return NULL;
		}
		for (j = 0; j < g->nruns; j++) {
			const struct run *o = g->runs[j];

			if (strcmp(o->sweep, runs[i].sweep)) {
				fprintf(stderr, "%s: '%s' and '%s' are runs of %s at different sweep values (%s, %s): judge one sweep value at a time\n",
					prog, o->path, runs[i].path,
					g->label, o->sweep[0] ? o->sweep : "none",
					runs[i].sweep[0] ? runs[i].sweep : "none");
				return NULL;
			}
			if (same_repetition(o, &runs[i]))
				fprintf(stderr, "%s: warning: '%s' and '%s' are both run %s of %s: the same run given twice?\n",
					prog, o->path, runs[i].path,
					o->repeat, g->label);
		}
		g->runs[g->nruns++] = &runs[i];
	}
	*ngroups = n;
	return groups;
}

int main(int argc, char **argv)
{
	struct group *groups;
	struct run *runs;
	size_t nruns, ngroups, i;
	bool stamped = true, timed = false;
	int f;

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	parse_args(argc, argv);
	nruns = (size_t)(argc - optind);
	runs = calloc(nruns, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (i = 0; i < nruns; i++)
		if (read_run(argv[optind + i], &runs[i]))
			return 1;
	free(rtt);
	free(arrival);

	/* One time for every latency: a ratio of a server-side time to a
	 * client-side one would measure the client. */
	for (i = 0; i < nruns; i++) {
		if (runs[i].client_bound || runs[i].disturbed || !runs[i].ok)
			continue;
		timed = true;
		stamped &= runs[i].stamped;
	}
	by_arrival = timed && stamped;

	groups = group_runs(runs, nruns, &ngroups);
	if (!groups)
		return 1;
	if (!groups[0].nruns) {
		fprintf(stderr, "%s: no runs of the baseline '%s' among those of",
			prog, baseline);
		for (i = 1; i < ngroups; i++)
			fprintf(stderr, "%s %s", i > 1 ? "," : "",
				groups[i].label);
		fprintf(stderr, ": name one with --baseline\n");
		return 1;
	}
	for (i = 0; i < ngroups; i++)
		for (f = 0; f < NFIGURES; f++)
			if (describe(&groups[i], (enum figure)f))
				goto oom;
	for (i = 1; i < ngroups; i++)
		for (f = 0; f < NFIGURES; f++)
			if (compare(&groups[i], &groups[0], (enum figure)f))
				goto oom;
	if (markdown)
		print_markdown(groups, ngroups);
	else
		print_lines(groups, ngroups);
	return 0;
oom:
	fprintf(stderr, "%s: out of memory\n", prog);
	return 1;
}
