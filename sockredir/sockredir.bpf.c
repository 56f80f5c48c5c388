// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sockredir: local TCP connections to one port, or a few, bypass TCP/IP.
 *
 * sock_ops puts both ends of every connection to the ports into a SOCKHASH
 * once the handshake is done: the client's end (active) and the server's
 * (passive), each keyed by its own 4-tuple. At every sendmsg() on either
 * end, the sk_msg program looks the peer up by the swapped 4-tuple and,
 * when it is there, moves the data straight onto the peer's ingress queue:
 * no skb, no TCP segment, no loopback device, no softirq. Handshake and
 * teardown (SYN, FIN, RST) still go through TCP, which knows nothing of the
 * bytes that went around it.
 *
 * sock_ops only sees sockets whose cgroup it is attached to: the loader
 * attaches it to a cgroup of its own, where the server and the client run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "defaults.h"
#include "sockredir.h"
#include "counters.bpf.h"

#define AF_INET 2

/* Set by the loader before load: the ports, 0 where there are fewer. */
const volatile __u32 redir_ports[REDIR_MAX_PORTS] = { ECHOLAB_PORT };
/* 0: no bound (the kernel's own behaviour; the loader warns). */
const volatile __u64 flow_limit = REDIR_FLOW_LIMIT;

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, REDIR_MAX_SOCKS);
	__type(key, struct sock_key);
	__type(value, __u64);
} redir_socks SEC(".maps");

PERCPU_COUNTERS(redir_counters, struct redir_counters)

/* PORT is one of ours. */
static __always_inline bool our_port(__u32 port)
{
	for (int i = 0; i < REDIR_MAX_PORTS; i++)
		if (redir_ports[i] && redir_ports[i] == port)
			return true;
	return false;
}

/*
 * Ends that sent bytes through TCP once. They stay on TCP: bytes moved to
 * the peer's ingress queue would be read before those still in its TCP
 * receive queue (tcp_bpf_recvmsg() reads that queue first). It happens
 * when an end sends before its peer is in the map (the server's end joins
 * when the handshake's last ACK arrives), and when a send began before
 * the end itself joined (below).
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} redir_on_tcp SEC(".maps");

/*
 * Each end's write_seq when it joined the map, before it could send.
 * A send() that began before then, sleeping in the kernel's own
 * tcp_sendmsg() until the handshake ended (a blocking send right after a
 * non-blocking connect, or a SYN retransmitted), goes on there when it
 * wakes: through TCP, unseen by the sk_msg program, which joining the
 * map puts in front of the next send only. The program sees such bytes
 * as write_seq moved on; without this the end's next message overtook
 * them (a connection's first bytes late, about once in 10,000 hostile
 * connections). Not covered: data in a SYN (TCP Fast Open), which no
 * client of this suite sends.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} redir_join_seq SEC(".maps");

SEC("sockops")
int redir_sockops(struct bpf_sock_ops *skops)
{
	struct redir_counters *c = counters();
	struct sock_key key = {};
	__u32 remote_port, *seq = NULL;
	struct bpf_sock *sk;

	if (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB &&
	    skops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
		return 1;
	if (skops->family != AF_INET)
		return 1;
	/* The client's end has the port as its remote, the server's as local
	 * (a relay's two legs: one end of each on the relay's port, one on
	 * its backend's).
	 */
	remote_port = bpf_ntohl(skops->remote_port);
	if (!our_port(skops->local_port) && !our_port(remote_port))
		return 1;

	key.local_ip4 = skops->local_ip4;
	key.remote_ip4 = skops->remote_ip4;
	key.local_port = skops->local_port;
	key.remote_port = remote_port;

	/* No byte sent yet: snd_nxt is write_seq. An end whose mark cannot
	 * be kept stays out of the map, on TCP.
	 */
	sk = skops->sk;
	if (sk)
		seq = bpf_sk_storage_get(&redir_join_seq, sk, 0,
					 BPF_SK_STORAGE_GET_F_CREATE);
	if (!sk || !seq) {
		if (c)
			c->add_failures++;
		return 1;
	}
	*seq = skops->snd_nxt;

	/* BPF_NOEXIST: a 4-tuple in use is never replaced by a newer one. */
	if (bpf_sock_hash_update(skops, &redir_socks, &key, BPF_NOEXIST)) {
		if (c)
			c->add_failures++;
		return 1;
	}
	if (c)
		c->socks_added++;
	return 1;
}

