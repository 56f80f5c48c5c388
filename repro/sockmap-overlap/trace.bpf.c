// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * trace.bpf.c - a kprobe on sk_psock_verdict_recv(sk, skb), where
 * tcp_read_skb() hands a verdict-only sockmap each skb: compares the skb's
 * sequence range (TCP_SKB_CB(skb)->seq, end_seq: the first 8 bytes of
 * skb->cb) with the highest end_seq already handed on for that connection.
 * An skb that starts below it carries bytes the verdict already had:
 * counted, with how many, and the client's port.
 *
 * A connection is its addresses and ports (the echo's socket's), plus its
 * receive ISN, rcv_nxt - bytes_received (one more once a FIN is in): a
 * key seen before whose ISN differs by more than 1 is a new connection on
 * the same ports, and starts again. A new connection starts at
 * tp->copied_seq, read before the verdict sees its first skb.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "trace.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct trace_conn);
	__type(value, struct trace_state);
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
	__type(value, struct trace_sample);
} trace_samples SEC(".maps");

static __u64 add(__u32 what, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&trace_stats, &what);

	return v ? __sync_fetch_and_add(v, n) : 0;
}

SEC("kprobe/sk_psock_verdict_recv")
int BPF_KPROBE(verdict_recv, struct sock *sk, struct sk_buff *skb)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct trace_conn key = {};
	struct trace_state *st, fresh;
	__u32 seq[2], isn, d;

	if (bpf_core_read(seq, sizeof(seq), &skb->cb))
		return 0;
	if (seq[1] == seq[0])	/* FIN alone, or empty */
		return 0;
	add(T_SKBS, 1);
	key.saddr = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
	key.daddr = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	key.sport = bpf_htons(BPF_CORE_READ(sk, __sk_common.skc_num));
	key.dport = BPF_CORE_READ(sk, __sk_common.skc_dport);
	isn = BPF_CORE_READ(tp, rcv_nxt) - (__u32)BPF_CORE_READ(tp, bytes_received);

	st = bpf_map_lookup_elem(&trace_end, &key);
	d = st ? isn - st->isn : 0;
	if (!st || (d != 0 && d != 1 && d != (__u32)-1)) {
		fresh.isn = isn;
		fresh.end = BPF_CORE_READ(tp, copied_seq);
		add(T_CONNS, 1);
		bpf_map_update_elem(&trace_end, &key, &fresh, BPF_ANY);
		st = bpf_map_lookup_elem(&trace_end, &key);
		if (!st)
			return 0;
	}
	if ((__s32)(seq[0] - st->end) < 0) {
		struct trace_sample s;
		__u32 i;

		s.port = bpf_ntohs(key.dport);
		s.len = (__s32)(seq[1] - st->end) < 0 ? seq[1] - seq[0] : st->end - seq[0];
		add(T_OLD_BYTES, s.len);
		i = add(T_OLD, 1);
		if (i < TRACE_SAMPLES)
			bpf_map_update_elem(&trace_samples, &i, &s, BPF_ANY);
	} else if (seq[0] != st->end) {
		add(T_GAP, 1);
	}
	if ((__s32)(seq[1] - st->end) > 0)
		st->end = seq[1];
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
