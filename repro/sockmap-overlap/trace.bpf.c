// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * trace.bpf.c - a kprobe on sk_psock_verdict_recv(sk, skb), where
 * tcp_read_skb() hands a verdict-only sockmap each skb: compares the skb's
 * sequence range (TCP_SKB_CB(skb)->seq, end_seq: the first 8 bytes of
 * skb->cb) with the highest end_seq already handed on for that socket
 * (at first, or when the socket is new, tp->copied_seq). An skb that starts below it carries bytes the
 * verdict already had: counted, with how many.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "trace.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);	/* the socket */
	__type(value, __u32);	/* the end of what it handed on so far */
} trace_end SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, T_MAX);
	__type(key, __u32);
	__type(value, __u64);
} trace_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACE_SAMPLES);
	__type(key, __u32);
	__type(value, __u32);
} trace_samples SEC(".maps");

static void add(__u32 what, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&trace_stats, &what);

	if (v)
		__sync_fetch_and_add(v, n);
}

SEC("kprobe/sk_psock_verdict_recv")
int BPF_KPROBE(verdict_recv, struct sock *sk, struct sk_buff *skb)
{
	__u64 key = (__u64)sk;
	__u32 seq[2], *end, start;

	if (bpf_core_read(seq, sizeof(seq), &skb->cb))
		return 0;
	if (seq[1] == seq[0])	/* FIN alone, or empty */
		return 0;
	add(T_SKBS, 1);
	end = bpf_map_lookup_elem(&trace_end, &key);
	/* Far off: a new socket at a freed one's address. */
	if (end && ((__s32)(seq[0] - *end) > (1 << 26) ||
		    (__s32)(seq[0] - *end) < -(1 << 26)))
		end = NULL;
	if (end) {
		start = *end;
	} else {
		struct tcp_sock *tp = (struct tcp_sock *)sk;

		start = BPF_CORE_READ(tp, copied_seq);
	}
	if ((__s32)(seq[0] - start) < 0) {
		__u32 old = (__s32)(seq[1] - start) < 0 ? seq[1] - seq[0] : start - seq[0];
		__u64 *n;
		__u32 k = T_OLD, i;

		add(T_OLD, 1);
		add(T_OLD_BYTES, old);
		n = bpf_map_lookup_elem(&trace_stats, &k);
		if (n) {
			i = *n - 1;
			if (i < TRACE_SAMPLES)
				bpf_map_update_elem(&trace_samples, &i, &old, BPF_ANY);
		}
	} else if (seq[0] != start) {
		add(T_GAP, 1);
	}
	if (!end || (__s32)(seq[1] - start) > 0)
		bpf_map_update_elem(&trace_end, &key, (__s32)(seq[1] - start) > 0 ? &seq[1] : &start, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
