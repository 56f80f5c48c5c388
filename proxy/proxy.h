/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What proxy.bpf.c and proxy.c share (the sockmap path). Needs __u32 and
 * __u64 first (vmlinux.h on the BPF side, <linux/types.h> in userspace).
 */
#ifndef __PROXY_H
#define __PROXY_H

/* Sockets the SOCKHASH can hold: two per proxied connection. */
#define PROXY_MAX_SOCKS	65536

#include "exact.h"

/* One slot of the PERCPU_ARRAY; userspace sums it over the CPUs. */
struct proxy_counters {
	__u64 redirected_skbs;		/* sent on by the kernel */
	__u64 redirected_bytes;
	__u64 passed_skbs;		/* handed to the proxy process instead */
	__u64 passed_bytes;
	__u64 fin_skbs;			/* zero-length skbs (FIN), dropped */
	__u64 no_flow_state;		/* a socket the process did not describe */
	__u64 peer_missing;		/* its peer not in the SOCKHASH (yet) */
	__u64 redirect_failures;	/* bpf_sk_redirect_hash failed */
	__u64 held_back_skbs;		/* passed because the relay backed up */
	__u64 backpressure_on;		/* a direction switched to passing */
	__u64 backpressure_off;		/* ... and back to the kernel's relay */
	struct exact_counters exact;	/* exact.bpf.h: old bytes not resent */
};

/*
 * One direction of a proxied connection, keyed by the cookie of the
 * socket its bytes arrive on. The process writes it before it inserts the
 * sockets; the verdict keeps passing/passed/seen. Flow control is the ebpf
 * echo server's (ebpf-echo/echo.h): the verdict redirects only while the
 * relay's backlog -- bytes received on this socket that the far end has
 * not acknowledged on the peer, bytes_received - peer's bytes_acked --
 * stays under the limit; past it, and whenever the peer is not in the
 * SOCKHASH yet, every skb is passed up to the process, which sends it on
 * under TCP's own flow control. Redirection resumes only once the process
 * has sent on every byte passed up (proxy_forwarded) and the backlog is
 * down to half the limit: the process's bytes and the kernel's never
 * overtake each other.
 */
struct proxy_flow {
	__u64 peer;			/* the cookie of the socket to send on */
	__u64 seen;			/* data bytes the verdict saw, in all */
	__u64 passed;			/* ... passed up to the process */
	__u32 passing;			/* 1: pass everything, redirect nothing */
	__u32 seq_known;		/* 1: next_seq holds (exact.bpf.h) */
	__u32 next_seq;			/* the stream's next byte to hand on */
	__u32 pad;
};

/* The relay backlog a direction may have before the verdict passes up
 * (--flow-limit; never above half the peer's send buffer).
 */
#define PROXY_FLOW_LIMIT	(1 << 20)

#endif /* __PROXY_H */
