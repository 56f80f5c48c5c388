/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Shared by sockredir.bpf.c and its loader, sockredir.c. */
#ifndef ECHOLAB_SOCKREDIR_H
#define ECHOLAB_SOCKREDIR_H

/* Both ends of every bypassed connection; enough for 1000 x 10 runs and
 * for the TIME_WAIT-free ends still open when the next round starts.
 */
#define REDIR_MAX_SOCKS	65536

/* The ports one sockredir joins (-p, repeated): a server's, or a relay's
 * and its backend's.
 */
#define REDIR_MAX_PORTS	4

#include "sockkey.h"	/* the SOCKHASH key: struct sock_key */

/* Per CPU; the loader sums them. */
struct redir_counters {
	__u64 socks_added;	/* ends put into the SOCKHASH */
	__u64 add_failures;	/* the map refused one (full?), or its
				 * join mark (redir_join_seq) failed */
	__u64 msgs_redirected;	/* sendmsg calls handed to the peer */
	__u64 bytes_redirected;
	__u64 msgs_passed;	/* through TCP/IP: no peer in the map, or
				 * the end is on TCP for good */
	__u64 bytes_passed;
	__u64 peer_full;	/* the peer had --flow-limit unread: end to TCP */
	__u64 sent_unseen;	/* a send the program missed went through TCP:
				 * end to TCP (redir_join_seq) */
};

/*
 * What a peer may have unread on its bypass queue before an end sending
 * to it is moved to TCP for good, where the peer's window (which counts
 * those bytes: bpf_tcp_ingress charges sk_rmem_alloc) stops it
 * (--flow-limit; at least the peer's receive buffer).
 */
#define REDIR_FLOW_LIMIT	(4 << 20)

#endif
