/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* trace.h - what trace.bpf.c and overlap-trace.c share. */
#ifndef TRACE_H
#define TRACE_H

/* trace_stats's slots */
enum {
	T_SKBS,		/* skbs handed to the verdict (sk_psock_verdict_recv) */
	T_OLD,		/* ... that start below the connection's end so far */
	T_OLD_BYTES,	/* their bytes below it: old bytes handed on again */
	T_GAP,		/* ... that start above it */
	T_CONNS,	/* connections seen (new keys, or a new ISN on a key) */
	T_MAX
};

/* A connection, as the echo's socket sees it (network byte order). */
struct trace_conn {
	__u32 saddr, daddr;	/* the echo's address, the client's */
	__u16 sport, dport;	/* the echo's port, the client's */
};

/* Per connection: its receive ISN (tells a new connection on the same
 * ports), and the end of the bytes the verdict has had so far. */
struct trace_state {
	__u32 isn;
	__u32 end;
};

/* One old skb: the client's port (host order) and its old bytes. */
struct trace_sample {
	__u32 port;
	__u32 len;
};

/* The first old skbs, in order. */
#define TRACE_SAMPLES 1024

#endif
