/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The summary line: the one line bench prints on stdout at the end of a
 * run, and analysis/summarize for raw files, which scripts parse. Its
 * keys, in this order (new keys go at the end, none changes):
 *
 *   summary label= threads= rounds= samples= ok= failed= p50_us= p90_us=
 *           p99_us= p999_us= max_us= mean_us= sd_us= rps= arrival_n=
 *           arrival_p50_us= arrival_p90_us= arrival_p99_us=
 *           arrival_p999_us= arrival_max_us= client_rq_share=
 *           server_cpu_us_per_echo= server_usr_us_per_echo=
 *           server_sys_us_per_echo= server_softirq_us_per_echo=
 *           server_irq_us_per_echo= client_cpu_us_per_echo=
 *           client_usr_us_per_echo= client_sys_us_per_echo=
 *           client_softirq_us_per_echo= client_irq_us_per_echo= cpu_scope=
 *
 * p*_us, max_us, mean_us, sd_us: rtt_us of the ok samples; arrival_*: the
 * arrival_us of the arrival_n ok samples that have one; rps: ok samples
 * per second of the measured span (first send to last completion);
 * client_rq_share: the share of the load threads' time spent waiting for
 * a CPU (nan: not known). *_us_per_echo: microseconds of the server's
 * (client's) CPUs per ok echo of the measured window, in all and by kind
 * (cpu.h says how); cpu_scope: split (server and client on CPUs of their
 * own), shared (some in common) or all (the server's figure covers every
 * CPU, the client's too). See rawfile.h for what rtt_us and arrival_us are.
 */
#ifndef ECHOLAB_SUMMARY_H
#define ECHOLAB_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

/* Busy seconds of a set of CPUs over measured windows, by kind, and the
 * ok echoes of those windows (0: not known). */
struct summary_cpu {
	double busy_s, usr_s, sys_s, softirq_s, irq_s;
	double capacity_s;		/* window x CPUs counted; 0: not known */
	uint64_t echoes;
};

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
	/* Samples thinned files (results/thin.sh) stand for beyond their
	 * rows: counted in ok=, arrival_n= and the rate, not in percentiles. */
	uint64_t extra_ok, extra_arrival;
	double *delay;			/* rtt_us - arrival_us, where stamped */
	double delay_share;		/* sum(delay) / sum(rtt); NAN: not known */
	double rq_share;		/* NAN: not known */
	struct summary_cpu server, client;
	const char *cpu_scope;		/* NULL: not known */
};

/* Prints the summary line. Sorts the sample arrays. */
void summary_print(struct summary *s);

/* The share of its capacity a set of CPUs was busy above which it set the
 * pace of a run (analysis/judge applies the same). */
#define CPU_SATURATED 0.95
/* ... and the share below which a set of CPUs did none of the run's work. */
#define CPU_SERVER_AT_WORK 0.10

/*
 * Was the client the bottleneck of the run? Fills *delay with the
 * statistics of its own delay (rtt_us - arrival_us) and s->delay_share;
 * sorts s->delay. See summary.c for the rule and the numbers behind it.
 */
bool summary_client_bound(struct summary *s, struct stats *delay);

/* The last of those rules alone: server and client on CPUs of their own,
 * the client's saturated, the server's not. */
bool summary_client_saturated(const struct summary *s);

#endif
