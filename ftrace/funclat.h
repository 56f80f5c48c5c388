/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What funclat.bpf.c and funclat.c share. */
#ifndef FUNCLAT_H
#define FUNCLAT_H

/* Program slots: one fentry/fexit pair per timed function. */
#define FUNCLAT_SLOTS 8

struct funclat_stat {
	__u64 count;	/* returns seen */
	__u64 total_ns;	/* sum of entry-to-return times */
	__u64 max_ns;
};

#endif /* FUNCLAT_H */
