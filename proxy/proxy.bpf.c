// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Kernel side of the proxy's sockmap path.
 *
 * The process accepts a client, connects to the backend and puts both
 * sockets into proxy_socks, keyed by their cookies, after describing each
 * direction in proxy_flow. From then on the stream verdict sends every
 * skb received on one socket straight out of its peer, without waking the
 * process (Cloudflare's 2019 sockmap splice). Whatever cannot be
 * redirected is passed up to the socket's own receive queue, where the
 * process reads it and sends it on.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "proxy.h"

/* Set by the loader in skel->rodata before load (0: no limit). */
const volatile __u64 flow_limit = PROXY_FLOW_LIMIT;

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, PROXY_MAX_SOCKS);
	__type(key, __u64);		/* socket cookie */
	__type(value, __u64);
} proxy_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROXY_MAX_SOCKS);
	__type(key, __u64);
	__type(value, struct proxy_flow);
} proxy_flow SEC(".maps");

/* Per direction, by cookie: the bytes the process has sent on of those
 * passed up to it. Only the process writes it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROXY_MAX_SOCKS);
	__type(key, __u64);
	__type(value, __u64);
} proxy_forwarded SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct proxy_counters);
} proxy_counters SEC(".maps");

/*
 * The direction's backlog against its limit, from both sockets' TCP
 * state: over it, pass; resume only at or below half of it. The limit is
 * never above half the peer's send buffer, so that whatever is redirected
 * fits in the peer's send queue at once and the peer's psock backlog never
 * waits on the far end.
 */
static __always_inline bool backed_up(struct bpf_sock *src, struct bpf_sock *dst,
				      bool *resume)
{
	struct tcp_sock *in = bpf_skc_to_tcp_sock(src);
	struct tcp_sock *out = bpf_skc_to_tcp_sock(dst);
	__u64 limit = flow_limit, half_sndbuf;
	__s64 backlog;

	*resume = true;
	if (!flow_limit)
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

SEC("sk_skb/stream_verdict")
int proxy_verdict(struct __sk_buff *skb)
{
	struct bpf_sock *src = NULL, *dst = NULL;
	struct proxy_counters *c;
	struct proxy_flow *f;
	__u32 zero = 0, len = skb->len;
	bool over = false, resume = true;
	__u64 cookie, *fwd;

	c = bpf_map_lookup_elem(&proxy_counters, &zero);
	if (!c)
		return SK_PASS;
	/*
	 * FIN arrives as a zero-length skb. TCP has taken the FIN already
	 * (SOCK_DONE, RCV_SHUTDOWN: the process's recv() returns 0 and epoll
	 * says EPOLLRDHUP), so there is nothing to hand on: drop it. Passed,
	 * it would go behind whatever the peer's relay has queued on this
	 * socket's psock, and the work item that empties that queue takes
	 * the 0 bytes it "delivers" for a broken pipe: EPIPE on the socket,
	 * its relay switched off, and the process resets the pair (6.12:
	 * 5-12 of 200 half-closes, tests/proxy.t half-close).
	 */
	if (len == 0) {
		c->fin_skbs++;
		return SK_DROP;
	}
	cookie = bpf_get_socket_cookie(skb);
	f = bpf_map_lookup_elem(&proxy_flow, &cookie);
	if (!f) {
		c->no_flow_state++;
		goto pass_counted;
	}
	f->seen += len;
	dst = bpf_map_lookup_elem(&proxy_socks, &f->peer);
	if (!dst) {
		/* The process inserts the backend's socket first: only its
		 * bytes can come before the client's socket is in.
		 */
		c->peer_missing++;
		goto pass;
	}
	src = bpf_map_lookup_elem(&proxy_socks, &cookie);
	if (src) {
		over = backed_up(src, dst, &resume);
		bpf_sk_release(src);
	}
	bpf_sk_release(dst);

	/* Back to the kernel's relay only once the process has sent on every
	 * byte passed up to it: they are then in the peer's send queue, and
	 * this skb goes in after them. The verdict runs for one socket at a
	 * time (under its lock), so nothing is passed between this check and
	 * the redirect.
	 */
	if (f->passing && resume) {
		fwd = bpf_map_lookup_elem(&proxy_forwarded, &cookie);
		if ((fwd ? *fwd : 0) == f->passed) {
			f->passing = 0;
			c->backpressure_off++;
		}
	}
	if (!f->passing && over) {
		f->passing = 1;
		c->backpressure_on++;
	}
	if (f->passing) {
		c->held_back_skbs++;
		goto pass;
	}
	/* flags 0: out of the peer's egress. */
	if (bpf_sk_redirect_hash(skb, &proxy_socks, &f->peer, 0) != SK_PASS) {
		c->redirect_failures++;
		goto pass;
	}
	c->redirected_skbs++;
	c->redirected_bytes += len;
	return SK_PASS;

pass:
	/* Never SK_DROP: TCP has acknowledged these bytes. Once anything is
	 * passed, nothing more is redirected until the process has sent it
	 * on (above).
	 */
	f->passing = 1;
	f->passed += len;
pass_counted:
	c->passed_skbs++;
	c->passed_bytes += len;
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
