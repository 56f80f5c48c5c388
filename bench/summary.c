// SPDX-License-Identifier: GPL-2.0
/* The summary line: computed from a run's samples, or from raw files. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rawfile.h"
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

/* One raw file's part of a pooled summary, known once it is read. */
struct file_part {
	double first_sent_us, last_done_us;	/* rows with sent_us */
	double elapsed_s;			/* its elapsed_s, if any */
	uint64_t ok;
	struct summary_cpu server, client;
	bool server_known, client_known;
	uint64_t cpu_echoes;			/* cpu_echoes, if any */
	/* A thinned file: its rows, and the run's counts (full_*). */
	bool thinned;
	uint64_t rows, rows_failed, rows_arrival;
	uint64_t full_samples, full_ok, full_failed, full_arrival;
};

/* A thinned file's full_* key into part; false when key is none. */
static bool full_key(struct file_part *f, const char *key, const char *value)
{
	uint64_t v = strtoull(value, NULL, 10);

	if (!strcmp(key, "thinned"))
		f->thinned = v > 1;
	else if (!strcmp(key, "full_samples"))
		f->full_samples = v;
	else if (!strcmp(key, "full_ok"))
		f->full_ok = v;
	else if (!strcmp(key, "full_failed"))
		f->full_failed = v;
	else if (!strcmp(key, "full_arrival_n"))
		f->full_arrival = v;
	else
		return false;
	return true;
}

/* A CPU metadata key of a raw file ("server_busy_s", ...) into part;
 * false when key is none of them. */
static bool cpu_key(struct file_part *f, const char *key, const char *value)
{
	static const char *const kinds[] = {
		"busy_s", "usr_s", "sys_s", "softirq_s", "irq_s",
	};
	struct summary_cpu *c;
	bool *known;
	double v = strtod(value, NULL);

	if (!strcmp(key, "cpu_echoes")) {
		f->cpu_echoes = strtoull(value, NULL, 10);
		return true;
	}
	if (!strncmp(key, "server_", 7)) {
		c = &f->server;
		known = &f->server_known;
	} else if (!strncmp(key, "client_", 7)) {
		c = &f->client;
		known = &f->client_known;
	} else {
		return false;
	}
	double *const fields[] = {
		&c->busy_s, &c->usr_s, &c->sys_s, &c->softirq_s, &c->irq_s,
	};

	key += 7;
	for (unsigned int i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(key, kinds[i]))
			continue;
		*fields[i] = v;
		if (i == 0)
			*known = true;
		return true;
	}
	return false;
}

static void pool_cpu(struct summary_cpu *to, const struct summary_cpu *c,
		     uint64_t echoes)
{
	to->busy_s += c->busy_s;
	to->usr_s += c->usr_s;
	to->sys_s += c->sys_s;
	to->softirq_s += c->softirq_s;
	to->irq_s += c->irq_s;
	to->echoes += echoes;
}

/* Adds a file's span and CPU time to the pooled summary. */
static void pool_file(struct summary *s, const struct file_part *f)
{
	uint64_t echoes = f->cpu_echoes ? f->cpu_echoes :
			  f->thinned ? f->full_ok : f->ok;

	if (f->thinned) {
		/* Its rows were counted as they came: add the rest. */
		s->samples += f->full_samples - f->rows;
		s->failed += f->full_failed - f->rows_failed;
		s->extra_ok += f->full_ok - f->ok;
		s->extra_arrival += f->full_arrival - f->rows_arrival;
	}
	if (f->thinned && f->elapsed_s > 0)
		s->elapsed_s += f->elapsed_s;	/* the rows lost the ends */
	else if (f->last_done_us >= f->first_sent_us)
		s->elapsed_s += (f->last_done_us - f->first_sent_us) / 1e6;
	else
		s->elapsed_s += f->elapsed_s;
	if (f->server_known)
		pool_cpu(&s->server, &f->server, echoes);
	if (f->client_known)
		pool_cpu(&s->client, &f->client, echoes);
}

