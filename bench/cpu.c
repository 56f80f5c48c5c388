// SPDX-License-Identifier: GPL-2.0
/* CPU per echo and the placement evidence; cpu.h says how it is counted. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cpu.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cpus_configured(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 && n < CPU_SETSIZE ? (int)n : CPU_SETSIZE;
}

/* Reads a small /proc file into buf; its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static bool read_stat(struct cpu_snap *s)
{
	char line[512];
	FILE *f = fopen("/proc/stat", "re");
	bool any = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		struct cpu_ticks t = { .seen = true };
		int cpu;

		/* "cpuN user nice system idle iowait irq softirq steal ..." */
		if (strncmp(line, "cpu", 3) || !isdigit((unsigned char)line[3]))
			continue;
		if (sscanf(line + 3, "%d %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64, &cpu, &t.user, &t.nice, &t.system,
			   &t.idle, &t.iowait, &t.irq, &t.softirq,
			   &t.steal) < 8 || cpu < 0 || cpu >= s->ncpus)
			continue;
		t.net_rx = s->cpu[cpu].net_rx;	/* read_softirqs' */
		t.net_tx = s->cpu[cpu].net_tx;
		s->cpu[cpu] = t;
		any = true;
	}
	fclose(f);
	return any;
}

/* NET_RX and NET_TX per CPU; the columns are named CPU0, CPU1, ... */
static void read_softirqs(struct cpu_snap *s)
{
	char *line = NULL, *p, *end;
	int col[CPU_SETSIZE], ncol = 0;
	size_t cap = 0;
	FILE *f = fopen("/proc/softirqs", "re");

	if (!f)
		return;
	if (getline(&line, &cap, f) > 0)
		for (p = line; ncol < CPU_SETSIZE && (p = strstr(p, "CPU"));) {
			col[ncol++] = (int)strtol(p + 3, &end, 10);
			p = end;
		}
	while (getline(&line, &cap, f) > 0) {
		bool rx = strstr(line, "NET_RX:") != NULL;

		if (!rx && !strstr(line, "NET_TX:"))
			continue;
		p = strchr(line, ':') + 1;
		for (int i = 0; i < ncol; i++) {
			uint64_t v = strtoull(p, &end, 10);

			if (end == p)
				break;
			p = end;
			if (col[i] < 0 || col[i] >= s->ncpus)
				continue;
			if (rx)
				s->cpu[col[i]].net_rx = v;
			else
				s->cpu[col[i]].net_tx = v;
		}
	}
	free(line);
	fclose(f);
}

/*
 * Every kworker's time on a CPU: /proc/PID/schedstat's first field (ns,
 * exact, where stat's utime and stime are tick samples), and the CPU it
 * last ran on, field 39 of /proc/PID/stat. A kworker is a kernel thread,
 * its own process, so /proc/PID covers it; bench's own threads are skipped.
 */
