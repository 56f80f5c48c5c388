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

/* -c: bytes TCP copied between a socket and memory, by (process, direction). */
enum funclat_copy_dir {
	FUNCLAT_COPY_RECV,	/* socket to memory: skb_copy_datagram_iter */
	FUNCLAT_COPY_SEND,	/* memory to socket: tcp_sendmsg_locked */
};

struct funclat_copy_key {
	__u32 tgid;
	__u32 dir;
};

struct funclat_copy {
	__u64 count;	/* calls that copied */
	__u64 bytes;	/* what they copied */
	char comm[16];	/* the thread that made the first of them */
};

#endif /* FUNCLAT_H */
