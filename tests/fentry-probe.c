// SPDX-License-Identifier: GPL-2.0
/*
 * fentry-probe - does this kernel load and attach an fentry program?
 *
 *   fentry-probe BTF_ID   BTF_ID: a function of vmlinux's BTF (tests/lib.sh
 *                         looks up do_nanosleep's with bpftool)
 *
 * The smallest fentry program there is (return 0), loaded and attached
 * with the bpf() system call alone: no libbpf, so that its answer does not
 * share a bug with ftrace/funclat, whose refusals it judges. bpftool's
 * feature probe cannot tell: bpftool 7.1 (libbpf 1.1) does not probe the
 * tracing program type and says "NOT available" on every kernel.
 *
 * Prints "fentry: loaded and attached" (exit 0) or what the kernel refused
 * and its errno (exit 1); exit 2 on usage.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int main(int argc, char **argv)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[4096] = "";
	union bpf_attr attr;
	char *end;
	long id;
	int fd, link;

	if (argc != 2 || (id = strtol(argv[1], &end, 10)) <= 0 || *end) {
		fprintf(stderr, "usage: fentry-probe BTF_ID\n");
		return 2;
	}

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACING;
	attr.expected_attach_type = BPF_TRACE_FENTRY;
	attr.attach_btf_id = (__u32)id;	/* in vmlinux: no attach_btf_obj_fd */
	attr.insns = (__u64)(unsigned long)prog;
	attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	attr.license = (__u64)(unsigned long)"GPL";
	attr.log_buf = (__u64)(unsigned long)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		printf("fentry: load refused: %s (errno %d)%s%s\n", strerror(errno),
		       errno, *log ? "; verifier: " : "", log);
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (__u32)fd;
	attr.link_create.attach_type = BPF_TRACE_FENTRY;
	link = (int)sys_bpf(BPF_LINK_CREATE, &attr);
	if (link < 0) {
		printf("fentry: attach refused: %s (errno %d)\n", strerror(errno),
		       errno);
		close(fd);
		return 1;
	}
	close(link);
	close(fd);
	printf("fentry: loaded and attached\n");
	return 0;
}
