/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Every byte of a TCP stream handed on once, by a verdict-only stream
 * verdict (ebpf-echo's echo and the proxy's sockmap path; issue 48).
 *
 * TCP queues a segment that starts before rcv_nxt untrimmed (a partial
 * retransmission, tcp_data_queue()), and tcp_ofo_queue() moves partly
 * overlapping out-of-order skbs to the receive queue as they are. A
 * reader through tcp_read_sock() skips the old bytes by an offset;
 * tcp_read_skb(), which feeds a verdict without a stream parser, hands
 * each skb on whole (6.0 to 7.2 at least). Under reordering the verdict
 * thus sees bytes it has already relayed, and a redirect sends them
 * again: repeats of one to a few segments (ebpf-echo/README.md, "A
 * network that reorders"; repro/sockmap-overlap reproduces it).
 *
 * The fix here, in the verdict: remember where the stream is (the
 * sequence number after the last byte handed on), read each skb's own
 * sequence number from the kernel's sk_buff (TCP_SKB_CB(skb)->seq, the
 * first word of skb->cb), and cut what comes before it off the front,
 * or drop the skb when all of it is old. bpf_probe_read_kernel() reads
 * the cb, which 6.1 allows any program loaded with CAP_PERFMON (the
 * kfunc bpf_cast_to_kern_ctx() would need 6.2). Include it after
 * vmlinux.h, bpf_helpers.h and bpf_core_read.h.
 */
#ifndef ECHOLAB_EXACT_BPF_H
#define ECHOLAB_EXACT_BPF_H

/* Set by the loader before load: 0 is the verdict-only variant, which
 * hands every skb on whole (--verdict-only), kept to measure the cost.
 */
const volatile __u32 exact_seq = 1;

/* sk_skb_adjust_room() cuts at most this much per call. */
#define EXACT_CUT_MAX	0xfffU
/* Enough calls for a 64 KiB skb: GRO's largest. */
#define EXACT_CUTS	17

/*
 * Whether @skb must be dropped: all of its bytes were handed on before,
 * or its old front could not be cut off (never send a byte twice). Else
 * its old front, if any, is cut off, and the verdict hands on the rest.
 * *next is the sequence number after the last byte handed on on this
 * socket, valid once *known is 1; on the socket's first skb it starts at
 * its copied_seq (what the process has taken so far). The verdict runs
 * for one socket at a time, under its lock: the two words need no
 * atomics. @c counts what it did.
 */
static __always_inline bool exact_drop(struct __sk_buff *skb, __u32 *next,
				       __u32 *known, struct exact_counters *c)
{
	struct sk_buff *kskb = (struct sk_buff *)skb;
	struct bpf_sock *bsk;
	struct tcp_sock *tp;
	__u32 seq, len = skb->len, old;
	int i;

	if (!exact_seq || !len)
		return false;
	if (bpf_probe_read_kernel(&seq, sizeof(seq), &kskb->cb[0])) {
		c->exact_unknown++;
		return false;
	}
	if (!*known) {
		bsk = skb->sk;
		tp = bsk ? bpf_skc_to_tcp_sock(bsk) : NULL;
		if (!tp) {
			c->exact_unknown++;
			return false;
		}
		*next = tp->copied_seq;
		*known = 1;
	}
	old = *next - seq;
	if ((__s32)old <= 0) {
		*next = seq + len;
		return false;
	}
	if (old >= len) {
		c->exact_old_skbs++;
		return true;
	}
	*next = seq + len;
	c->exact_cut_skbs++;
	c->exact_cut_bytes += old;
	for (i = 0; i < EXACT_CUTS && old; i++) {
		__u32 cut = old < EXACT_CUT_MAX ? old : EXACT_CUT_MAX;

		if (bpf_skb_adjust_room(skb, -(__s32)cut, 0, 0))
			break;
		old -= cut;
	}
	if (old) {
		c->exact_cut_failures++;
		return true;
	}
	return false;
}

#endif /* ECHOLAB_EXACT_BPF_H */
