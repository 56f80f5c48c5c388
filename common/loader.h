/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What every BPF loader of the suite does before it opens its skeleton:
 * checks that it can load CO-RE programs at all, finds where its own cgroup
 * goes, and routes libbpf's messages. loader.c and cgroup.c link libbpf:
 * only the loaders' Makefiles (ebpf-echo/, sockredir/) compile them.
 */
#ifndef ECHOLAB_LOADER_H
#define ECHOLAB_LOADER_H

#include <stdbool.h>

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

#endif
