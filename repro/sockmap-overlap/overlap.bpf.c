// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * overlap.bpf.c - the smallest verdict-only sockmap echo: every skb a
 * socket in overlap_socks receives goes back out of that same socket's
 * egress. No stream parser, no flow control, no sock_ops: the loader
 * puts each accepted socket into slot (fd % OVERLAP_SLOTS) itself.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "overlap.h"

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, OVERLAP_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} overlap_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} overlap_stats SEC(".maps");

/* The slot of the socket an skb arrived on, set by the loader per port. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OVERLAP_SLOTS);
	__type(key, __u32);	/* the client's port, host order */
	__type(value, __u32);	/* its slot in overlap_socks */
} overlap_slot SEC(".maps");

static void count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&overlap_stats, &what);

	if (n)
		*n += 1;
}

SEC("sk_skb/stream_verdict")
int overlap_verdict(struct __sk_buff *skb)
{
	__u32 port = bpf_ntohl(skb->remote_port);
	__u32 *slot;

	/* FIN comes as an empty skb: it belongs to the socket. */
	if (skb->len == 0)
		goto pass;
	slot = bpf_map_lookup_elem(&overlap_slot, &port);
	if (!slot)
		goto pass;
	if (bpf_sk_redirect_map(skb, &overlap_socks, *slot, 0) != SK_PASS)
		goto pass;
	count(STAT_REDIRECTED);
	return SK_PASS;
pass:
	count(STAT_PASSED);
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