static void read_kworkers(struct cpu_snap *s)
{
	char path[64], buf[1024], *p;
	struct dirent *d;
	int cap = 0, self = getpid();
	DIR *proc = opendir("/proc");

	if (!proc)
		return;
	while ((d = readdir(proc))) {
		struct cpu_kworker k = { 0 };
		int field;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		k.pid = atoi(d->d_name);
		if (k.pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", k.pid);
		if (read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		/* "PID (comm) state ...": comm may hold spaces, not ')'. */
		p = strchr(buf, '(');
		if (!p || strncmp(p + 1, "kworker", 7) || !(p = strrchr(p, ')')))
			continue;
		for (field = 2; field < 39 && p; field++)
			p = strchr(p + 1, ' ');
		if (!p)
			continue;
		k.cpu = atoi(p + 1);
		snprintf(path, sizeof(path), "/proc/%d/schedstat", k.pid);
		if (read_small(path, buf, sizeof(buf)) <= 0 ||
		    sscanf(buf, "%" SCNu64, &k.run_ns) != 1)
			continue;
		if (s->nkw == cap) {
			int ncap = cap ? 2 * cap : 128;
			struct cpu_kworker *n = realloc(s->kw, ncap * sizeof(*n));

			if (!n)
				break;
			s->kw = n;
			cap = ncap;
		}
		s->kw[s->nkw++] = k;
	}
	closedir(proc);
}

/*
 * A fault for the tests (tests/compare-fail.t, disturbed): with
 * ECHOLAB_FAULT_STEAL_TICKS=N, the window's end reads N more ticks of
 * steal on every CPU than /proc/stat holds, counted over idle time as
 * well, which is what a host that steals does (cpu_use): the run reads
 * as one the host disturbed, through the same accounting as a real one.
 */
static void fault_steal(struct cpu_snap *s)
{
	const char *v = getenv("ECHOLAB_FAULT_STEAL_TICKS");
	unsigned long n;

	if (!v || str_to_num(v, 0, 1000000, &n))
		return;
	for (int i = 0; i < s->ncpus; i++)
		if (s->cpu[i].seen)
			s->cpu[i].steal += n;
}

bool cpu_snap_take(struct cpu_snap *s, bool kworkers, bool end)
{
	bool ok;

	memset(s, 0, sizeof(*s));
	s->ncpus = cpus_configured();
	s->cpu = calloc(s->ncpus, sizeof(*s->cpu));
	if (!s->cpu)
		return false;
	/* The window is bounded by the stat reads: the slow /proc walk goes
	 * before the first and after the last, outside it. */
	if (kworkers && !end)
		read_kworkers(s);
	if (!end)
		read_softirqs(s);
	s->t_ns = mono_ns();
	ok = read_stat(s);
	if (end) {
		fault_steal(s);
		read_softirqs(s);
	}
	if (kworkers && end)
		read_kworkers(s);
	return ok;
}

void cpu_snap_free(struct cpu_snap *s)
{
	free(s->cpu);
	free(s->kw);
	memset(s, 0, sizeof(*s));
}

void cpu_use(const struct cpu_snap *a, const struct cpu_snap *b,
	     const cpu_set_t *set, struct cpu_use *u)
{
	double hz = (double)sysconf(_SC_CLK_TCK);

	memset(u, 0, sizeof(*u));
	u->window_s = (double)(b->t_ns - a->t_ns) / 1e9;
	for (int i = 0; i < a->ncpus && i < b->ncpus; i++) {
		const struct cpu_ticks *x = &a->cpu[i], *y = &b->cpu[i];
		double off, busy, usr, sys, si, irq, sampled;

		if (!CPU_ISSET(i, set) || !x->seen || !y->seen)
			continue;
		u->ncpus++;
		off = (double)(y->idle - x->idle + y->iowait - x->iowait +
			       y->steal - x->steal) / hz;
		u->steal_s += (double)(y->steal - x->steal) / hz;
		busy = u->window_s - off;
		/* Idle, iowait and steal over the whole window: no CPU time
		 * is left for the work the run did. Under a hypervisor that
		 * steals, a vCPU woken from idle waits for the host, and that
		 * wait is counted as idle and as steal both (2026-11-26:
		 * server_busy_s=0 with 15,695 echoes, 1.09 s stolen). Kept
		 * as 0 in busy, recorded as negative_s for judge to flag. */
		if (busy < 0) {
			u->negative_s -= busy;
			busy = 0;
		}
		usr = (double)(y->user - x->user + y->nice - x->nice) / hz;
		sys = (double)(y->system - x->system) / hz;
		si = (double)(y->softirq - x->softirq) / hz;
		irq = (double)(y->irq - x->irq) / hz;
		sampled = usr + sys + si + irq;
		u->sampled_s += sampled;
		u->busy_s += busy;
		if (sampled > 0) {
			u->usr_s += busy * usr / sampled;
			u->softirq_s += busy * si / sampled;
			u->irq_s += busy * irq / sampled;
			/* The rest, so the kinds sum to busy exactly. */
			u->sys_s += busy - busy * (usr + si + irq) / sampled;
		} else {
			u->sys_s += busy;
		}
	}
}

/* Appends "cpu:value" to a list; false when it does not fit. */
static bool put_pair(char *buf, size_t len, size_t *off, int cpu,
		     unsigned long long v)
{
	int n = snprintf(buf + *off, len - *off, "%s%d:%llu",
			 *off ? "," : "", cpu, v);

	if (n < 0 || (size_t)n >= len - *off)
		return false;
	*off += (size_t)n;
	return true;
}

void cpu_softirqs_between(const struct cpu_snap *a, const struct cpu_snap *b,
			  bool rx, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < a->ncpus && i < b->ncpus; i++) {
		const struct cpu_ticks *x = &a->cpu[i], *y = &b->cpu[i];

		if (!x->seen || !y->seen)
			continue;
		if (!put_pair(buf, len, &off, i,
			      rx ? y->net_rx - x->net_rx : y->net_tx - x->net_tx))
			break;
	}
}

void cpu_kworkers_between(const struct cpu_snap *a, const struct cpu_snap *b,
			  char *buf, size_t len)
{
	uint64_t *ns = calloc(b->ncpus, sizeof(*ns));
	size_t off = 0;

	buf[0] = '\0';
	if (!ns)
		return;
	/* Per kworker at the end: its time since the start (all of it for
	 * one born since), on the CPU it ran on last. */
	for (int i = 0; i < b->nkw; i++) {
		uint64_t before = 0;

		for (int j = 0; j < a->nkw; j++)
			if (a->kw[j].pid == b->kw[i].pid) {
				before = a->kw[j].run_ns;
				break;
			}
		if (b->kw[i].cpu >= 0 && b->kw[i].cpu < b->ncpus &&
		    b->kw[i].run_ns >= before)
			ns[b->kw[i].cpu] += b->kw[i].run_ns - before;
	}
	for (int i = 0; i < b->ncpus; i++)
		if (b->cpu[i].seen &&
		    !put_pair(buf, len, &off, i, (ns[i] + 500000) / 1000000))
			break;
	free(ns);
}
