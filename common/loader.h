/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What every BPF loader of the suite does before it opens its skeleton:
 * checks that it can load CO-RE programs at all, finds where its own cgroup
 * goes, and routes libbpf's messages. loader.c and cgroup.c link libbpf:
 * only the loaders' Makefiles (ebpf-echo/, sockredir/) compile them.
 */
#ifndef ECHOLAB_LOADER_H
#define ECHOLAB_LOADER_H

#include <stdbool.h>
#include <bpf/libbpf.h>

#include "cgroup.h"

#define LOADER_BTF	"/sys/kernel/btf/vmlinux"	/* the kernel's own BTF */

/*
 * Root, the kernel BTF at @btf_path, then cgroup_setup(@cg, @prog,
 * @cgroup_root) unless @cg is NULL (a loader that attaches to no cgroup),
 * in that order. Prints what failed and what to do about
 * it, prefixed with @prog; returns 0 or a negative errno.
 */
int loader_preflight(const char *prog, const char *btf_path,
		     struct own_cgroup *cg, const char *cgroup_root);

/* libbpf's warnings always; its info and debug lines with @verbose. */
void loader_log(bool verbose);

/* A skeleton's open or load failed with -@err: says so, and where the
 * reason is (libbpf's log, the verifier's), prefixed with @prog. */
void loader_open_failed(const char *prog, int err);
void loader_load_failed(const char *prog, int err);

/*
 * The map's verdict program first, as @type (BPF_SK_SKB_STREAM_VERDICT,
 * BPF_SK_MSG_VERDICT): a socket takes the map's programs when it is
 * added. @what names the program in the message a failure prints; 0 or
 * -errno.
 */
int loader_attach_verdict(const char *prog, struct bpf_program *verdict,
			  struct bpf_map *map, enum bpf_attach_type type,
			  const char *what);

/*
 * @sockops attached to @cg through a link, not a plain attachment: it
 * goes away with this process, so a crash leaves nothing behind. The
 * link, or NULL with errno set after saying why.
 */
struct bpf_link *loader_attach_sockops(const char *prog,
				       struct bpf_program *sockops,
				       const struct own_cgroup *cg);

/*
 * A PERCPU_ARRAY's one value summed over the CPUs into @sum, @size bytes
 * of __u64 counters (every counters struct of the suite is only those).
 * 0, or -errno with @sum left zero.
 */
int loader_percpu_sum(struct bpf_map *map, void *sum, size_t size);

#endif
