// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* fentry/fexit timing of up to FUNCLAT_SLOTS kernel functions; the loader
 * picks each slot's function at run time (bpf_program__set_attach_target). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
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
