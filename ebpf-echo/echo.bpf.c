// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Kernel side of the ebpf echo server.
 *
 * sock_ops puts the server's accepted sockets into a SOCKHASH; the
 * sk_skb stream_verdict program then sends every received skb straight
 * back out of the socket it arrived on. Whatever cannot be redirected is
 * passed up to the socket's receive queue, where userspace echoes it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "defaults.h"
#include "echo.h"
#include "counters.bpf.h"
#include "flowctl.bpf.h"
#include "exact.bpf.h"

#define AF_INET 2

/* Set by the loader in skel->rodata before load. */
const volatile __u32 server_port = ECHOLAB_PORT;
/* The echo backlog a socket may have before the verdict passes up (0: no
 * limit, the loader says so loudly); see struct echo_flow in echo.h.
 */
const volatile __u64 flow_limit = ECHO_FLOW_LIMIT;

/* The loader's counters: kept here so that bpftool reads them (echo.h). */
struct echo_userspace userspace = {};

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, ECHO_MAX_SOCKS);
	__type(key, struct sock_key);
	__type(value, __u64);	/* 8 bytes: bpftool can dump it (cookie) */
} echo_socks SEC(".maps");

PERCPU_COUNTERS(echo_counters, struct echo_counters)

/*
 * Which sockets got bytes passed up to userspace. The loader watches only
 * for FIN and errors on a socket once the kernel echoes for it, so that
 * redirected messages never wake the process; this tells it when to read.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, ECHO_PASSED_RINGBUF);
} echo_passed SEC(".maps");

/* Per socket, by cookie: created by sock_ops before the socket enters
 * echo_socks, deleted by sock_ops when it closes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ECHO_MAX_SOCKS);
	__type(key, __u64);
	__type(value, struct echo_flow);
} echo_flow SEC(".maps");

/* Per socket, by cookie: the bytes the loader has echoed (sent into the
 * socket) of those passed up to it. Only the loader writes it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ECHO_MAX_SOCKS);
	__type(key, __u64);
	__type(value, __u64);
} echo_echoed SEC(".maps");

SEC("sockops")
int echo_sockops(struct bpf_sock_ops *skops)
{
	struct echo_flow flow = {};
	struct echo_counters *c;
	struct sock_key key = {};
	__u64 cookie;

	if (skops->family != AF_INET || skops->local_port != server_port)
		return 1;
	cookie = bpf_get_socket_cookie(skops);
	/* A server socket closed: its flow state goes with it. */
	if (skops->op == BPF_SOCK_OPS_STATE_CB) {
		if (skops->args[1] == BPF_TCP_CLOSE) {
			bpf_map_delete_elem(&echo_flow, &cookie);
			bpf_map_delete_elem(&echo_echoed, &cookie);
		}
		return 1;
	}
	/* Only the server's side of a connection, once the handshake is done:
	 * client sockets would drag their own receive path through sockmap.
	 */
	if (skops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
		return 1;

	key.local_ip4 = skops->local_ip4;
	key.remote_ip4 = skops->remote_ip4;
	key.local_port = skops->local_port;
	key.remote_port = bpf_ntohl(skops->remote_port);

	c = counters();
	/* No flow state, no kernel echo: without it nothing would bound what
	 * the psock queues. Not in the map, all its data reaches userspace,
	 * which echoes it under TCP's own flow control.
	 */
	if (bpf_map_update_elem(&echo_flow, &cookie, &flow, BPF_ANY)) {
		if (c)
			c->no_flow_state++;
		return 1;
	}
	if (bpf_sock_hash_update(skops, &echo_socks, &key, BPF_NOEXIST)) {
		bpf_map_delete_elem(&echo_flow, &cookie);
		if (c)
			c->insert_failures++;
		return 1;
	}
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
				  BPF_SOCK_OPS_STATE_CB_FLAG);
	if (c)
		c->inserted_socks++;
	return 1;
}

SEC("sk_skb/stream_verdict")
int echo_verdict(struct __sk_buff *skb)
{
	struct echo_counters *c = counters();
	struct sock_key key = {};
	struct echo_flow *f;
	struct bpf_sock *sk;
	__u32 len;
	bool over, resume;
	__u64 cookie;

	if (!c)
		return SK_PASS;

	/*
	 * FIN arrives as a zero-length skb, and TCP has taken the FIN already:
	 * recv() returns 0 once the queues are empty. Drop it. Passed while
	 * the echo is queued on the psock, it would wait there behind it,
	 * and the work item that empties that queue takes the 0 bytes it
	 * delivers for a broken pipe: EPIPE on the socket and its echo
	 * stopped, with bytes still due (sk_psock_backlog(); tests/hostile.t,
	 * 3 of 8,400 connections a run that half-closed).
	 */
	if (skb->len == 0) {
		c->fin_skbs++;
		return SK_DROP;
	}

	key.local_ip4 = skb->local_ip4;
	key.remote_ip4 = skb->remote_ip4;
	key.local_port = skb->local_port;
	key.remote_port = bpf_ntohl(skb->remote_port);
	cookie = bpf_get_socket_cookie(skb);
	f = bpf_map_lookup_elem(&echo_flow, &cookie);
	/* Bytes echoed before, under reordering (exact.bpf.h): never twice,
	 * whichever way the rest goes.
	 */
	if (f && exact_drop(skb, &f->next_seq, &f->seq_known, &c->exact))
		return SK_DROP;
	len = skb->len;

	sk = bpf_map_lookup_elem(&echo_socks, &key);
	if (!sk) {
		c->lookup_misses++;
		goto pass;
	}
	/* README "Flow control": the echo's backlog is the socket's own. */
	over = flow_backed_up(sk, sk, flow_limit, &resume);
	bpf_sk_release(sk);
	if (!f) {
		/* sock_ops makes it before the socket enters the map. */
		c->no_flow_state++;
		goto pass;
	}

	if (flow_hold(&f->passing, f->passed, &echo_echoed, &cookie, over,
		      resume, &c->backpressure_on, &c->backpressure_off)) {
		c->held_back_skbs++;
		c->held_back_bytes += len;
		goto pass;
	}

	/* Out of the socket's egress, i.e. back to the client. */
	if (flow_redirect(skb, &echo_socks, &key, &c->redirected_skbs,
			  &c->redirected_bytes, &c->redirect_failures))
		return SK_PASS;

pass:
	/* Never SK_DROP: userspace reads and echoes what we could not. Once
	 * anything is passed, nothing more is redirected until the process
	 * has echoed it (above): the two echoes never interleave.
	 */
	if (f) {
		f->passing = 1;
		f->passed += len;
	}
	c->passed_skbs++;
	c->passed_bytes += len;
	if (bpf_ringbuf_output(&echo_passed, &key, sizeof(key), 0))
		c->notify_failures++;
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
