// SPDX-License-Identifier: GPL-2.0
/*
 * summarize - the summary line of bench raw files, from the files alone.
 *
 * The files' samples are pooled (the repetitions of one server, say):
 * percentiles over every ok sample, rps over the files' summed measured
 * spans (from the sent_us column, else elapsed_s), CPU per echo as their
 * summed busy time over their summed echoes. With --samples it prints
 * 'thread<TAB>time' of every ok sample instead, for the plots. Nothing is
 * sent: run.sh compare and cmd/plot.sh read raw files through it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rawfile.h"
#include "stats.h"
#include "summary.h"

const char *prog = "summarize";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [--samples METRIC] FILE...\n"
"The summary line of bench raw files, their samples pooled (the\n"
"repetitions of one server, say): the line bench prints at the end of a\n"
"run, from the files alone. Nothing is sent.\n"
"\n"
"  FILE...             bench raw files, gzipped or not, all of one server\n"
"      --samples METRIC  print 'thread<TAB>time' of every ok sample\n"
"                      instead, METRIC rtt or arrival (what the plots draw)\n"
"  -h, --help          this text\n"
"\n"
"rps: ok samples over the files' summed measured spans (first send to last\n"
"completion, from sent_us, else elapsed_s); *_us_per_echo: their summed\n"
"busy time over their summed echoes. The line's keys are bench's\n"
"(bench --help, common/summary.h).\n"
"Exit status: 0, 1 when out of memory, 2 for a file that cannot be read\n"
"or is not a raw file, and for bad usage.\n",
		prog);
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

/* What the files read so far add up to. */
struct pool {
	struct summary s;
	size_t cap, acap;		/* of s.rtt, s.arrival */
	double wait_s, thread_s;	/* client_rq_wait_s, client_thread_s */
	char label[64], scope[16];
	const char *metric;		/* --samples: rtt or arrival; else NULL */
};

/* A '# key=value' line of path; 0, or 2 when the file is of another
 * server than the ones before. */
static int take_meta(struct pool *p, struct file_part *f, const char *path,
		     const struct raw_entry *e)
{
	int rc = 0;

	if (!strcmp(e->key, "label")) {
		if (p->label[0] && strcmp(p->label, e->value)) {
			fprintf(stderr, "%s: '%s' is of server '%s', not '%s': summarize one server at a time\n",
				prog, path, e->value, p->label);
			rc = 2;
		}
		snprintf(p->label, sizeof(p->label), "%s", e->value);
	} else if (!strcmp(e->key, "threads")) {
		p->s.threads = (unsigned int)atoi(e->value);
	} else if (!strcmp(e->key, "rounds")) {
		p->s.rounds = (unsigned int)atoi(e->value);
	} else if (!strcmp(e->key, "elapsed_s")) {
		f->elapsed_s = strtod(e->value, NULL);
	} else if (!strcmp(e->key, "cpu_scope")) {
		if (p->scope[0] && strcmp(p->scope, e->value))
			snprintf(p->scope, sizeof(p->scope), "mixed");
		else
			snprintf(p->scope, sizeof(p->scope), "%s", e->value);
	} else if (cpu_key(f, e->key, e->value) ||
		   full_key(f, e->key, e->value)) {
		return 0;
	} else if (!strcmp(e->key, "client_rq_wait_s")) {
		p->wait_s += strtod(e->value, NULL);
	} else if (!strcmp(e->key, "client_thread_s")) {
		p->thread_s += strtod(e->value, NULL);
	}
	return rc;
}

/* A sample's row; 0, or 1 when out of memory. */
static int take_row(struct pool *p, struct file_part *f,
		    const struct raw_entry *e)
{
	struct summary *s = &p->s;

	s->samples++;
	f->rows++;
	/* The span: first send to last completion; rtt_us counts from the
	 * intended send, lag_us before it. */
	if (!isnan(e->sent_us) && !isnan(e->rtt_us)) {
		double done = e->sent_us + e->rtt_us -
			      (isnan(e->lag_us) ? 0 : e->lag_us);

		if (e->sent_us < f->first_sent_us)
			f->first_sent_us = e->sent_us;
		if (done > f->last_done_us)
			f->last_done_us = done;
	}
	if (strcmp(e->status, "ok")) {
		s->failed++;
		f->rows_failed++;
		return 0;
	}
	f->ok++;
	f->rows_arrival += !isnan(e->arrival_us);
	if (p->metric) {
		double v = strcmp(p->metric, "rtt") ? e->arrival_us : e->rtt_us;

		if (!isnan(v))
			printf("%u\t%.1f\n", e->thread, v);
		return 0;
	}
	if (!stats_push(&s->rtt, &s->n, &p->cap, e->rtt_us) ||
	    (!isnan(e->arrival_us) &&
	     !stats_push(&s->arrival, &s->narrival, &p->acap, e->arrival_us))) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	return 0;
}

/* One raw file into the pool; 0, 1 (out of memory) or 2 (it cannot be
 * read, is no raw file or is another server's), after saying why. */
static int take_file(struct pool *p, const char *path)
{
	struct file_part f = {
		.first_sent_us = INFINITY, .last_done_us = -INFINITY,
	};
	struct raw_reader r;
	struct raw_entry e;
	int got, rc = 0;

	if (raw_open(&r, path)) {
		fprintf(stderr, "%s: cannot read '%s': %s\n", prog, path,
			strerror(errno));
		return 2;
	}
	while (!rc && (got = raw_next(&r, &e)) > 0)
		rc = e.kind == RAW_META ? take_meta(p, &f, path, &e) :
					  take_row(p, &f, &e);
	if (!rc && got < 0) {
		fprintf(stderr, "%s: %s\n", prog, r.err);
		rc = 2;
	}
	raw_close(&r);
	pool_file(&p->s, &f);
	return rc;
}

/* The summary line of the files (or their samples, with metric); the
 * exit status. */
static int summarize(int nfiles, char **files, const char *metric)
{
	struct pool p = { .s = { .rq_share = NAN }, .metric = metric };
	int i, rc = 0;

	for (i = 0; i < nfiles && !rc; i++)
		rc = take_file(&p, files[i]);
	if (!rc && !metric) {
		p.s.label = p.label[0] ? p.label : "unknown";
		if (p.thread_s > 0)
			p.s.rq_share = p.wait_s / p.thread_s;
		p.s.cpu_scope = p.scope[0] ? p.scope : NULL;
		summary_print(&p.s);
	}
	free(p.s.rtt);
	free(p.s.arrival);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "samples", required_argument, NULL, 'A' },
		{ "help",    no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *metric = NULL;
	int c;

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	while ((c = cli_getopt(argc, argv, ":h", longopts, usage)) != -1) {
		/* --samples, the only option of its own */
		if (strcmp(optarg, "rtt") && strcmp(optarg, "arrival"))
			usage_error("--samples: '%s' is not rtt or arrival",
				    optarg);
		metric = optarg;
	}
	if (optind == argc)
		usage_error("no raw files: give it the runs to summarize");
	return summarize(argc - optind, argv + optind, metric);
}
