// SPDX-License-Identifier: GPL-2.0
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>

#include "cli.h"
#include "listen.h"
#include "server.h"

/* Above any program's own option codes (theirs start at 256). */
#define OPT_ADDR	0x10000
#define MAX_OPTIONS	40

/* "workers" last: a program without -w leaves it out. */
static const struct option shared[] = {
	{ "addr",    required_argument, NULL, OPT_ADDR },
	{ "port",    required_argument, NULL, 'p' },
	{ "backlog", required_argument, NULL, 'b' },
	{ "verbose", no_argument,       NULL, 'v' },
	{ "help",    no_argument,       NULL, 'h' },
	{ "workers", required_argument, NULL, 'w' },
};
#define NSHARED	(sizeof(shared) / sizeof(shared[0]))

void server_parse_args(int argc, char **argv, struct server_opts *o,
		       const struct option *own,
		       void (*option)(int c, const char *arg),
		       void (*usage)(FILE *f))
{
	static struct option all[MAX_OPTIONS];
	size_t n = o->max_workers ? NSHARED : NSHARED - 1, i;
	int c;

	memcpy(all, shared, n * sizeof(*all));
	for (i = 0; own[i].name; i++) {
		assert(n < MAX_OPTIONS - 1);
		all[n++] = own[i];
	}
	memset(&all[n], 0, sizeof(all[n]));

	o->addr = parse_addr("--addr", DEFAULT_ADDR);
	while ((c = cli_getopt(argc, argv,
			       o->max_workers ? ":p:w:b:vh" : ":p:b:vh",
			       all, usage)) != -1) {
		switch (c) {
		case OPT_ADDR:
			o->addr = parse_addr("--addr", optarg);
			break;
		case 'p':
			o->port = parse_num("--port", optarg, 1, 65535);
			break;
		case 'w':
			o->workers = parse_num("--workers", optarg, 1,
					       o->max_workers);
			break;
		case 'b':
			o->backlog = (int)parse_num("--backlog", optarg, 1,
						    o->max_backlog);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			option(c, optarg);
		}
	}
	cli_no_operands(argc, argv);
}

int raise_nofile_limit(rlim_t want, struct rlimit *rl)
{
	if (want) {
		rl->rlim_cur = rl->rlim_max = want;
		if (!setrlimit(RLIMIT_NOFILE, rl))
			return 0;
	}
	if (getrlimit(RLIMIT_NOFILE, rl))
		return -errno;
	if (rl->rlim_cur < rl->rlim_max) {
		logv("raising RLIMIT_NOFILE from %llu to %llu\n",
		     (unsigned long long)rl->rlim_cur,
		     (unsigned long long)rl->rlim_max);
		rl->rlim_cur = rl->rlim_max;
		setrlimit(RLIMIT_NOFILE, rl);
		getrlimit(RLIMIT_NOFILE, rl);
	}
	return 0;
}

int block_stop_signals(sigset_t *mask, const int *more)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	while (more && *more)
		sigaddset(mask, *more++);
	return -pthread_sigmask(SIG_BLOCK, mask, NULL);
}

int stop_signalfd(const int *more, int flags)
{
	sigset_t mask;
	int err, fd;

	signal(SIGPIPE, SIG_IGN);
	err = block_stop_signals(&mask, more);
	if (err)
		return err;
	fd = signalfd(-1, &mask, flags);
	return fd < 0 ? -errno : fd;
}

int server_prepare(const struct server_opts *o, sigset_t *stop,
		   int *stop_fd, int efd_flags)
{
	struct rlimit rl;
	int err;

	signal(SIGPIPE, SIG_IGN);
	raise_nofile_limit(0, &rl);	/* as many connections as it allows */
	block_stop_signals(stop, NULL);
	err = check_port_free(o->addr, o->port);
	if (err) {
		fprintf(stderr, "%s: cannot bind %s port %u: %s\n%s: %s\n", prog,
			inet_ntoa(o->addr), o->port, strerror(-err), prog,
			bind_hint(-err));
		return 1;
	}
	*stop_fd = eventfd(0, efd_flags);
	if (*stop_fd < 0) {
		perror("eventfd");
		return 1;
	}
	return 0;
}

void server_wait(const struct server_opts *o, const sigset_t *stop)
{
	int sig;

	warn_if_any_addr(o->addr);
	sigwait(stop, &sig);
	logv("%s: %s, stopping\n", prog, strsignal(sig));
}
