// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* fentry/fexit timing of up to FUNCLAT_SLOTS kernel functions, or (-c) the
 * bytes TCP copied between sockets and memory, by process; the loader picks
 * each slot's function at run time (bpf_program__set_attach_target) and
 * which of the two sets of programs loads. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "funclat.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Only threads of this tgid when non-zero (e.g. the server). */
const volatile __u32 target_tgid = 0;

/* Entry time per (thread, slot): key = pid_tgid's pid << 4 | slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FUNCLAT_SLOTS);
	__type(key, __u32);
	__type(value, struct funclat_stat);
} stats SEC(".maps");

static __always_inline int enter(__u32 slot)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 key = (id & 0xffffffff) << 4 | slot;
	__u64 now;

	if (target_tgid && (id >> 32) != target_tgid)
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &key, &now, BPF_ANY);
	return 0;
}

static __always_inline int leave(__u32 slot)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 key = (id & 0xffffffff) << 4 | slot;
	struct funclat_stat *st;
	__u64 *t0, d;

	t0 = bpf_map_lookup_elem(&start, &key);
	if (!t0)
		return 0;
	d = bpf_ktime_get_ns() - *t0;
	bpf_map_delete_elem(&start, &key);
	st = bpf_map_lookup_elem(&stats, &slot);
	if (!st)
		return 0;
	st->count++;
	st->total_ns += d;
	if (d > st->max_ns)
		st->max_ns = d;
	return 0;
}

/* -c: per (process, direction); a few hundred processes make calls in a run. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct funclat_copy_key);
	__type(value, struct funclat_copy);
} copies SEC(".maps");

static __always_inline void add_copy(__u32 dir, __u64 bytes)
{
	struct funclat_copy_key key = {
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.dir = dir,
	};
	struct funclat_copy *c, zero = {};

	c = bpf_map_lookup_elem(&copies, &key);
	if (!c) {
		bpf_get_current_comm(zero.comm, sizeof(zero.comm));
		bpf_map_update_elem(&copies, &key, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&copies, &key);
		if (!c)
			return;
	}
	__sync_fetch_and_add(&c->count, 1);
	__sync_fetch_and_add(&c->bytes, bytes);
}

/* Every TCP receive into memory (a user buffer, io_uring's, kecho's kvec)
 * copies its bytes here; 0 is success. A receive that hands pages over
 * (splice, a sockmap redirect) never comes here. */
SEC("fexit/skb_copy_datagram_iter")
int BPF_PROG(copy_recv, const struct sk_buff *skb, int offset, struct iov_iter *to,
	     int len, int ret)
{
	if (!ret && len > 0)
		add_copy(FUNCLAT_COPY_RECV, len);
	return 0;
}

/* Flags of a send that takes the caller's pages rather than copying them
 * (Linux 6.5 on; the bits were unused before). */
#define MSG_ZEROCOPY_ 0x4000000
#define MSG_SPLICE_PAGES_ 0x8000000

/* Every TCP send from memory copies what it accepts into the socket's
 * pages, unless it is a splice (6.5 on; before, splice came through
 * do_tcp_sendpages, not here) or MSG_ZEROCOPY. */
SEC("fexit/tcp_sendmsg_locked")
int BPF_PROG(copy_send, struct sock *sk, struct msghdr *msg, size_t size, int ret)
{
	if (ret > 0 && !(BPF_CORE_READ(msg, msg_flags) & (MSG_ZEROCOPY_ | MSG_SPLICE_PAGES_)))
		add_copy(FUNCLAT_COPY_SEND, ret);
	return 0;
}

/* The attach target of each program is set by the loader. */
#define SLOT(n)							\
SEC("fentry")							\
int BPF_PROG(entry##n) { return enter(n); }			\
SEC("fexit")							\
int BPF_PROG(exit##n) { return leave(n); }

SLOT(0)
SLOT(1)
SLOT(2)
SLOT(3)
SLOT(4)
SLOT(5)
SLOT(6)
SLOT(7)