int summary_of_files(const char *prog, int nfiles, char **files,
		     const char *metric)
{
	struct summary s = { .rq_share = NAN };
	size_t cap = 0, acap = 0;
	double wait_s = 0, thread_s = 0;
	char label[64] = "", scope[16] = "";
	int i, rc = 0;

	for (i = 0; i < nfiles && !rc; i++) {
		struct file_part f = {
			.first_sent_us = INFINITY, .last_done_us = -INFINITY,
		};
		struct raw_reader r;
		struct raw_entry e;
		int got;

		if (raw_open(&r, files[i])) {
			fprintf(stderr, "%s: cannot read '%s': %s\n", prog,
				files[i], strerror(errno));
			rc = 2;
			break;
		}
		while (!rc && (got = raw_next(&r, &e)) > 0) {
			if (e.kind == RAW_META) {
				if (!strcmp(e.key, "label")) {
					if (label[0] && strcmp(label, e.value)) {
						fprintf(stderr, "%s: '%s' is of server '%s', not '%s': summarize one server at a time\n",
							prog, files[i], e.value, label);
						rc = 2;
					}
					snprintf(label, sizeof(label), "%s", e.value);
				} else if (!strcmp(e.key, "threads")) {
					s.threads = (unsigned int)atoi(e.value);
				} else if (!strcmp(e.key, "rounds")) {
					s.rounds = (unsigned int)atoi(e.value);
				} else if (!strcmp(e.key, "elapsed_s")) {
					f.elapsed_s = strtod(e.value, NULL);
				} else if (!strcmp(e.key, "cpu_scope")) {
					if (scope[0] && strcmp(scope, e.value))
						snprintf(scope, sizeof(scope), "mixed");
					else
						snprintf(scope, sizeof(scope), "%s", e.value);
				} else if (cpu_key(&f, e.key, e.value) ||
					   full_key(&f, e.key, e.value)) {
					continue;
				} else if (!strcmp(e.key, "client_rq_wait_s")) {
					wait_s += strtod(e.value, NULL);
				} else if (!strcmp(e.key, "client_thread_s")) {
					thread_s += strtod(e.value, NULL);
				}
				continue;
			}
			s.samples++;
			f.rows++;
			/* The span: first send to last completion; rtt_us
			 * counts from the intended send, lag_us before it. */
			if (!isnan(e.sent_us) && !isnan(e.rtt_us)) {
				double done = e.sent_us + e.rtt_us -
					      (isnan(e.lag_us) ? 0 : e.lag_us);

				if (e.sent_us < f.first_sent_us)
					f.first_sent_us = e.sent_us;
				if (done > f.last_done_us)
					f.last_done_us = done;
			}
			if (strcmp(e.status, "ok")) {
				s.failed++;
				f.rows_failed++;
				continue;
			}
			f.ok++;
			f.rows_arrival += !isnan(e.arrival_us);
			if (metric) {
				double v = strcmp(metric, "rtt") ? e.arrival_us
								 : e.rtt_us;

				if (!isnan(v))
					printf("%u\t%.1f\n", e.thread, v);
				continue;
			}
			if (!stats_push(&s.rtt, &s.n, &cap, e.rtt_us) ||
			    (!isnan(e.arrival_us) &&
			     !stats_push(&s.arrival, &s.narrival, &acap,
				   e.arrival_us))) {
				fprintf(stderr, "%s: out of memory\n", prog);
				rc = 1;
			}
		}
		if (!rc && got < 0) {
			fprintf(stderr, "%s: %s\n", prog, r.err);
			rc = 2;
		}
		raw_close(&r);
		pool_file(&s, &f);
	}
	if (!rc && !metric) {
		s.label = label[0] ? label : "unknown";
		if (thread_s > 0)
			s.rq_share = wait_s / thread_s;
		s.cpu_scope = scope[0] ? scope : NULL;
		summary_print(&s);
	}
	free(s.rtt);
	free(s.arrival);
	return rc;
}
