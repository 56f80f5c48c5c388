// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* funclat: count, total and mean time of kernel functions, from fentry/fexit;
 * or the bytes TCP copied between sockets and memory, by process.
 *
 *   funclat [-p TGID] [-d SECONDS] FUNCTION...
 *   funclat -c [-d SECONDS]
 *
 * Up to FUNCLAT_SLOTS functions, by name (vmlinux or a loaded module with
 * BTF). Runs until SIGINT/SIGTERM or SECONDS, then prints one line per
 * function: name count total_ns mean_ns max_ns. Functions without BTF
 * (absent, inlined, static and renamed) are reported and skipped.
 *
 * With -c, one line per direction and process that copied: direction
 * (recv: socket to memory, counted at skb_copy_datagram_iter; send: memory
 * to socket, at tcp_sendmsg_locked, less the sends that hand pages over:
 * splice, MSG_ZEROCOPY), tgid, comm (the thread that copied first: a
 * kworker's name, or one thread of a process), calls and bytes. */
#include <errno.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "funclat.h"
#include "funclat.skel.h"

static volatile sig_atomic_t exiting;
const char *prog = "funclat";	/* cli.h; verbose is cli.c's */

static void sig_handler(int sig)
{
	(void)sig;
	exiting = 1;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *fmt,
			   va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: funclat [-v] [-p TGID] [-d SECONDS] FUNCTION... (at most %d)\n"
		"       funclat [-v] -c [-d SECONDS]  (bytes TCP copied, by process)\n",
		FUNCLAT_SLOTS);
}

/* Is NAME a function in the kernel's or a module's BTF? */
static int has_btf_func(const char *name)
{
	struct btf *vmlinux, *mod;
	struct dirent *de;
	char path[512];
	int found = 0;
	DIR *dir;

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return 0;
	if (btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0) {
		btf__free(vmlinux);
		return 1;
	}
	dir = opendir("/sys/kernel/btf");
	while (dir && !found && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", de->d_name);
		mod = btf__parse_split(path, vmlinux);
		if (!mod)
			continue;
		found = btf__find_by_name_kind(mod, name, BTF_KIND_FUNC) > 0;
		btf__free(mod);
	}
	if (dir)
		closedir(dir);
	btf__free(vmlinux);
	return found;
}

/* The timing table: one line per function, its sums over the CPUs. */
static int print_times(struct funclat_bpf *skel, const char **names, int nfuncs)
{
	struct funclat_stat *cpu_st;
	int ncpus, err = 0, i, c;

	ncpus = libbpf_num_possible_cpus();
	if (ncpus < 0)
		return ncpus;
	cpu_st = calloc(ncpus, sizeof(*cpu_st));
	if (!cpu_st)
		return -ENOMEM;
	printf("function\tcount\ttotal_ns\tmean_ns\tmax_ns\n");
	for (i = 0; i < nfuncs; i++) {
		struct funclat_stat sum = {};
		__u32 key = i;

		err = bpf_map__lookup_elem(skel->maps.stats, &key, sizeof(key), cpu_st,
					   sizeof(*cpu_st) * ncpus, 0);
		if (err)
			break;
		for (c = 0; c < ncpus; c++) {
			sum.count += cpu_st[c].count;
			sum.total_ns += cpu_st[c].total_ns;
			if (cpu_st[c].max_ns > sum.max_ns)
				sum.max_ns = cpu_st[c].max_ns;
		}
		printf("%s\t%llu\t%llu\t%llu\t%llu\n", names[i],
		       (unsigned long long)sum.count, (unsigned long long)sum.total_ns,
		       (unsigned long long)(sum.count ? sum.total_ns / sum.count : 0),
		       (unsigned long long)sum.max_ns);
	}
	free(cpu_st);
	return err;
}

/* The -c table: one line per direction and process. A full map (4096
 * pairs) would have dropped pairs: said, and an error. */
