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
#include "counters.bpf.h"
#include "flowctl.bpf.h"
#include "exact.bpf.h"

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

PERCPU_COUNTERS(proxy_counters, struct proxy_counters)

SEC("sk_skb/stream_verdict")
int proxy_verdict(struct __sk_buff *skb)
{
	struct bpf_sock *src = NULL, *dst = NULL;
	struct proxy_counters *c;
	struct proxy_flow *f;
	__u32 len;
	bool over = false, resume = true;
	__u64 cookie;

	c = counters();
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
	if (skb->len == 0) {
		c->fin_skbs++;
		return SK_DROP;
	}
	cookie = bpf_get_socket_cookie(skb);
	f = bpf_map_lookup_elem(&proxy_flow, &cookie);
	if (!f) {
		c->no_flow_state++;
		len = skb->len;
		goto pass_counted;
	}
	/* Bytes relayed before, under reordering (exact.bpf.h). */
	if (exact_drop(skb, &f->next_seq, &f->seq_known, &c->exact))
		return SK_DROP;
	len = skb->len;
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
		over = flow_backed_up(src, dst, flow_limit, &resume);
		bpf_sk_release(src);
	}
	bpf_sk_release(dst);

	if (flow_hold(&f->passing, f->passed, &proxy_forwarded, &cookie, over,
		      resume, &c->backpressure_on, &c->backpressure_off)) {
		c->held_back_skbs++;
		goto pass;
	}
	/* Out of the peer's egress. */
	if (flow_redirect(skb, &proxy_socks, &f->peer, &c->redirected_skbs,
			  &c->redirected_bytes, &c->redirect_failures))
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
