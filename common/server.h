/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One server skeleton: what every server and front of the suite does the
 * same way before it serves (user-echo, uring-echo, ebpf-echo, proxy):
 * the options they share, the descriptor limit, the signals that stop
 * them. Each program keeps its own options and its own loop.
 */
#ifndef ECHOLAB_SERVER_H
#define ECHOLAB_SERVER_H

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/signalfd.h>

/* The shared options; the program sets the defaults (but --addr's) and
 * the bounds. */
struct server_opts {
	struct in_addr addr;	/* --addr: DEFAULT_ADDR (listen.h) untold */
	unsigned int port;	/* -p, --port */
	unsigned int workers;	/* -w, --workers, where the program has it */
	unsigned int max_workers;	/* -w takes 1 to this; 0: no -w */
	int backlog;		/* -b, --backlog */
	unsigned long max_backlog;	/* -b takes 1 to this */
};

/*
 * Parses argv: --addr, -p, -w, -b into *o, -v into verbose, -h prints
 * usage(stdout) and exits 0; the program's own options, @own, go to
 * @option (c as own[] names it, arg its value). A bad value, an unknown
 * option or an operand is a usage error (cli.h: exit 2).
 */
void server_parse_args(int argc, char **argv, struct server_opts *o,
		       const struct option *own,
		       void (*option)(int c, const char *arg),
		       void (*usage)(FILE *f));

/*
 * As many descriptors as the process may have, each connection being one
 * (two, for a relay): @want for both limits where the process may raise
 * the hard one (0: do not try), else the soft limit up to the hard one.
 * *rl is the limit then. 0, or -errno when it cannot even be read.
 */
int raise_nofile_limit(rlim_t want, struct rlimit *rl);

/*
 * SIGINT, SIGTERM and the signals of @more (0-terminated, or NULL)
 * blocked from here on, in this thread and the threads it starts: they
 * wait to be read (sigwait, a signalfd), so one that comes during setup
 * stops the program cleanly once it serves. *mask: the set blocked.
 */
int block_stop_signals(sigset_t *mask, const int *more);

/* The same, readable on the signalfd returned (@flags: SFD_*), and
 * SIGPIPE ignored: a peer gone is an error of its socket, not our end.
 * The fd, or -errno. */
int stop_signalfd(const int *more, int flags);

/*
 * A threaded server's start (user-echo, uring-echo): SIGPIPE ignored, the
 * descriptor limit raised, the stop signals blocked in *stop before any
 * worker starts (they inherit the mask: only server_wait sees them), o's
 * port checked free, and *stop_fd, the eventfd (@efd_flags: EFD_*) that
 * tells the workers to stop once written. 0, or 1, the exit status,
 * after saying why it cannot serve.
 */
int server_prepare(const struct server_opts *o, sigset_t *stop,
		   int *stop_fd, int efd_flags);

/* Serving: the 0.0.0.0 warning where it applies, then a wait for one of
 * the stop signals. */
void server_wait(const struct server_opts *o, const sigset_t *stop);

#endif
