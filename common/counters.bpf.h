/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The counters of a BPF program of the suite (ebpf-echo, sockredir, the
 * proxy): one struct of __u64s per CPU, so that counting takes no lock and
 * no atomic; the loader sums the CPUs (loader_percpu_sum) and bpftool
 * dumps the map by its name. Include it after vmlinux.h and
 * bpf_helpers.h.
 */
#ifndef ECHOLAB_COUNTERS_BPF_H
#define ECHOLAB_COUNTERS_BPF_H

/* @name, a PERCPU_ARRAY of one @value_type, and counters(): this CPU's
 * (NULL only if the map is broken). */
#define PERCPU_COUNTERS(name, value_type)				\
	struct {							\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);		\
		__uint(max_entries, 1);					\
		__type(key, __u32);					\
		__type(value, value_type);				\
	} name SEC(".maps");						\
									\
	static __always_inline value_type *counters(void)		\
	{								\
		__u32 zero = 0;						\
									\
		return bpf_map_lookup_elem(&name, &zero);		\
	}

#endif
