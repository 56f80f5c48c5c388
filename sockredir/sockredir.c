// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sockredir: loads sockredir.bpf.c for a port or a few, makes a cgroup of its own
 * and attaches sock_ops there, then waits. Connections to the port between
 * processes in that cgroup bypass TCP/IP for their payload; see
 * sockredir.bpf.c. On SIGINT/SIGTERM it detaches, moves out any process
 * still in the cgroup and removes it; after kill -9 the kernel detaches the
 * programs with the last file descriptor and only the empty cgroup stays
 * (the next start, or `run.sh stop`, removes it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "defaults.h"
#include "loader.h"
#include "sockredir.h"
#include "sockredir.skel.h"

#define PROG			"sockredir"

const char *prog = PROG;	/* cli.h */

static struct env {
	int ports[REDIR_MAX_PORTS];
	int nports;		/* how many -p gave; 0: the default port alone */
	bool verbose;
	const char *btf_path;
	const char *cgroup_root;
	long flow_limit;
} env = {
	.ports = { ECHOLAB_PORT },
	.flow_limit = REDIR_FLOW_LIMIT,
	.btf_path = LOADER_BTF,
};

static const char usage[] =
"Usage: sockredir [-p PORT]... [-v] [--btf FILE] [--cgroup-root DIR]\n"
"                 [--flow-limit BYTES]\n"
"Local TCP connections to PORT skip TCP/IP for their payload: an sk_msg\n"
"program moves each sendmsg() straight onto the peer socket's receive queue.\n"
"Only processes in the cgroup this creates, <root>/echolab-bypass-PORT (the\n"
"first PORT), are affected: put the server and its clients there (echo PID >\n"
"DIR/cgroup.procs, or use 'run.sh user --bypass'). It binds nothing and\n"
"matches no address: a connection bypasses only when both its ends are\n"
"sockets of this machine in that cgroup, whatever address the server listens\n"
"on. A relay's two legs take two ports: -p RELAY_PORT -p BACKEND_PORT, the\n"
"relay, its backend and their clients in the cgroup ('run.sh user --proxy\n"
"skmsg').\n"
"\n"
"Never put a program there that receives with splice(): its bytes would\n"
"wait forever (tcp_splice_read() does not see the queue they are moved to;\n"
"seen on Linux 6.1 and 6.18). send(), write(), sendfile() and splice() into\n"
"the socket, and recv()/read() out of it, work.\n"
"\n"
"  -p, --port N           a server port whose connections bypass (" ECHOLAB_PORT_STR ");\n"
"                         repeated, up to " ECHOLAB_STR(REDIR_MAX_PORTS) " ports\n"
"  -v, --verbose          libbpf's messages on stderr\n"
"      --btf FILE         kernel BTF for CO-RE (default /sys/kernel/btf/vmlinux)\n"
"      --cgroup-root DIR  cgroup v2 directory to create ours in (default: the\n"
"                         cgroup2 mount in /proc/self/mountinfo)\n"
"      --flow-limit BYTES what a peer may have unread on its bypass queue\n"
"                         (at least its receive buffer) before the end that\n"
"                         sends to it goes on through TCP, whose window stops\n"
"                         it (default 4194304; 0 = no limit: a peer that\n"
"                         never reads makes its sender queue up to\n"
"                         net.ipv4.tcp_mem, machine-wide)\n"
"  -h, --help             this text\n"
"\n"
"Prints 'bypass on port PORT[,PORT...] for cgroup DIR' once attached.\n"
"SIGUSR1 prints the counters line; SIGINT/SIGTERM/SIGHUP detach, empty and\n"
"remove the cgroup.\n"
"Exit status: 0 clean stop, 1 runtime error, 2 bad arguments.\n";

/* optarg as a number in [min, max] into *v; else -1 after saying that it
 * is not @what. */
static int number(const char *name, const char *what, unsigned long min,
		  unsigned long max, unsigned long *v)
{
	if (!str_to_num(optarg, min, max, v))
		return 0;
	fprintf(stderr, PROG ": %s: '%s' is not %s\n", name, optarg, what);
	return -1;
}

/* -p PORT once more: the first replaces the default. */
static int add_port(unsigned long port)
{
	for (int i = 0; i < env.nports; i++) {
		if (env.ports[i] == (int)port) {
			fprintf(stderr, PROG ": --port %lu given twice\n", port);
			return -1;
		}
	}
	if (env.nports == REDIR_MAX_PORTS) {
		fprintf(stderr, PROG ": --port: at most %d ports\n", REDIR_MAX_PORTS);
		return -1;
	}
	env.ports[env.nports++] = port;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "btf", required_argument, NULL, 'B' },
		{ "cgroup-root", required_argument, NULL, 'C' },
		{ "flow-limit", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, "p:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (number("--port", "a port number (1-65535)", 1,
				   65535, &v))
				return -1;
			if (add_port(v))
				return -1;
			break;
		case 'v':
			env.verbose = true;
			break;
		case 'B':
			env.btf_path = optarg;
			break;
		case 'C':
			env.cgroup_root = optarg;
			break;
		case 'F':
			if (number("--flow-limit", "a byte count (0-1073741824)",
				   0, 1UL << 30, &v))
				return -1;
			env.flow_limit = v;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fputs("Try 'sockredir --help'.\n", stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\nTry 'sockredir "
			"--help'.\n", argv[optind]);
		return -1;
	}
	return 0;
}

