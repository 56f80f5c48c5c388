/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Flow control of the stream verdicts that relay in the kernel: ebpf-echo's
 * echo (a socket to itself) and the proxy's sockmap path (a socket to its
 * peer). A redirect bypasses TCP's window, so without a bound a reader
 * that never reads makes the kernel queue without limit. Past the limit
 * the verdict passes bytes up instead, the process sends them on under
 * TCP's own flow control, and the kernel relays again only once the
 * process has sent all it was given: the two paths never interleave.
 * Include it after vmlinux.h and bpf_helpers.h.
 */
#ifndef ECHOLAB_FLOWCTL_BPF_H
#define ECHOLAB_FLOWCTL_BPF_H

/*
 * The relay's backlog, bytes received on @src that @dst's far end has not
 * acknowledged yet, wherever they are (receive queue, psock queue, the
 * process, send queue, in flight), against @limit (0: none): true past
 * it; *resume, whether it is at or below half of it. The limit is never
 * above half @dst's send buffer, so that whatever is redirected fits in
 * the send queue at once and the psock backlog never waits on the far
 * end.
 */
static __always_inline bool flow_backed_up(struct bpf_sock *src,
					   struct bpf_sock *dst, __u64 limit,
					   bool *resume)
{
	struct tcp_sock *in = bpf_skc_to_tcp_sock(src);
	struct tcp_sock *out = bpf_skc_to_tcp_sock(dst);
	__u64 half_sndbuf;
	__s64 backlog;

	*resume = true;
	if (!limit)
		return false;
	*resume = false;
	if (!in || !out)
		return true;
	backlog = (__s64)(in->bytes_received - out->bytes_acked);
	half_sndbuf = (__u32)out->inet_conn.icsk_inet.sk.sk_sndbuf / 2;
	if (half_sndbuf < limit)
		limit = half_sndbuf;
	*resume = backlog <= (__s64)(limit / 2);
	return backlog > (__s64)limit;
}

/*
 * Whether this skb goes up to the process (true) or may be redirected.
 * *passing is the socket's switch, @passed the bytes passed up while it
 * was on, and @sent_map holds, at @cookie, how many of them the process
 * has sent on (only the process writes it). Back to the kernel's relay
 * only once the process has sent every byte passed up to it: they are
 * then in the send queue, and this skb goes in after them. The verdict
 * runs for one socket at a time (under its lock), so nothing is passed
 * between this check and the redirect. *on, *off count the switches.
 */
static __always_inline bool flow_hold(__u32 *passing, __u64 passed,
				      void *sent_map, __u64 *cookie,
				      bool over, bool resume,
				      __u64 *on, __u64 *off)
{
	__u64 *sent;

	if (*passing && resume) {
		sent = bpf_map_lookup_elem(sent_map, cookie);
		if ((sent ? *sent : 0) == passed) {
			*passing = 0;
			(*off)++;
		}
	}
	if (!*passing && over) {
		*passing = 1;
		(*on)++;
	}
	return *passing;
}

/*
 * The skb out of the egress of @map's socket at @key (flags 0), counted in
 * *skbs and *bytes; false, counted in *failures, when it cannot go: the
 * caller passes it up instead (never SK_DROP: TCP has acknowledged it).
 */
static __always_inline bool flow_redirect(struct __sk_buff *skb, void *map,
					  void *key, __u64 *skbs,
					  __u64 *bytes, __u64 *failures)
{
	__u32 len = skb->len;

	if (bpf_sk_redirect_hash(skb, map, key, 0) != SK_PASS) {
		(*failures)++;
		return false;
	}
	(*skbs)++;
	*bytes += len;
	return true;
}

#endif
