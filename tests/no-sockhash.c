// SPDX-License-Identifier: GPL-2.0
/*
 * no-sockhash.so - LD_PRELOAD it into a libbpf program to make libbpf's
 * feature probe say this kernel has no SOCKHASH map, as it would on a
 * kernel without CONFIG_BPF_STREAM_PARSER. The kernel cannot be made to
 * lack the map, so this is how tests/ebpf.t reaches the server's message
 * for such a kernel. Every other map type is probed for real.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/bpf.h>

int libbpf_probe_bpf_map_type(enum bpf_map_type map_type, const void *opts);

int libbpf_probe_bpf_map_type(enum bpf_map_type map_type, const void *opts)
{
	int (*real)(enum bpf_map_type, const void *);

	if (map_type == BPF_MAP_TYPE_SOCKHASH)
		return 0;	/* "not supported", libbpf's own answer */
	real = (int (*)(enum bpf_map_type, const void *))
		dlsym(RTLD_NEXT, "libbpf_probe_bpf_map_type");
	return real ? real(map_type, opts) : -1;
}