/*
 * The peer this end redirected to last, as a number: the struct sock the
 * kernel put in the message's sk_redir when bpf_msg_redirect_hash found
 * it. An sk_msg program can neither keep a socket nor release one looked
 * up in a SOCKHASH; it reads the peer through this with
 * bpf_probe_read_kernel, which never faults (a peer freed meanwhile
 * reads as garbage: at worst this end goes on through TCP, as below).
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} redir_peer SEC(".maps");

/*
 * Whether the peer already has its share unread: the bytes moved onto its
 * queue count in its sk_rmem_alloc until it reads them (bpf_tcp_ingress
 * adds, sk_msg_recvmsg subtracts); nothing else checks them against its
 * receive buffer.
 */
static __always_inline bool peer_full(struct sk_msg_md *msg)
{
	struct sock *peer;
	__u64 limit = flow_limit, *p;
	int queued, rcvbuf;

	if (!limit || !msg->sk)
		return false;
	p = bpf_sk_storage_get(&redir_peer, msg->sk, 0, 0);
	if (!p || !*p)
		return false;	/* nothing redirected yet */
	peer = (struct sock *)*p;
	queued = BPF_CORE_READ(peer, sk_backlog.rmem_alloc.counter);
	rcvbuf = BPF_CORE_READ(peer, sk_rcvbuf);
	if (rcvbuf > 0 && (__u64)rcvbuf > limit)
		limit = rcvbuf;
	return queued > 0 && (__u64)queued > limit;
}

/* After a redirect: remember the peer (the kernel's struct sk_msg is the
 * program's context; sk_redir is what the helper just set).
 */
static __always_inline void remember_peer(struct sk_msg_md *msg)
{
	__u64 peer = 0, *p;

	if (!flow_limit || !msg->sk)
		return;
	bpf_probe_read_kernel(&peer, sizeof(peer),
			      (void *)msg + bpf_core_field_offset(struct sk_msg, sk_redir));
	p = bpf_sk_storage_get(&redir_peer, msg->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (p)
		*p = peer;
}

/* This end sent bytes through TCP since it joined, by a send() the
 * program never saw (redir_join_seq), or it cannot tell.
 */
static __always_inline bool sent_unseen(struct sk_msg_md *msg)
{
	struct tcp_sock *tp;
	__u32 *seq;

	if (!msg->sk)
		return true;
	seq = bpf_sk_storage_get(&redir_join_seq, msg->sk, 0, 0);
	tp = bpf_skc_to_tcp_sock(msg->sk);
	return !seq || !tp || tp->write_seq != *seq;
}

SEC("sk_msg")
int redir_msg(struct sk_msg_md *msg)
{
	struct redir_counters *c = counters();
	struct sock_key peer = {};
	__u32 len = msg->size;
	__u32 *on_tcp;

	on_tcp = bpf_sk_storage_get(&redir_on_tcp, msg->sk, 0, 0);
	if (on_tcp && *on_tcp)
		goto pass;
	if (sent_unseen(msg)) {
		if (c)
			c->sent_unseen++;
		goto pass;
	}

	/* The peer's key is ours, seen from the other end. */
	peer.local_ip4 = msg->remote_ip4;
	peer.remote_ip4 = msg->local_ip4;
	peer.local_port = bpf_ntohl(msg->remote_port);
	peer.remote_port = msg->local_port;

	/*
	 * A peer that does not read: this end goes on through TCP, for good
	 * (as above: its bytes must not overtake those), and TCP's window,
	 * closed by the bytes the peer has unread, stops it.
	 */
	if (peer_full(msg)) {
		if (c)
			c->peer_full++;
		goto pass;
	}

	/*
	 * A peer outside the map (not local, or its cgroup is not ours) makes
	 * the helper fail without touching the message: SK_PASS then sends it
	 * through TCP as always. (Returning its SK_DROP would fail sendmsg.)
	 */
	if (bpf_msg_redirect_hash(msg, &redir_socks, &peer, BPF_F_INGRESS) != SK_PASS)
		goto pass;
	remember_peer(msg);
	if (c) {
		c->msgs_redirected++;
		c->bytes_redirected += len;
	}
	return SK_PASS;

pass:
	on_tcp = bpf_sk_storage_get(&redir_on_tcp, msg->sk, 0,
				    BPF_SK_STORAGE_GET_F_CREATE);
	if (on_tcp)
		*on_tcp = 1;
	if (c) {
		c->msgs_passed++;
		c->bytes_passed += len;
	}
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