/* Checks whose failure has a clear cause and a clear remedy, in order. */
static int check_environment(struct own_cgroup *cg)
{
	int err;

	err = loader_preflight(PROG, env.btf_path, cg, env.cgroup_root);
	if (err)
		return err;
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SOCKHASH, NULL) != 1 ||
	    libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SK_STORAGE, NULL) != 1 ||
	    libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SK_MSG, NULL) != 1 ||
	    libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SOCK_OPS, NULL) != 1) {
		fprintf(stderr, PROG ": this kernel lacks SOCKHASH or socket "
			"storage maps, sk_msg or sock_ops programs (needs "
			"CONFIG_BPF_SYSCALL, CONFIG_NET_SOCK_MSG, CONFIG_CGROUP_BPF; "
			"Linux 5.9 or later); the bypass cannot run here\n");
		return -EOPNOTSUPP;
	}
	return 0;
}

static void print_counters(struct sockredir_bpf *skel)
{
	struct redir_counters sum;

	if (loader_percpu_sum(skel->maps.redir_counters, &sum, sizeof(sum)))
		return;
	/* One line, key=value, for people: scripts read the map (bpftool). */
	fprintf(stderr, "counters socks_added=%llu add_failures=%llu "
		"msgs_redirected=%llu bytes_redirected=%llu "
		"msgs_passed=%llu bytes_passed=%llu peer_full=%llu "
		"sent_unseen=%llu\n",
		(unsigned long long)sum.socks_added,
		(unsigned long long)sum.add_failures,
		(unsigned long long)sum.msgs_redirected,
		(unsigned long long)sum.bytes_redirected,
		(unsigned long long)sum.msgs_passed,
		(unsigned long long)sum.bytes_passed,
		(unsigned long long)sum.peer_full,
		(unsigned long long)sum.sent_unseen);
}

/* Blocks until SIGINT, SIGTERM or SIGHUP; SIGUSR1 prints the counters. */
static void wait_for_stop(struct sockredir_bpf *skel, const sigset_t *mask)
{
	int sig;

	for (;;) {
		if (sigwait(mask, &sig))
			return;
		if (sig != SIGUSR1)
			return;
		print_counters(skel);
	}
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	struct sockredir_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	struct own_cgroup cg = { .fd = -1 };
	char name[64];
	sigset_t mask;
	int err;

	if (parse_args(argc, argv))
		return 2;
	loader_log(env.verbose);
	if (check_environment(&cg))
		return 1;

	/* Signals are waited for, not handled: block them from the start, so
	 * that one arriving while we set up stops us cleanly afterwards.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);	/* a closed terminal: stop cleanly too */
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	open_opts.btf_custom_path = env.btf_path;
	skel = sockredir_bpf__open_opts(&open_opts);
	if (!skel) {
		err = -errno;
		loader_open_failed(PROG, -err);
		goto cleanup;
	}
	memcpy(skel->rodata->redir_ports, env.ports, sizeof(env.ports));
	skel->rodata->flow_limit = env.flow_limit;
	err = sockredir_bpf__load(skel);
	if (err) {
		loader_load_failed(PROG, -err);
		goto cleanup;
	}

	err = loader_attach_verdict(PROG, skel->progs.redir_msg,
				    skel->maps.redir_socks, BPF_SK_MSG_VERDICT,
				    "sk_msg");
	if (err)
		goto cleanup;

	snprintf(name, sizeof(name), "echolab-bypass-%d", env.ports[0]);
	err = cgroup_create(&cg, name);
	if (err)
		goto cleanup;
	link = loader_attach_sockops(PROG, skel->progs.redir_sockops, &cg);
	if (!link) {
		err = -errno;
		goto cleanup;
	}

	if (!env.flow_limit)
		fprintf(stderr, PROG ": WARNING: --flow-limit 0: no flow control; "
			"a peer that never reads makes its sender queue without "
			"bound below net.ipv4.tcp_mem, machine-wide "
			"(docs/servers.md)\n");
	printf("bypass on port ");
	for (int i = 0; i < REDIR_MAX_PORTS && env.ports[i]; i++)
		printf("%s%d", i ? "," : "", env.ports[i]);
	printf(" for cgroup %s\n", cg.path);
	fflush(stdout);
	wait_for_stop(skel, &mask);
	print_counters(skel);

cleanup:
	/* Detach first, then empty the cgroup: no new socket joins the map,
	 * and the map goes with the object, taking its sockets' psocks along.
	 */
	bpf_link__destroy(link);
	sockredir_bpf__destroy(skel);
	cgroup_remove(&cg);
	return err ? 1 : 0;
}