static int print_copies(struct funclat_bpf *skel)
{
	static const char *const dir[] = { "recv", "send" };
	struct funclat_copy_key key, next, *prev = NULL;
	struct funclat_copy c;
	int fd = bpf_map__fd(skel->maps.copies), pairs = 0;

	printf("direction\ttgid\tcomm\tcalls\tbytes\n");
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.dir > FUNCLAT_COPY_SEND || bpf_map_lookup_elem(fd, &key, &c))
			continue;
		c.comm[sizeof(c.comm) - 1] = '\0';
		printf("%s\t%u\t%s\t%llu\t%llu\n", dir[key.dir], key.tgid,
		       c.comm[0] ? c.comm : "?", (unsigned long long)c.count,
		       (unsigned long long)c.bytes);
		pairs++;
	}
	if (pairs >= (int)bpf_map__max_entries(skel->maps.copies)) {
		fprintf(stderr, "funclat: the table of processes is full (%d pairs): "
			"some processes' copies were not counted; count for less time\n", pairs);
		return -ENOSPC;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *names[FUNCLAT_SLOTS];
	struct bpf_program *entry[FUNCLAT_SLOTS], *exit_[FUNCLAT_SLOTS];
	struct funclat_bpf *skel = NULL;
	unsigned long tgid = 0, seconds = 0;
	int nfuncs = 0, err = 0, opt, i, copies = 0;
	char pname[16];

	while ((opt = getopt(argc, argv, "vcp:d:h")) != -1) {
		switch (opt) {
		case 'v':
			verbose = true;
			break;
		case 'c':
			copies = 1;
			break;
		case 'p':
			if (str_to_num(optarg, 1, INT_MAX, &tgid)) {
				fprintf(stderr, "funclat: -p: not a process id: %s\n", optarg);
				return 2;
			}
			break;
		case 'd':
			if (str_to_num(optarg, 1, INT_MAX, &seconds)) {
				fprintf(stderr, "funclat: -d: not a number of seconds: %s\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (copies ? optind != argc || tgid :
		     optind == argc || argc - optind > FUNCLAT_SLOTS) {
		usage(stderr);
		return 2;
	}
	libbpf_set_print(libbpf_print_fn);

	skel = funclat_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "funclat: cannot open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->target_tgid = tgid;

	for (i = 0; i < FUNCLAT_SLOTS; i++) {
		snprintf(pname, sizeof(pname), "entry%d", i);
		entry[i] = bpf_object__find_program_by_name(skel->obj, pname);
		snprintf(pname, sizeof(pname), "exit%d", i);
		exit_[i] = bpf_object__find_program_by_name(skel->obj, pname);
		bpf_program__set_autoload(entry[i], false);
		bpf_program__set_autoload(exit_[i], false);
	}
	bpf_program__set_autoload(skel->progs.copy_recv, copies);
	bpf_program__set_autoload(skel->progs.copy_send, copies);
	for (i = optind; i < argc; i++) {
		if (!has_btf_func(argv[i])) {
			fprintf(stderr, "funclat: %s: no such function in the kernel's BTF "
				"(absent, inlined, or its module is not loaded): skipped\n", argv[i]);
			continue;
		}
		names[nfuncs] = argv[i];
		bpf_program__set_autoload(entry[nfuncs], true);
		bpf_program__set_autoload(exit_[nfuncs], true);
		err = bpf_program__set_attach_target(entry[nfuncs], 0, argv[i]);
		if (!err)
			err = bpf_program__set_attach_target(exit_[nfuncs], 0, argv[i]);
		if (err) {
			fprintf(stderr, "funclat: %s: cannot set the attach target: %s\n",
				argv[i], strerror(-err));
			goto cleanup;
		}
		nfuncs++;
	}
	if (!nfuncs && !copies) {
		fprintf(stderr, "funclat: none of the functions can be traced\n");
		err = -ENOENT;
		goto cleanup;
	}

	err = funclat_bpf__load(skel);
	if (err) {
		fprintf(stderr, "funclat: cannot load the BPF programs: %s "
			"(fentry needs BTF and CONFIG_FUNCTION_TRACER; root)\n", strerror(-err));
		goto cleanup;
	}
	err = funclat_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "funclat: cannot attach: %s\n", strerror(-err));
		goto cleanup;
	}

	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);
	if (copies)
		fprintf(stderr, "funclat: counting TCP's copies (2 function(s))%s\n",
			seconds ? "" : "; Ctrl-C prints the table");
	else
		fprintf(stderr, "funclat: timing %d function(s)%s\n", nfuncs,
			seconds ? "" : "; Ctrl-C prints the table");
	/* Tell a waiting script that the probes are in place. */
	fflush(stderr);
	{
		struct timespec t0, now;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!exiting) {
			usleep(50000);
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (seconds && (unsigned long)(now.tv_sec - t0.tv_sec) >= seconds)
				break;
		}
	}

	err = copies ? print_copies(skel) : print_times(skel, names, nfuncs);

cleanup:
	funclat_bpf__destroy(skel);
	return err ? 1 : 0;
}
