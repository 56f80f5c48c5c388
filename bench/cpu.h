/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU per echo (netperf's "service demand"): what the server's CPUs and the
 * client's spent over the measured window, from /proc/stat, beside the
 * placement evidence (/proc/softirqs' NET_RX and NET_TX per CPU, kworker
 * time per CPU).
 *
 * /proc/stat counts in USER_HZ ticks (10 ms). Its idle and iowait are
 * exact under NOHZ (kept in ns, shown in ticks), but user, system, irq and
 * softirq are tick samples that miss short bursts: on our machines a user
 * server read 2-7 us per echo from them and 16-17 us as the window less
 * idle. So a CPU's busy time is the window less its idle, iowait and
 * steal (time the hypervisor ran someone else), and it is split into the
 * kinds in proportion to the sampled fields: usr (user + nice), sys
 * (system: kworkers land here), softirq and irq. The kinds sum to the busy
 * time; busy time no tick sampled is counted as sys. A window must be
 * seconds long for the 10 ms ticks to matter little.
 */
#ifndef BENCH_CPU_H
#define BENCH_CPU_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One CPU's /proc/stat line, in ticks, and its NET_RX/NET_TX softirqs. */
struct cpu_ticks {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
	uint64_t net_rx, net_tx;
	bool seen;			/* the CPU had a line */
};

/* A kworker's time on a CPU so far (ns) and the CPU it last ran on. */
struct cpu_kworker {
	int pid, cpu;
	uint64_t run_ns;
};

struct cpu_snap {
	uint64_t t_ns;			/* CLOCK_MONOTONIC at the /proc/stat read */
	int ncpus;			/* entries of cpu[] */
	struct cpu_ticks *cpu;
	struct cpu_kworker *kw;
	int nkw;
};

/* Busy time of a set of CPUs over a window, seconds. busy = the kinds'
 * sum; sampled = what the ticks attributed (for comparison); steal = what
 * the hypervisor gave another tenant, in neither (a vCPU that waited).
 * negative = how far below zero the window less idle, iowait and steal
 * went, summed over the CPUs where it did: busy counts those CPUs as 0,
 * and a reading the host made impossible (steal counted over time idle
 * counted too) is then flagged, never hidden (analysis/disturbed.h). */
struct cpu_use {
	double window_s, busy_s, usr_s, sys_s, softirq_s, irq_s, sampled_s;
	double steal_s, negative_s;
	int ncpus;
};

/* Reads /proc/stat, /proc/softirqs and, with kworkers, every kworker's
 * time; end: the window's end (the stat read first, not last). false when
 * /proc/stat cannot be read. */
bool cpu_snap_take(struct cpu_snap *s, bool kworkers, bool end);
void cpu_snap_free(struct cpu_snap *s);

/* What the CPUs of set spent between a and b. */
void cpu_use(const struct cpu_snap *a, const struct cpu_snap *b,
	     const cpu_set_t *set, struct cpu_use *u);

/* "0:1234,1:56": per CPU, the NET_RX (rx) or NET_TX softirqs raised
 * between a and b; kworker_ms: the kworkers' time per CPU, ms. */
void cpu_softirqs_between(const struct cpu_snap *a, const struct cpu_snap *b,
			  bool rx, char *buf, size_t len);
void cpu_kworkers_between(const struct cpu_snap *a, const struct cpu_snap *b,
			  char *buf, size_t len);

#endif
