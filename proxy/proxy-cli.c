// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The proxy's command line and its messages. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "defaults.h"
#include "listen.h"
#include "proxy-common.h"

#define NOFILE_WANT	(1 << 18)	/* 131,072 clients, two descriptors each */

static const char *const path_names[] = {
	[PATH_COPY] = "copy",
	[PATH_SPLICE] = "splice",
	[PATH_URING] = "uring",
	[PATH_SOCKMAP] = "sockmap",
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s --path PATH --backend-port N [options]\n"
"A TCP relay: every client it accepts gets a connection of its own to the\n"
"backend, and bytes go both ways unchanged, FIN and RST included.\n"
"\n"
"      --path PATH   how the bytes move:\n"
"                      copy     read() and write() in an epoll loop\n"
"                      splice   socket -> pipe -> socket, no copy to userspace\n"
"                      uring    io_uring: multishot receive into provided\n"
"                               buffers, one send of each to the peer\n"
"                      sockmap  an sk_skb verdict redirects each socket's\n"
"                               bytes to its peer (root, BTF)\n"
"      --backend-port N      the backend's port (required)\n"
"      --backend-addr ADDR   the backend's IPv4 address (default 127.0.0.1)\n"
"  -p, --port N      port to listen on (default " ECHOLAB_PORT_STR ")\n"
"      --addr ADDR   IPv4 address to listen on (default 127.0.0.1: this\n"
"                    machine only); 0.0.0.0 is every interface\n"
"  -b, --backlog N   listen backlog (default 4096)\n"
"      --buffer-size BYTES  the most one read takes (%d to %d, default %d):\n"
"                    one buffer, shared; splice: each pipe's size;\n"
"                    uring: each of its 256 provided buffers' (default\n"
"                    65536 there)\n"
"      --flow-limit BYTES  sockmap: bytes a direction may have in the\n"
"                    kernel's relay, unacknowledged, before the verdict\n"
"                    hands them to the process instead (default %d; never\n"
"                    above half the peer's send buffer)\n"
"      --verdict-only  sockmap: hand each skb on whole, as the kernel gives\n"
"                    it; a network that reorders then gets some bytes\n"
"                    twice (to measure what exactness costs; by default\n"
"                    the verdict cuts off bytes it relayed before)\n"
"  -v, --verbose     log every error to stderr\n"
"  -h, --help        this text\n"
"\n"
"SIGINT or SIGTERM stops it; it prints its counters then. Exit status: 0\n"
"after a clean stop, 1 when it cannot serve (port busy, no privileges, a\n"
"kernel without the path's feature), 2 on bad usage.\n",
		prog, PROXY_BUF_MIN, PROXY_BUF_MAX, PROXY_BUF_DEFAULT,
		1 << 20);
}

static enum path parse_path(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(path_names) / sizeof(path_names[0]); i++) {
		if (!strcmp(s, path_names[i]))
			return (enum path)i;
	}
	usage_error("--path: '%s' is no path (copy, splice, uring, sockmap)", s);
}

enum { OPT_PATH = 256, OPT_BACKEND_PORT, OPT_BACKEND_ADDR, OPT_BUFFER_SIZE,
       OPT_FLOW_LIMIT, OPT_VERDICT_ONLY };

static bool have_path, have_backend;

/* The proxy's own options; server.c parses the ones servers share. */
static void own_option(int c, const char *arg)
{
	switch (c) {
	case OPT_PATH:
		opt.path = parse_path(arg);
		have_path = true;
		break;
	case OPT_BACKEND_PORT:
		opt.backend_port = parse_num("--backend-port", arg, 1, 65535);
		have_backend = true;
		break;
	case OPT_BACKEND_ADDR:
		opt.backend_addr = parse_addr("--backend-addr", arg);
		break;
	case OPT_BUFFER_SIZE:
		opt.buffer_size = parse_num("--buffer-size", arg,
					    PROXY_BUF_MIN, PROXY_BUF_MAX);
		opt.buffer_size_set = true;
		break;
	case OPT_FLOW_LIMIT:
		opt.flow_limit = parse_num("--flow-limit", arg, 0, 1UL << 30);
		break;
	case OPT_VERDICT_ONLY:
		opt.verdict_only = true;
		break;
	}
}

void parse_args(int argc, char **argv)
{
	static const struct option own[] = {
		{ "path",         required_argument, NULL, OPT_PATH },
		{ "backend-port", required_argument, NULL, OPT_BACKEND_PORT },
		{ "backend-addr", required_argument, NULL, OPT_BACKEND_ADDR },
		{ "buffer-size",  required_argument, NULL, OPT_BUFFER_SIZE },
		{ "flow-limit",   required_argument, NULL, OPT_FLOW_LIMIT },
		{ "verdict-only", no_argument,       NULL, OPT_VERDICT_ONLY },
		{ NULL, 0, NULL, 0 },
	};
	/* The backend's address defaults to ours, as --addr's does. */
	opt.backend_addr = parse_addr("--backend-addr", DEFAULT_ADDR);
	server_parse_args(argc, argv, &opt.srv, own, own_option, usage);
	if (!have_path)
		usage_error("name a path: --path copy|splice|uring|sockmap");
	if (!have_backend)
		usage_error("name the backend: --backend-port N (and --backend-addr ADDR)");
	if (opt.backend_port == opt.srv.port &&
	    opt.backend_addr.s_addr == opt.srv.addr.s_addr)
		usage_error("the backend cannot be the proxy itself (port %u on %s)",
			    opt.srv.port, inet_ntoa(opt.srv.addr));
	if (opt.verdict_only && opt.path != PATH_SOCKMAP)
		usage_error("--verdict-only is for --path sockmap (the others read through TCP, which skips old bytes)");
	if (opt.flow_limit == 0 && opt.path == PATH_SOCKMAP)
		fprintf(stderr, "%s: warning: --flow-limit 0: nothing bounds what the kernel's relay queues for a slow reader\n",
			prog);
}

void announce(void)
{
	char backend[INET_ADDRSTRLEN];

	warn_if_any_addr(opt.srv.addr);
	inet_ntop(AF_INET, &opt.backend_addr, backend, sizeof(backend));
	printf("proxy %s%s on %s port %u to %s port %u\n", path_names[opt.path],
	       opt.verdict_only ? " (verdict-only)" : "", inet_ntoa(opt.srv.addr), opt.srv.port, backend, opt.backend_port);
	fflush(stdout);
}

int listen_here(int extra_type)
{
	int fd = check_port_free(opt.srv.addr, opt.srv.port);

	if (!fd)
		fd = open_listener(opt.srv.addr, opt.srv.port, opt.srv.backlog, extra_type);
	if (fd < 0)
		fprintf(stderr, "%s: cannot listen on %s port %u: %s (%s)\n",
			prog, inet_ntoa(opt.srv.addr), opt.srv.port, strerror(-fd),
			bind_hint(-fd));
	return fd;
}

void raise_nofile(void)
{
	struct rlimit rl;

	raise_nofile_limit(NOFILE_WANT, &rl);
}

void report(void)
{
	fprintf(stderr,
		"%s: %s: accepted=%llu closed=%llu resets=%llu backend_refused=%llu insert_fallbacks=%llu drain_timeouts=%llu wakeups=%llu accept_pauses=%llu bytes_to_backend=%llu bytes_to_client=%llu\n",
		prog, path_names[opt.path], count.accepted, count.closed,
		count.resets, count.backend_refused, count.insert_fallbacks,
		count.drain_timeouts, count.wakeups, count.accept_pauses, count.bytes[CLIENT],
		count.bytes[BACKEND]);
}
