// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"

int loader_preflight(const char *prog, const char *btf_path,
		     struct own_cgroup *cg, const char *cgroup_root)
{
	struct stat st;

	if (geteuid() != 0) {
		fprintf(stderr, "%s: must run as root: loading BPF programs and "
			"creating a cgroup need CAP_BPF, CAP_NET_ADMIN and "
			"CAP_SYS_ADMIN; run it with sudo\n", prog);
		return -EPERM;
	}
	if (stat(btf_path, &st)) {
		fprintf(stderr, "%s: no kernel BTF at %s (%s): CO-RE needs a "
			"kernel built with CONFIG_DEBUG_INFO_BTF=y; boot such a "
			"kernel or pass its BTF with --btf FILE\n", prog, btf_path,
			strerror(errno));
		return -ENOENT;
	}
	return cg ? cgroup_setup(cg, prog, cgroup_root) : 0;
}

static bool log_verbose;

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	if (level != LIBBPF_WARN && !log_verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

void loader_log(bool verbose)
{
	log_verbose = verbose;
	libbpf_set_print(print_libbpf);
}

void loader_open_failed(const char *prog, int err)
{
	fprintf(stderr, "%s: opening the BPF object failed: %s (run with -v "
		"for libbpf's log)\n", prog, strerror(err));
}

void loader_load_failed(const char *prog, int err)
{
	fprintf(stderr, "%s: loading the BPF programs failed: %s; the verifier "
		"or the kernel rejected them (run with -v for the verifier "
		"log)\n", prog, strerror(err));
}

int loader_attach_verdict(const char *prog, struct bpf_program *verdict,
			  struct bpf_map *map, enum bpf_attach_type type,
			  const char *what)
{
	int err;

	if (!bpf_prog_attach(bpf_program__fd(verdict), bpf_map__fd(map), type,
			     0))
		return 0;
	err = -errno;
	fprintf(stderr, "%s: attaching %s to the SOCKHASH failed: %s\n", prog,
		what, strerror(-err));
	return err;
}

struct bpf_link *loader_attach_sockops(const char *prog,
				       struct bpf_program *sockops,
				       const struct own_cgroup *cg)
{
	struct bpf_link *link = bpf_program__attach_cgroup(sockops, cg->fd);
	int err = errno;

	if (!link) {
		fprintf(stderr, "%s: attaching sock_ops to cgroup %s failed: "
			"%s\n", prog, cg->path, strerror(err));
		errno = err;
	}
	return link;
}

int loader_percpu_sum(struct bpf_map *map, void *sum, size_t size)
{
	int ncpus = libbpf_num_possible_cpus(), i, err = 0;
	size_t n = size / sizeof(uint64_t), j;
	uint64_t *v, *out = sum;
	uint32_t zero = 0;

	memset(sum, 0, size);
	if (ncpus <= 0)
		return ncpus ? ncpus : -ENODEV;
	/* The kernel rounds each CPU's value up to 8 bytes: size is one. */
	v = calloc(ncpus, size);
	if (!v)
		return -ENOMEM;
	if (bpf_map__lookup_elem(map, &zero, sizeof(zero), v, ncpus * size, 0))
		err = -errno;
	for (i = 0; !err && i < ncpus; i++)
		for (j = 0; j < n; j++)
			out[j] += v[(size_t)i * n + j];
	free(v);
	return err;
}
