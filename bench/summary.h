/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The summary line: the one line bench prints on stdout, which scripts
 * parse. Its keys, in this order (new keys go at the end, none changes):
 *
 *   summary label= threads= rounds= samples= ok= failed= p50_us= p90_us=
 *           p99_us= p999_us= max_us= mean_us= sd_us= rps= arrival_n=
 *           arrival_p50_us= arrival_p90_us= arrival_p99_us=
 *           arrival_p999_us= arrival_max_us= client_rq_share=
 *
 * p*_us, max_us, mean_us, sd_us: rtt_us of the ok samples; arrival_*: the
 * arrival_us of the arrival_n ok samples that have one; rps: ok samples
 * per second of the run; client_rq_share: the share of the load threads'
 * time spent waiting for a CPU (nan: not known). See rawfile.h for what
 * rtt_us and arrival_us are.
 */
#ifndef BENCH_SUMMARY_H
#define BENCH_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

/* A run's (or pooled runs') samples, ready for the summary line. */
struct summary {
	const char *label;
	unsigned int threads, rounds;
	uint64_t samples, failed;
	double *rtt;			/* every ok sample's rtt_us */
	size_t n;
	double *arrival;		/* the arrival_us of those that have one */
	size_t narrival;
	double elapsed_s;
	double *delay;			/* rtt_us - arrival_us, where stamped */
	double delay_share;		/* sum(delay) / sum(rtt); NAN: not known */
	double rq_share;		/* NAN: not known */
};

/* Prints the summary line. Sorts the sample arrays. */
void summary_print(struct summary *s);

/*
 * Was the client the bottleneck of the run? Fills *delay with the
 * statistics of its own delay (rtt_us - arrival_us) and s->delay_share;
 * sorts s->delay. See summary.c for the rule and the numbers behind it.
 */
bool summary_client_bound(struct summary *s, struct stats *delay);

/*
 * bench --summarize FILE...: the summary line of raw files, samples pooled
 * (the repetitions of one server, say), rps over their summed elapsed
 * time. With metric "rtt" or "arrival" (bench --samples), prints
 * 'thread<TAB>time' of every ok sample instead. Reads only the files:
 * run.sh compare and results/plot.sh read raw files through it. Returns
 * the exit status: 0, 1 (out of memory) or 2 (a file that cannot be read
 * or is not a raw file), after saying why, prefixed with prog.
 */
int summary_of_files(const char *prog, int nfiles, char **files,
		     const char *metric);

#endif
