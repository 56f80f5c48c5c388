/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What echo.bpf.c and ebpf-echo-server.c share. Needs __u32/__u64 first
 * (vmlinux.h on the BPF side, <linux/types.h> in userspace).
 */
#ifndef __ECHO_H
#define __ECHO_H

/* Sockets the SOCKHASH can hold: above RLIMIT_NOFILE on our machines. */
#define ECHO_MAX_SOCKS	65536

#include "sockkey.h"	/* the SOCKHASH key: struct sock_key */
#include "exact.h"

/* One slot of the PERCPU_ARRAY; userspace sums it over the CPUs. */
struct echo_counters {
	__u64 redirected_skbs;		/* sent back out by the kernel */
	__u64 redirected_bytes;
	__u64 passed_skbs;		/* data handed to userspace instead */
	__u64 passed_bytes;
	__u64 lookup_misses;		/* socket not found in the SOCKHASH */
	__u64 redirect_failures;	/* found, but bpf_sk_redirect_hash failed */
	__u64 fin_skbs;			/* zero-length skbs (FIN), dropped */
	__u64 inserted_socks;		/* sock_ops: server sockets added */
	__u64 insert_failures;		/* sock_ops: bpf_sock_hash_update failed */
	__u64 notify_failures;		/* echo_passed ring buffer was full */
	__u64 held_back_skbs;		/* passed because the echo backed up */
	__u64 held_back_bytes;
	__u64 backpressure_on;		/* a socket switched to passing */
	__u64 backpressure_off;		/* ... and back to the kernel's echo */
	__u64 no_flow_state;		/* sock_ops could not create echo_flow */
	struct exact_counters exact;	/* exact.bpf.h: old bytes not resent */
};

/*
 * Flow control, per socket, in echo_flow (keyed by socket cookie). The
 * verdict redirects only while the socket's echo backlog -- bytes the
 * client sent that it has not yet got back acknowledged, tcp_sock's
 * bytes_received - bytes_acked -- stays under the limit; past it, every
 * skb is passed up to the process instead, where it is charged to the
 * socket's receive buffer and TCP's window closes once the process stops
 * reading. Redirection resumes only when the process has echoed every
 * byte passed up to it (echo_echoed, written by the loader) and the
 * backlog is down to half the limit: the kernel's echo never overtakes
 * the process's. See README "Flow control".
 */
struct echo_flow {
	__u64 passed;			/* bytes passed up while passing, total */
	__u32 passing;			/* 1: pass everything, redirect nothing */
	__u32 seq_known;		/* 1: next_seq holds (exact.bpf.h) */
	__u32 next_seq;			/* the stream's next byte to hand on */
	__u32 pad;
};

/*
 * What the loader does, counted where bpftool sees it beside echo_counters:
 * a global of the BPF object (its .bss map), which the loader writes
 * through the skeleton's memory mapping. The BPF programs never touch it.
 */
struct echo_userspace {
	__u64 userspace_bytes;		/* echoed by the process, not the kernel */
	__u64 userspace_wakeups;	/* epoll events on connections */
	__u64 accepted;
	__u64 preaccept_data;		/* accepted with bytes already queued */
	__u64 closed;
	__u64 eagain_reads;
	__u64 drain_timeouts;		/* closed before the echo was acked */
};

/* The echo backlog one socket may have before the verdict passes up
 * (--flow-limit; never above half the socket's send buffer).
 */
#define ECHO_FLOW_LIMIT	(1 << 20)

/* Ring buffer size: one struct sock_key per skb passed to userspace. */
#define ECHO_PASSED_RINGBUF	(256 * 1024)

#endif /* __ECHO_H */
