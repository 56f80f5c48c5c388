// SPDX-License-Identifier: GPL-2.0
/* The summary line: printed from a run's samples (bench) or from raw
 * files (analysis/summarize), and whether the client set the run's pace. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "summary.h"

/*
 * The client dominated a run when most echoes, once in its kernel, waited
 * over CLIENT_DELAY_US for their thread to read them (a wakeup and a
 * recvmsg cost microseconds; a millisecond is queueing for a CPU), and that
 * wait made up at least CLIENT_DELAY_SHARE of the response times it
 * reported. Measured: 2000 threads x 20 messages against ebpf, p50 delay
 * 11-20 ms and 31-68% of rtt_us; a 1-thread ping-pong, 6 us and 51%; 1000
 * threads against user at SCHED_IDLE, 7 ms and 8% (the server's queue).
 * Without stamps: when the threads waited CLIENT_BOUND_SHARE of their time
 * for a CPU. And either way, with server and client on CPUs of their own:
 * when the client's were busy CPU_SATURATED of the window or more and the
 * server's were not. With 50 busy connections over a veth the echoes wait
 * under a millisecond in the client's kernel, yet its CPU is 99-100% busy
 * and the server's 86-96% (results/20261124-busy-*): the client sets the
 * pace, and the latency and the rate are its own.
 */
#define CLIENT_DELAY_US    1000.0
#define CLIENT_DELAY_SHARE 0.25
#define CLIENT_BOUND_SHARE 0.5

/* Whether a set of CPUs was busy CPU_SATURATED of its capacity or more;
 * false when not known. */
static bool saturated(const struct summary_cpu *c)
{
	return c->capacity_s > 0 && c->busy_s >= CPU_SATURATED * c->capacity_s;
}

/* The server's CPUs idle all but CPU_SERVER_AT_WORK of the window did
 * not hold the server (a stale placement, a stopped server): the run says
 * nothing of who set the pace. */
bool summary_client_saturated(const struct summary *s)
{
	return s->cpu_scope && !strcmp(s->cpu_scope, "split") &&
	       saturated(&s->client) && s->server.capacity_s > 0 &&
	       !saturated(&s->server) &&
	       s->server.busy_s >= CPU_SERVER_AT_WORK * s->server.capacity_s;
}

bool summary_client_bound(struct summary *s, struct stats *delay)
{
	double rtt_sum = 0, delay_sum = 0;
	bool bound;
	size_t i;

	stats_compute(s->delay, s->narrival, delay);
	if (s->narrival && s->narrival == s->n) {
		for (i = 0; i < s->n; i++) {
			rtt_sum += s->rtt[i];
			delay_sum += s->delay[i];
		}
		s->delay_share = delay_sum / rtt_sum;
		bound = delay->p50 >= CLIENT_DELAY_US &&
			s->delay_share >= CLIENT_DELAY_SHARE;
	} else {
		bound = !isnan(s->rq_share) && s->rq_share >= CLIENT_BOUND_SHARE;
	}
	return bound || summary_client_saturated(s);
}

/* Microseconds per echo of busy seconds; nan when not known. */
static double per_echo(const struct summary_cpu *c, double busy_s)
{
	return c->echoes ? busy_s * 1e6 / (double)c->echoes : NAN;
}

void summary_print(struct summary *s)
{
	const struct summary_cpu *sv = &s->server, *cl = &s->client;
	struct stats rtt, arr;

	stats_compute(s->rtt, s->n, &rtt);
	stats_compute(s->arrival, s->narrival, &arr);
	printf("summary label=%s threads=%u rounds=%u samples=%llu ok=%zu "
	       "failed=%llu p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	       "p999_us=%.1f max_us=%.1f mean_us=%.1f sd_us=%.1f rps=%.0f "
	       "arrival_n=%zu arrival_p50_us=%.1f arrival_p90_us=%.1f "
	       "arrival_p99_us=%.1f arrival_p999_us=%.1f arrival_max_us=%.1f "
	       "client_rq_share=%.2f",
	       s->label, s->threads, s->rounds,
	       (unsigned long long)s->samples, s->n + (size_t)s->extra_ok,
	       (unsigned long long)s->failed, rtt.p50, rtt.p90, rtt.p99,
	       rtt.p999, rtt.max, rtt.mean, rtt.sd,
	       s->elapsed_s > 0 ?
		(double)(s->n + s->extra_ok) / s->elapsed_s : 0.0,
	       s->narrival + (size_t)s->extra_arrival,
	       arr.p50, arr.p90, arr.p99, arr.p999, arr.max,
	       s->rq_share);
	printf(" server_cpu_us_per_echo=%.2f server_usr_us_per_echo=%.2f "
	       "server_sys_us_per_echo=%.2f server_softirq_us_per_echo=%.2f "
	       "server_irq_us_per_echo=%.2f",
	       per_echo(sv, sv->busy_s), per_echo(sv, sv->usr_s),
	       per_echo(sv, sv->sys_s), per_echo(sv, sv->softirq_s),
	       per_echo(sv, sv->irq_s));
	printf(" client_cpu_us_per_echo=%.2f client_usr_us_per_echo=%.2f "
	       "client_sys_us_per_echo=%.2f client_softirq_us_per_echo=%.2f "
	       "client_irq_us_per_echo=%.2f cpu_scope=%s\n",
	       per_echo(cl, cl->busy_s), per_echo(cl, cl->usr_s),
	       per_echo(cl, cl->sys_s), per_echo(cl, cl->softirq_s),
	       per_echo(cl, cl->irq_s), s->cpu_scope ? s->cpu_scope : "unknown");
}
