/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the proxy's paths share: its options, its counters, its messages
 * (proxy-cli.c). The epoll paths are proxy.c's, the io_uring path
 * proxy-uring.c's.
 */
#ifndef __PROXY_COMMON_H
#define __PROXY_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>

#include "server.h"

enum path { PATH_COPY, PATH_SPLICE, PATH_URING, PATH_SOCKMAP };
enum { CLIENT, BACKEND };	/* a pair's two sockets, and its directions */

#define PROXY_BUF_DEFAULT	(256 * 1024)	/* --buffer-size */
#define PROXY_BUF_MIN		4096
#define PROXY_BUF_MAX		(64 * 1024 * 1024)

struct options {
	enum path path;
	struct server_opts srv;		/* where clients connect: --addr, -p, -b */
	struct in_addr backend_addr;	/* where the backend listens */
	unsigned int backend_port;
	size_t buffer_size;		/* one read at most; a pipe's size */
	bool buffer_size_set;		/* given (uring's default differs) */
	unsigned long long flow_limit;	/* sockmap: the relay's backlog */
	bool verdict_only;		/* sockmap: exact.bpf.h off */
};

/* What the proxy did, printed when it stops. */
struct counters {
	unsigned long long accepted, closed, resets;
	unsigned long long backend_refused;	/* connect to it failed */
	unsigned long long insert_fallbacks;	/* sockmap: relayed by the process */
	unsigned long long drain_timeouts;	/* sockmap: a FIN never could go */
	unsigned long long wakeups;		/* events on connections */
	unsigned long long accept_pauses;	/* out of descriptors (EMFILE) */
	unsigned long long bytes[2];		/* moved by the process, per direction */
};

extern struct options opt;
extern struct counters count;

void parse_args(int argc, char **argv);
/* "proxy PATH on ADDR port N to ADDR port M": run.sh waits for it. */
void announce(void);
/* The counters, on stderr. */
void report(void);
/* As many descriptors as root may have (two a client), else the hard
 * limit. */
void raise_nofile(void);
/* The listener on --addr and --port (extra_type: SOCK_NONBLOCK or 0): its
 * fd, or -errno after saying why on stderr. */
int listen_here(int extra_type);
/* The io_uring path: its own loop, start to stop; the exit status. */
int uring_main(void);

#endif /* __PROXY_COMMON_H */
