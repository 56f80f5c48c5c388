/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What echo.bpf.c and ebpf-echo-server.c share. Needs __u32/__u64 first
 * (vmlinux.h on the BPF side, <linux/types.h> in userspace).
 */
#ifndef __ECHO_H
#define __ECHO_H

/* Sockets the SOCKHASH can hold: above RLIMIT_NOFILE on our machines. */
#define ECHO_MAX_SOCKS	65536

#include "sockkey.h"	/* the SOCKHASH key: struct sock_key */

/* One slot of the PERCPU_ARRAY; userspace sums it over the CPUs. */
struct echo_counters {
	__u64 redirected_skbs;		/* sent back out by the kernel */
	__u64 redirected_bytes;
	__u64 passed_skbs;		/* data handed to userspace instead */
	__u64 passed_bytes;
	__u64 lookup_misses;		/* socket not found in the SOCKHASH */
	__u64 redirect_failures;	/* found, but bpf_sk_redirect_hash failed */
	__u64 fin_skbs;			/* zero-length skbs (FIN), passed */
	__u64 inserted_socks;		/* sock_ops: server sockets added */
	__u64 insert_failures;		/* sock_ops: bpf_sock_hash_update failed */
	__u64 notify_failures;		/* echo_passed ring buffer was full */
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

/* Ring buffer size: one struct sock_key per skb passed to userspace. */
#define ECHO_PASSED_RINGBUF	(256 * 1024)

#endif /* __ECHO_H */
