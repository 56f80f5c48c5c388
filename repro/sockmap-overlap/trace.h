/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* trace.h - what trace.bpf.c and overlap-trace.c share. */
#ifndef TRACE_H
#define TRACE_H

/* trace_stats's slots */
enum {
	T_SKBS,		/* skbs handed to the verdict (sk_psock_verdict_recv) */
	T_OLD,		/* ... that start below the socket's end so far */
	T_OLD_BYTES,	/* their bytes below it: old bytes handed on again */
	T_GAP,		/* ... that start above it */
	T_MAX
};

/* The first overlap lengths, in order. */
#define TRACE_SAMPLES 256

#endif
