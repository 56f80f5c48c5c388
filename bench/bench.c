// SPDX-License-Identifier: GPL-2.0
/*
 * bench - TCP echo load client.
 *
 * N threads start together. Each opens a connection per round (or keeps one
 * for the whole run with --duration, or one per --messages), sends a
 * message, reads the whole echo
 * back, checks it byte for byte and records the response time twice: when
 * recv() returned it (rtt_us, the client's view) and when the echo's last
 * bytes reached the client's kernel (arrival_us, the kernel's software
 * receive timestamp: the server's view). Every sample is kept: rows go to a
 * raw file (rawfile.h) as they finish, and the summary line is computed
 * from all of them at the end, over the measured span: the first send to
 * the last completion (after --warmup, whose samples are not kept). Over
 * the same window bench reads what the server's CPUs and its own spent
 * (cpu.h): CPU per echo.
 *
 * The load threads run at SCHED_IDLE unless --sched normal: the server gets
 * the machine and the client what is left, as if it ran on another one.
 * Closed loop by default; --rate N sends N messages a second in total and
 * counts each response time from the message's intended send time.
 *
 * Per message the hot path is: clock_gettime (vDSO) twice, sendmsg,
 * recvmsg (looped on partial reads; its control message carries the
 * stamp), memcmp, clock_gettime, and a row formatted into a thread-local
 * buffer. The buffer is written out once it holds ~16 KiB and the times
 * are kept in 64 Ki-sample chunks, so writes and allocations happen once
 * per hundreds or tens of thousands of messages.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <linux/net_tstamp.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cpu.h"
#include "cpulist.h"
#include "defaults.h"
#include "env.h"
#include "event.h"
#include "load.h"
#include "mismatch.h"
#include "rawfile.h"
#include "record.h"
#include "settings.h"
#include "stats.h"
#include "summary.h"
#include "worker.h"

#define FD_RESERVE	32		/* descriptors besides the sockets */
#define TW_WARN		1000		/* TIME_WAIT sockets that skew a run */
/* --window's messages out: per connection, and in all (a slot each, 24
 * bytes: 100 MB at most). */
#define WINDOW_DEPTH_MAX	65536u
#define WINDOW_SLOTS_MAX	(4u << 20)

const char *prog = "bench";

static const char usage_options[] =
"TCP echo load client: every thread sends a message, waits for the whole\n"
"echo, checks it byte for byte and records two response times: until the\n"
"echo reached this machine's kernel (arrival_us, the server's time) and\n"
"until recv() returned it (rtt_us, what the client saw).\n"
"\n"
"  -t, --threads N     concurrent client threads (default 1000), each with\n"
"                      one connection at a time; with --connections: the\n"
"                      threads that share them (default: one per CPU bench\n"
"                      may use)\n"
"  -c, --connections N the event engine: N connections, each kept for the\n"
"                      whole run, driven from one epoll set per thread, so\n"
"                      the client's CPU per message does not grow with N.\n"
"                      Needs --duration; closed loop (one message out per\n"
"                      connection) unless --rate; the raw file's thread\n"
"                      column holds the connection\n"
"  -r, --rounds N      rounds per thread (default 10)\n"
"  -m, --messages N    messages per connection (default 1: every round is\n"
"                      connect, send, receive, close; more keeps the\n"
"                      connection open for N messages). With --duration:\n"
"                      a new connection after every N messages (default\n"
"                      there: one connection for the whole run)\n"
"  -d, --duration SEC  throughput mode: each thread keeps one connection and\n"
"                      sends as fast as echoes return for SEC seconds\n"
"                      measured (excludes --rounds)\n"
"      --warmup SEC    with --duration: SEC seconds more before the measured\n"
"                      ones; the messages sent in them are neither written\n"
"                      nor counted, only their number (default 0)\n"
"  -R, --rate N        open loop, with --duration: N messages a second in\n"
"                      total, spread evenly over the threads (connections);\n"
"                      each response time counts from the message's intended\n"
"                      send time, so a stalled server cannot hide its stall\n"
"      --arrivals KIND with --connections and --rate: poisson (default;\n"
"                      exponential gaps, each connection a Poisson process\n"
"                      of rate N/connections) or uniform (even gaps)\n"
"      --seed N        the Poisson arrivals' seed (default: random; the raw\n"
"                      file records it, so a run can be drawn again)\n"
"      --window BYTES  a stream, echoed (netperf's TCP_STREAM, every byte\n"
"                      checked): with --connections and no --rate, each\n"
"                      connection keeps WINDOW / SIZE messages out (at least\n"
"                      one), sending the next as each echo completes; the\n"
"                      summary is followed by a 'stream' line: MiB/s echoed\n"
"                      and the server's CPU per MiB\n"
"  -s, --size BYTES    message size (default 64)\n"
"  -H, --host ADDR     server address (default 127.0.0.1)\n"
"  -p, --port N        server port (default " ECHOLAB_PORT_STR ")\n"
"  -o, --output FILE   raw samples, TSV (default: results/runs/DATE/LABEL-TIME.tsv\n"
"                      in this repository, where 'make plots' finds them)\n"
"  -l, --label NAME    server name written into the file (default: the\n"
"                      program listening on the port here, without its\n"
"                      '-echo-server' ('user', 'ebpf'; 'kernel' for kecho),\n"
"                      else 'unknown')\n"
"  -T, --timeout MS    connect/send/receive timeout (default 5000)\n"
"      --sched POLICY  the load threads' scheduling: idle (default: SCHED_IDLE,\n"
"                      the server gets the CPUs, the client what is left, as\n"
"                      if it ran on another machine) or normal (compete with\n"
"                      the server as an ordinary process does)\n"
"      --cpus LIST     run the load threads on these CPUs only (e.g. 1 or 2-3,\n"
"                      as taskset -c takes them), or all. Default: the CPUs\n"
"                      run.sh left when it placed the server (run.sh SERVER\n"
"                      does by default), so the client cannot take the\n"
"                      server's CPUs, as on another machine; else all\n"
"      --server-cpus LIST  the server's CPUs, whose time per echo bench\n"
"                      reports (default: where run.sh placed the server,\n"
"                      " ECHOLAB_STATE_DIR "/cpus; else every CPU, the client's too)\n"
"  -q, --quiet         print only the summary line\n"
"      --meta K=V      add a '# K=V' metadata line to the file (repeatable)\n"
"  -h, --help          this text\n"
"\n";

static const char usage_output[] =
"Output: the raw file (format in common/rawfile.h), one row per sample,\n"
"'thread round connect_us rtt_us arrival_us lag_us sent_us status', under\n"
"'# key=value' metadata lines; then on stdout one line:\n"
"summary label= threads= rounds= samples= ok= failed= p50_us= p90_us=\n"
"        p99_us= p999_us= max_us= mean_us= sd_us= rps= arrival_n=\n"
"        arrival_p50_us= arrival_p90_us= arrival_p99_us= arrival_p999_us=\n"
"        arrival_max_us= client_rq_share= server_cpu_us_per_echo=\n"
"        server_usr_us_per_echo= server_sys_us_per_echo=\n"
"        server_softirq_us_per_echo= server_irq_us_per_echo=\n"
"        client_cpu_us_per_echo= client_usr_us_per_echo=\n"
"        client_sys_us_per_echo= client_softirq_us_per_echo=\n"
"        client_irq_us_per_echo= cpu_scope=\n"
"(p*_us: rtt_us; arrival_*: arrival_us over the arrival_n samples that have\n"
"it; rps: ok samples per second from the first send to the last echo;\n"
"client_rq_share: the share of the load threads' time spent waiting for a\n"
"CPU; *_us_per_echo: microseconds of the server's (client's) CPUs per ok\n"
"echo, in all and by kind, from /proc/stat; cpu_scope: split, shared or\n"
"all: whether those CPUs are apart). When the client dominated the run,\n"
"stderr says so. analysis/summarize prints this line from raw files alone.\n"
"Exit status: 0 if every sample was ok, 1 if any failed, 2 on bad usage.\n";

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s [options]\n", prog);
	fputs(usage_options, f);
	fputs(usage_output, f);
}

static bool valid_label(const char *s)
{
	if (!*s || strlen(s) >= sizeof(cfg.label))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

/* ---- setup ------------------------------------------------------------ */

/* The CPUs online here, from sysfs; every CPU sysconf counts where sysfs
 * cannot be read. */
static void online_cpus(cpu_set_t *set)
{
	char buf[256];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	bool ok = f && fgets(buf, sizeof(buf), f);

	if (f)
		fclose(f);
	if (ok) {
		buf[strcspn(buf, "\n")] = '\0';
		ok = cpu_set_parse(buf, set);
	}
	if (!ok) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		CPU_ZERO(set);
		for (long i = 0; i < n && i < CPU_SETSIZE; i++)
			CPU_SET(i, set);
	}
}

/* cpu_set_parse for flag: a usage error when the list is malformed or names
 * no CPU it could mean. The load threads' CPUs (mine: --cpus) must be ones this
 * process may run on, before --cpus narrows that (taskset may have narrowed
 * it already); the server's (--server-cpus) need only be online, as the
 * server runs elsewhere. */
static void parse_cpus(const char *flag, const char *list, cpu_set_t *set,
		       bool mine)
{
	cpu_set_t can, both;
	char can_list[256];

	if (!cpu_set_parse(list, set))
		usage_error("%s: '%s' is not a CPU list such as 1, 0,2 or 2-3",
			    flag, list);
	if (!mine)
		online_cpus(&can);
	else if (sched_getaffinity(0, sizeof(can), &can))
		return;	/* nothing to check against; the run will say */
	CPU_AND(&both, &can, set);
	if (CPU_COUNT(&both))
		return;
	cpu_set_format(&can, can_list, sizeof(can_list));
	if (mine)
		usage_error("%s %s: bench may not run on any of these CPUs (it may run on %s)",
			    flag, list, can_list);
	usage_error("%s %s: none of these CPUs is online here (online: %s)",
		    flag, list, can_list);
}

/* The server's CPUs and the client's, whose time per echo bench reports;
 * where the server's come from: flag, run.sh or all. */
static cpu_set_t server_set, client_set;
static const char *server_cpus_from = "all";
static char server_list[256], client_list[256], cpu_scope[8];

/* What the command line said, beyond the settings themselves. */
static struct {
	bool threads, rounds, messages, arrivals, server_cpus;
	bool cpus_all;			/* --cpus all */
	cpu_set_t cpus;			/* --cpus LIST */
} given;

/* Where run.sh placed the server, when it runs one on this port: its
 * state's cpus into server_set and buf. */
static void read_run_sh_cpus(char *buf, size_t len)
{
	const char *dir = getenv("ECHOLAB_STATE_DIR");
	char path[PATH_MAX], port[16] = "";
	FILE *f;

	if (!dir || !*dir)
		dir = ECHOLAB_STATE_DIR;
	snprintf(path, sizeof(path), "%s/port", dir);
	if ((f = fopen(path, "re"))) {
		if (!fgets(port, sizeof(port), f))
			port[0] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/cpus", dir);
	if ((!port[0] || (unsigned int)atoi(port) == cfg.port) &&
	    (f = fopen(path, "re"))) {
		if (fgets(buf, (int)len, f)) {
			buf[strcspn(buf, "\n")] = '\0';
			if (cpu_set_parse(buf, &server_set))
				server_cpus_from = "run.sh";
		}
		fclose(f);
	}
}

/* A client on another machine: run.sh gave the server its CPUs (server_list
 * as run.sh wrote it), so the load threads take the others. */
static void leave_server_cpus(const char *server_list_given,
			      const cpu_set_t *all)
{
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &server_set))
			CPU_CLR(i, &client_set);
	if (CPU_COUNT(&client_set) &&
	    !sched_setaffinity(0, sizeof(client_set), &client_set)) {
		cpu_set_format(&client_set, client_list, sizeof(client_list));
		cfg.cpus = client_list;
		if (!cfg.quiet)
			fprintf(stderr, "%s: run.sh placed the server on CPUs %s: the load threads run on CPUs %s, as a client on another machine would (--cpus all: share them)\n",
				prog, server_list_given, client_list);
	} else {
		client_set = *all;
	}
}

/*
 * Without --server-cpus: where run.sh placed the server (its state, the
 * cpus of a server on this port), else every CPU. The client's: --cpus,
 * else the CPUs run.sh left (unless --cpus all), else every CPU.
 * cpu_scope says how they overlap.
 */
static void place_cpus(void)
{
	char buf[256] = "";
	cpu_set_t all, both;

	/* Every online CPU (bench's own affinity is --cpus by now). */
	CPU_ZERO(&all);
	for (int i = 0; i < sysconf(_SC_NPROCESSORS_ONLN) && i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	if (!strcmp(server_cpus_from, "all"))
		read_run_sh_cpus(buf, sizeof(buf));
	if (!strcmp(server_cpus_from, "all"))
		server_set = all;
	if (!cfg.cpus)
		client_set = all;
	if (!cfg.cpus && !given.cpus_all && !strcmp(server_cpus_from, "run.sh"))
		leave_server_cpus(buf, &all);
	cpu_set_format(&server_set, server_list, sizeof(server_list));
	cpu_set_format(&client_set, client_list, sizeof(client_list));
	CPU_AND(&both, &server_set, &client_set);
	snprintf(cpu_scope, sizeof(cpu_scope), "%s",
		 CPU_EQUAL(&server_set, &all) ? "all" :
		 CPU_COUNT(&both) ? "shared" : "split");
	if (!strcmp(cpu_scope, "all") && !cfg.quiet)
		fprintf(stderr, "%s: the server's CPU per echo covers every CPU, the client's too (cpu_scope=all):\n"
			"  run.sh placed no server here and no --server-cpus says where it runs. Place it: run.sh SERVER --cpus 0, bench --cpus 1\n",
			prog);
}

/* The load's shape: threads, connections, rounds, messages, duration,
 * rate, arrivals, seed, warm-up, size. false: c is none of them. */
static bool parse_load_option(int c)
{
	switch (c) {
	case 't':
		cfg.threads = parse_num("--threads", optarg, 1, 100000);
		given.threads = true;
		break;
	case 'c':
		cfg.connections = parse_num("--connections", optarg, 1, 100000);
		break;
	case 'r':
		cfg.rounds = parse_num("--rounds", optarg, 1, 100000000);
		given.rounds = true;
		break;
	case 'm':
		cfg.messages = parse_num("--messages", optarg, 1, 100000000);
		given.messages = true;
		break;
	case 'd':
		cfg.duration = parse_num("--duration", optarg, 1, 86400);
		break;
	case 'R':
		cfg.rate = parse_num("--rate", optarg, 1, 10000000);
		break;
	case 'a':
		if (!strcmp(optarg, "poisson"))
			cfg.poisson = true;
		else if (!strcmp(optarg, "uniform"))
			cfg.poisson = false;
		else
			usage_error("--arrivals: '%s' is not poisson or uniform",
				    optarg);
		given.arrivals = true;
		break;
	case 'e':
		cfg.seed = parse_num("--seed", optarg, 0, ULONG_MAX);
		cfg.seed_given = true;
		break;
	case 'W':
		cfg.warmup = parse_num("--warmup", optarg, 0, 86400);
		break;
	case 's':
		cfg.size = parse_num("--size", optarg, 1, 1UL << 30);
		break;
	case 'w':
		cfg.window = parse_num("--window", optarg, 1, 1UL << 30);
		break;
	default:
		return false;
	}
	return true;
}

/* Where the load threads run and how: --sched, --cpus, --server-cpus.
 * false: c is none of them. */
static bool parse_place_option(int c)
{
	switch (c) {
	case 'P':
		if (!strcmp(optarg, "idle"))
			cfg.sched_idle = true;
		else if (!strcmp(optarg, "normal"))
			cfg.sched_idle = false;
		else
			usage_error("--sched: '%s' is not idle or normal",
				    optarg);
		break;
	case 'C':
		given.cpus_all = !strcmp(optarg, "all");
		if (given.cpus_all)
			break;	/* every CPU, run.sh's placement or not */
		parse_cpus("--cpus", optarg, &given.cpus, true);
		cfg.cpus = optarg;
		client_set = given.cpus;
		break;
	case 'U':
		parse_cpus("--server-cpus", optarg, &server_set, false);
		given.server_cpus = true;
		break;
	default:
		return false;
	}
	return true;
}

/* The server and what the run is written as: --host, --port, --output,
 * --label, --timeout, --quiet, --meta. false: c is none of them. */
static bool parse_run_option(int c)
{
	switch (c) {
	case 'H':
		cfg.host = optarg;
		break;
	case 'p':
		cfg.port = parse_num("--port", optarg, 1, 65535);
		break;
	case 'o':
		if (!*optarg)
			usage_error("--output: empty file name");
		cfg.output = optarg;
		break;
	case 'l':
		if (!valid_label(optarg))
			usage_error("--label: '%s' must be 1-63 characters of A-Z a-z 0-9 . _ -",
				    optarg);
		strcpy(cfg.label, optarg);
		break;
	case 'T':
		cfg.timeout_ms = parse_num("--timeout", optarg, 1, 3600000);
		break;
	case 'q':
		cfg.quiet = true;
		break;
	case 'M':
		if (!strchr(optarg, '=') || *optarg == '=' ||
		    strpbrk(optarg, "\n"))
			usage_error("--meta: '%s' is not KEY=VALUE", optarg);
		if (cfg.nmeta == sizeof(cfg.meta) / sizeof(cfg.meta[0]))
			usage_error("--meta: at most %zu of them",
				    sizeof(cfg.meta) / sizeof(cfg.meta[0]));
		cfg.meta[cfg.nmeta++] = optarg;
		break;
	default:
		return false;
	}
	return true;
}

/* --window: the event engine's closed loop, in whole messages, and a
 * ring of them per connection that stays a modest size. */
static void check_window(void)
{
	size_t depth;

	cfg.depth = 1;
	if (!cfg.window)
		return;
	if (!cfg.connections)
		usage_error("--window keeps bytes out on the event engine's connections: give --connections, e.g. -c 4 --window 1048576 -s 65536 -d 10");
	if (cfg.rate)
		usage_error("--window is a closed loop (the next message leaves as an echo completes): it takes no --rate");
	depth = cfg.window / cfg.size ? cfg.window / cfg.size : 1;
	if (depth > WINDOW_DEPTH_MAX ||
	    depth * cfg.connections > WINDOW_SLOTS_MAX)
		usage_error("--window %zu of %zu-byte messages is %zu messages out on each of %u connections; at most %u each and %u in all: give larger messages (--size) or fewer connections",
			    cfg.window, cfg.size, depth, cfg.connections,
			    WINDOW_DEPTH_MAX, WINDOW_SLOTS_MAX);
	cfg.depth = (unsigned int)depth;
}

/* The event engine's options need it, and it needs a timed run. */
static void check_event_args(void)
{
	if (cfg.connections) {
		if (!cfg.duration)
			usage_error("--connections needs --duration: the event engine runs timed, e.g. -c 1000 -R 50000 -d 10");
		if (given.messages)
			usage_error("--connections keeps every connection for the whole run: it takes no --messages");
		if (given.threads && cfg.threads > cfg.connections)
			usage_error("--threads %u is more than --connections %u: each thread needs a connection",
				    cfg.threads, cfg.connections);
	} else if (given.arrivals || cfg.seed_given) {
		usage_error("--arrivals and --seed shape the event engine's open loop: give --connections and --rate");
	}
	if ((given.arrivals || cfg.seed_given) && !cfg.rate)
		usage_error("--arrivals and --seed need --rate: a closed loop has no arrivals to draw");
	check_window();
}

/* Options that exclude or need each other; the run's shape from them. */
static void check_args(void)
{
	unsigned int senders = cfg.connections ? cfg.connections : cfg.threads;

	if (cfg.duration && given.rounds)
		usage_error("--duration cannot be combined with --rounds: a timed run has no rounds (--messages N: a connection per N messages)");
	if (cfg.warmup && !cfg.duration)
		usage_error("--warmup needs --duration: the warm-up comes before a timed run, e.g. --warmup 1 -d 5");
	if (cfg.rate && !cfg.duration)
		usage_error("--rate needs --duration: an open-loop run is timed, e.g. -R 5000 -d 10");
	check_event_args();
	if (cfg.rate && cfg.rate > senders * 1000000ULL)
		usage_error("--rate %u over %u %s is more than one message per microsecond each",
			    cfg.rate, senders,
			    cfg.connections ? "connections" : "threads");
	if (given.server_cpus)
		server_cpus_from = "flag";
	if (cfg.duration) {
		cfg.rounds = 0;
		if (!given.messages)
			cfg.messages = 0;	/* one connection for the run */
	} else if ((unsigned long long)cfg.threads * cfg.rounds * cfg.messages >
		   1000000000ULL) {
		usage_error("threads x rounds x messages is over 10^9 samples; use --duration for long runs");
	}
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads",  required_argument, NULL, 't' },
		{ "rounds",   required_argument, NULL, 'r' },
		{ "messages", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "rate",     required_argument, NULL, 'R' },
		{ "sched",    required_argument, NULL, 'P' },
		{ "cpus",     required_argument, NULL, 'C' },
		{ "server-cpus", required_argument, NULL, 'U' },
		{ "connections", required_argument, NULL, 'c' },
		{ "arrivals", required_argument, NULL, 'a' },
		{ "seed",     required_argument, NULL, 'e' },
		{ "warmup",   required_argument, NULL, 'W' },
		{ "size",     required_argument, NULL, 's' },
		{ "window",   required_argument, NULL, 'w' },
		{ "host",     required_argument, NULL, 'H' },
		{ "port",     required_argument, NULL, 'p' },
		{ "output",   required_argument, NULL, 'o' },
		{ "label",    required_argument, NULL, 'l' },
		{ "timeout",  required_argument, NULL, 'T' },
		{ "quiet",    no_argument,       NULL, 'q' },
		{ "meta",     required_argument, NULL, 'M' },
		{ "help",     no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = cli_getopt(argc, argv, ":t:c:r:m:d:R:s:H:p:o:l:T:qh",
			       longopts, usage)) != -1) {
		if (!parse_load_option(c) && !parse_place_option(c) &&
		    !parse_run_option(c))
			usage_error("unknown option '%s'", argv[optind - 1]);
	}
	cli_no_operands(argc, argv);
	/* Threads inherit the affinity: set it once, before any starts. */
	if (cfg.cpus && sched_setaffinity(0, sizeof(given.cpus), &given.cpus)) {
		fprintf(stderr, "%s: cannot run on CPUs %s: %s\n", prog,
			cfg.cpus, strerror(errno));
		exit(2);
	}
	check_args();
}

static void resolve_server(void)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV,
	};
	struct addrinfo *res, *ai;
	char port[8];
	int err;

	snprintf(port, sizeof(port), "%u", cfg.port);
	err = getaddrinfo(cfg.host, port, &hints, &res);
	if (err)
		usage_error("--host: cannot resolve '%s': %s", cfg.host,
			    gai_strerror(err));
	/* The servers listen on IPv4: prefer it when a name has both. */
	for (ai = res; ai; ai = ai->ai_next)
		if (ai->ai_family == AF_INET)
			break;
	if (!ai)
		ai = res;
	memcpy(&cfg.server_addr, ai->ai_addr, ai->ai_addrlen);
	cfg.server_addrlen = ai->ai_addrlen;
	freeaddrinfo(res);
}

/*
 * Without --label: the server listening on the port, when it is on this
 * machine (env_listener_name: user-echo-server is "user"); run.sh and
 * compare pass --label.
 */
static void default_label(void)
{
	const struct sockaddr_in *in4 = (const void *)&cfg.server_addr;
	const struct sockaddr_in6 *in6 = (const void *)&cfg.server_addr;
	bool local = (cfg.server_addr.ss_family == AF_INET &&
		      (ntohl(in4->sin_addr.s_addr) >> 24) == 127) ||
		     (cfg.server_addr.ss_family == AF_INET6 &&
		      IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));

	if (cfg.label[0])
		return;
	if (!local || !env_listener_name(cfg.port, cfg.label, sizeof(cfg.label)) ||
	    !valid_label(cfg.label))
		strcpy(cfg.label, "unknown");
}

/*
 * The event engine: by default a thread for each CPU bench may use (at
 * most one per connection); its arrivals drawn from a seed that the
 * metadata records, random unless --seed gives one.
 */
static void choose_event_threads(void)
{
	if (!given.threads) {
		cfg.threads = (unsigned int)CPU_COUNT(&client_set);
		if (!cfg.threads)
			cfg.threads = 1;
		if (cfg.threads > cfg.connections)
			cfg.threads = cfg.connections;
	}
	if (!cfg.seed_given &&
	    getrandom(&cfg.seed, sizeof(cfg.seed), 0) != sizeof(cfg.seed))
		cfg.seed = now_ns();
}

static void raise_nofile(struct rlimit *rl)
{
	unsigned int sockets = cfg.connections ? cfg.connections : cfg.threads;
	uint64_t need = (uint64_t)sockets + FD_RESERVE;

	if (env_raise_nofile(need, rl))
		return;
	fprintf(stderr,
		"%s: %s %u needs %llu open files, but RLIMIT_NOFILE allows %llu (hard limit %llu).\n"
		"Use fewer, or raise the hard limit as root (ulimit -Hn, /etc/security/limits.conf).\n",
		prog, cfg.connections ? "--connections" : "--threads", sockets,
		(unsigned long long)need,
		(unsigned long long)rl->rlim_cur,
		(unsigned long long)rl->rlim_max);
	exit(2);
}

/* Under sudo, what bench creates in the repository belongs to the user. */
static void give_to_sudo_user(const char *path)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");

	/* A failure is not worth a word: root keeps the file then. */
	if (uid && gid && geteuid() == 0 &&
	    chown(path, (uid_t)atoi(uid), (gid_t)atoi(gid)) < 0)
		return;
}

/*
 * Without --output: results/runs/YYYYMMDD/LABEL-HHMMSS.tsv in the
 * repository this bench was built in (ECHOLAB_RUNS_DIR replaces
 * results/runs), where 'make plots' finds the day's runs; the current
 * directory when bench lives outside a repository.
 */
static void default_output(char *path, size_t len)
{
	char exe[PATH_MAX], base[PATH_MAX], day[16], stamp[16];
	const char *runs = getenv("ECHOLAB_RUNS_DIR");
	time_t t = time(NULL);
	struct stat sb;
	ssize_t n;

	strftime(day, sizeof(day), "%Y%m%d", localtime(&t));
	strftime(stamp, sizeof(stamp), "%H%M%S", localtime(&t));
	if (runs && *runs) {
		snprintf(base, sizeof(base), "%s", runs);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		/* exe is ROOT/bench/bench */
		snprintf(base, sizeof(base), "%s/results",
			 dirname(dirname(exe)));
		if (n <= 0 || stat(base, &sb) || !S_ISDIR(sb.st_mode)) {
			snprintf(path, len, "bench-%s-%s-%s.tsv", cfg.label,
				 day, stamp);
			return;
		}
		strncat(base, "/runs", sizeof(base) - strlen(base) - 1);
	}
	if (mkdir(base, 0755) == 0)
		give_to_sudo_user(base);
	snprintf(path, len, "%s/%s", base, day);
	if (mkdir(path, 0755) == 0)
		give_to_sudo_user(path);
	snprintf(path + strlen(path), len - strlen(path), "/%s-%s.tsv",
		 cfg.label, stamp);
}

static int open_output(char *path, size_t len)
{
	int fd;

	if (cfg.output)
		snprintf(path, len, "%s", cfg.output);
	else
		default_output(path, len);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", prog, path,
			strerror(errno));
		exit(2);
	}
	if (!cfg.output)
		give_to_sudo_user(path);
	return fd;
}

static void write_metadata(int fd, const struct rlimit *rl)
{
	dprintf(fd, "# label=%s\n", cfg.label);
	env_write_metadata(fd);
	dprintf(fd, "# threads=%u\n# rounds=%u\n# messages=%u\n# duration=%u\n"
		"# size=%zu\n# host=%s\n# port=%u\n# timeout_ms=%u\n",
		cfg.threads, cfg.rounds, cfg.messages, cfg.duration, cfg.size,
		cfg.host, cfg.port, cfg.timeout_ms);
	dprintf(fd, "# loop=%s\n# rate=%u\n", cfg.rate ? "open" : "closed",
		cfg.rate);
	/* The event engine: the thread column holds the connection. */
	dprintf(fd, "# engine=%s\n# connections=%u\n",
		cfg.connections ? "event" : "thread",
		cfg.connections ? cfg.connections : cfg.threads);
	if (cfg.window)
		dprintf(fd, "# window=%zu\n# depth=%u\n", cfg.window, cfg.depth);
	if (cfg.connections && cfg.rate)
		dprintf(fd, "# arrivals=%s\n# seed=%llu\n",
			cfg.poisson ? "poisson" : "uniform",
			(unsigned long long)cfg.seed);
	dprintf(fd, "# sched=%s\n", cfg.sched_idle ? "idle" : "normal");
	dprintf(fd, "# cpus=%s\n", cfg.cpus ? cfg.cpus : "all");
	dprintf(fd, "# warmup_s=%u\n", cfg.warmup);
	dprintf(fd, "# server_cpus=%s\n# server_cpus_from=%s\n"
		"# client_cpus=%s\n# cpu_scope=%s\n",
		server_list, server_cpus_from, client_list, cpu_scope);
	dprintf(fd, "# nofile_soft=%llu\n# nofile_hard=%llu\n",
		(unsigned long long)rl->rlim_cur,
		(unsigned long long)rl->rlim_max);
	for (unsigned int i = 0; i < cfg.nmeta; i++)
		dprintf(fd, "# %s\n", cfg.meta[i]);
	dprintf(fd, "# columns=%s\n", RAW_COLUMNS);
}

static unsigned char *make_body(size_t size)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned char *b = malloc(size ? size : 1);
	size_t i;

	if (!b)
		return NULL;
	for (i = 0; i < size; i++) {	/* xorshift64: binary, every byte */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (unsigned char)(x >> 32);
	}
	return b;
}

/*
 * The kernel stamps received packets only while some socket asks for it,
 * and turns that on from a work item, a moment after the first one asks:
 * the first echoes of a run, or of a round after all its sockets closed,
 * would go unstamped. One socket that asks for the whole run keeps it on.
 */
static int hold_stamping_on(void)
{
	int on = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &on, sizeof(on));
	return fd;
}

/* ---- the run ---------------------------------------------------------- */

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_wake(int sig)
{
	(void)sig;	/* only interrupts a blocking call */
}

static void progress(const struct worker *w, unsigned int n, double elapsed,
		     bool final)
{
	uint64_t done = 0, failed = 0, total;
	unsigned int i;

	for (i = 0; i < n; i++) {
		done += __atomic_load_n(&w[i].rec.done, __ATOMIC_RELAXED);
		failed += __atomic_load_n(&w[i].rec.failed, __ATOMIC_RELAXED);
	}
	if (cfg.duration) {
		fprintf(stderr, "\r%s: %.1f/%u s, %llu samples, %llu failed   ",
			prog, elapsed, cfg.warmup + cfg.duration,
			(unsigned long long)done, (unsigned long long)failed);
	} else {
		total = (uint64_t)n * cfg.rounds * cfg.messages;
		fprintf(stderr,
			"\r%s: %llu/%llu samples (%.0f%%), %llu failed, %.1f s   ",
			prog, (unsigned long long)done,
			(unsigned long long)total,
			total ? 100.0 * (double)done / (double)total : 0.0,
			(unsigned long long)failed, elapsed);
	}
	if (final)
		fputc('\n', stderr);
}

/* The progress line: when it was last shown. */
struct shown {
	uint64_t last;
	bool ever;
};

/*
 * Told to stop: the workers leave SCHED_IDLE, then a signal interrupts their
 * blocking calls. At SCHED_IDLE on a busy machine a worker can wait seconds
 * for a CPU to see the flag, write its rows and end (compare, and anyone
 * who pressed Ctrl-C, waits for that). Leaving it needs CAP_SYS_NICE; without
 * it they end at SCHED_IDLE's pace.
 */
static void wake_workers(struct worker *w, unsigned int n)
{
	const struct sched_param normal = { .sched_priority = 0 };
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (cfg.sched_idle)
			pthread_setschedparam(w[i].tid, SCHED_OTHER, &normal);
		/* Repeated each poll: a worker may have been between its
		 * check of the flag and a blocking call the first time. */
		pthread_kill(w[i].tid, SIGUSR1);
	}
}

/*
 * Waits for the workers until CLOCK_MONOTONIC reaches until_ns (UINT64_MAX:
 * until they finish); true when they have. On SIGINT/SIGTERM wakes them so
 * they stop soon. Their end is seen at once (worker_wait_finished), so the
 * CPU window closes on it, not up to a poll later.
 */
static bool wait_workers(struct worker *w, unsigned int n, uint64_t t_start,
			 uint64_t until_ns, struct shown *sh)
{
	bool show = !cfg.quiet && isatty(STDERR_FILENO);

	for (;;) {
		uint64_t t = now_ns(), next = t + 50000000ull;

		if (worker_wait_finished(n, next < until_ns ? next : until_ns))
			break;
		t = now_ns();
		if (t >= until_ns)
			return false;
		if (stop)
			wake_workers(w, n);
		if (show && t - sh->last >= 500000000ull &&
		    t - t_start >= 1000000000ull) {
			progress(w, n, (double)(t - t_start) / 1e9, false);
			sh->last = t;
			sh->ever = true;
		}
	}
	if (sh->ever)
		progress(w, n, (double)(now_ns() - t_start) / 1e9, true);
	sh->ever = false;	/* the last line is out */
	return true;
}

static void install_signals(void)
{
	struct sigaction sa = { 0 };

	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;	/* no SA_RESTART: interrupt syscalls */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_wake;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static double cpu_seconds(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* Waits until every started thread has set its scheduling; 0, or the
 * errno of a thread the kernel refused SCHED_IDLE. */
static int wait_threads_ready(const struct worker *w, unsigned int n)
{
	unsigned int i;

	while (__atomic_load_n(&threads_ready, __ATOMIC_ACQUIRE) < n)
		usleep(1000);
	for (i = 0; i < n; i++)
		if (w[i].sched_err)
			return w[i].sched_err;
	return 0;
}

/* What the run's threads cost and waited, summed; see client_bound(). */
struct client_load {
	uint64_t unstamped, clock_steps;
	bool stamps_refused, have_cpu;
	double run_s, wait_s, thread_s;
};

static void sum_client_load(const struct worker *w, unsigned int n,
			    struct client_load *l)
{
	unsigned int i;

	memset(l, 0, sizeof(*l));
	l->have_cpu = true;
	for (i = 0; i < n; i++) {
		l->unstamped += w[i].rec.unstamped;
		l->clock_steps += w[i].clock_steps;
		l->stamps_refused |= w[i].stamps_refused;
		l->have_cpu &= w[i].have_cpu;
		if (!w[i].have_cpu)
			continue;
		l->run_s += (double)(w[i].cpu1.run_ns - w[i].cpu0.run_ns) / 1e9;
		l->wait_s += (double)(w[i].cpu1.wait_ns - w[i].cpu0.wait_ns) / 1e9;
		l->thread_s += (double)(w[i].end_ns - w[i].begin_ns) / 1e9;
	}
}

/* Says why some ok samples have no arrival_us. */
static void explain_unstamped(const struct client_load *l, size_t ok)
{
	if (!l->unstamped)
		return;
	if (l->stamps_refused)
		fprintf(stderr, "%s: the kernel refused SO_TIMESTAMPING: no arrival_us; rtt_us includes the client's own delay\n",
			prog);
	else if (l->unstamped == ok)
		fprintf(stderr, "%s: the kernel stamped none of the %zu echoes: arrival_us is '-' and only rtt_us (the client's view) is known.\n"
			"  The sk_msg bypass does this: it hands the client's socket the bytes without an skb to stamp.\n",
			prog, ok);
	else
		fprintf(stderr, "%s: %llu of %zu echoes had no receive timestamp (%llu of them because CLOCK_REALTIME was stepped): their arrival_us is '-'\n",
			prog, (unsigned long long)l->unstamped, ok,
			(unsigned long long)l->clock_steps);
}
/* ---- CPU per echo ----------------------------------------------------- */

static void use_to_summary(const struct cpu_use *u, uint64_t echoes,
			   struct summary_cpu *c)
{
	c->busy_s = u->busy_s;
	c->usr_s = u->usr_s;
	c->sys_s = u->sys_s;
	c->softirq_s = u->softirq_s;
	c->irq_s = u->irq_s;
	c->capacity_s = u->window_s * u->ncpus;
	c->echoes = echoes;
}

static double us_per(double s, uint64_t echoes)
{
	return echoes ? s * 1e6 / (double)echoes : NAN;
}

/* '# SIDE_busy_s=' and the kinds (pooled exactly by --summarize), then
 * per echo. */
static void write_use(int fd, const char *side, const struct cpu_use *u,
		      uint64_t echoes)
{
	dprintf(fd, "# %s_busy_s=%.6f\n# %s_usr_s=%.6f\n# %s_sys_s=%.6f\n"
		"# %s_softirq_s=%.6f\n# %s_irq_s=%.6f\n# %s_sampled_s=%.6f\n"
		"# %s_steal_s=%.2f\n# %s_busy_negative_s=%.6f\n",
		side, u->busy_s, side, u->usr_s, side, u->sys_s, side,
		u->softirq_s, side, u->irq_s, side, u->sampled_s,
		side, u->steal_s, side, u->negative_s);
	dprintf(fd, "# %s_cpu_us_per_echo=%.3f\n# %s_usr_us_per_echo=%.3f\n"
		"# %s_sys_us_per_echo=%.3f\n# %s_softirq_us_per_echo=%.3f\n"
		"# %s_irq_us_per_echo=%.3f\n",
		side, us_per(u->busy_s, echoes), side, us_per(u->usr_s, echoes),
		side, us_per(u->sys_s, echoes),
		side, us_per(u->softirq_s, echoes),
		side, us_per(u->irq_s, echoes));
}

static void write_cpu_metadata(int fd, const struct cpu_snap *a,
			       const struct cpu_snap *b,
			       const struct cpu_use *server,
			       const struct cpu_use *client, uint64_t echoes)
{
	char list[4096];

	dprintf(fd, "# window_s=%.6f\n# cpu_echoes=%llu\n# user_hz=%ld\n",
		server->window_s, (unsigned long long)echoes,
		sysconf(_SC_CLK_TCK));
	write_use(fd, "server", server, echoes);
	write_use(fd, "client", client, echoes);
	cpu_softirqs_between(a, b, true, list, sizeof(list));
	dprintf(fd, "# softirq_net_rx=%s\n", list);
	cpu_softirqs_between(a, b, false, list, sizeof(list));
	dprintf(fd, "# softirq_net_tx=%s\n", list);
	cpu_kworkers_between(a, b, list, sizeof(list));
	dprintf(fd, "# kworker_ms=%s\n", list);
}

static void say_cpu(const struct cpu_use *server, const struct cpu_use *client,
		    uint64_t echoes)
{
	fprintf(stderr, "server cpu: %.2f us per echo (usr %.2f, sys %.2f, softirq %.2f, irq %.2f) on CPUs %s (%s), %.2f s window\n",
		us_per(server->busy_s, echoes), us_per(server->usr_s, echoes),
		us_per(server->sys_s, echoes),
		us_per(server->softirq_s, echoes),
		us_per(server->irq_s, echoes), server_list, cpu_scope,
		server->window_s);
	fprintf(stderr, "client cpus: %.2f us per echo (usr %.2f, sys %.2f, softirq %.2f, irq %.2f) on CPUs %s\n",
		us_per(client->busy_s, echoes), us_per(client->usr_s, echoes),
		us_per(client->sys_s, echoes),
		us_per(client->softirq_s, echoes),
		us_per(client->irq_s, echoes), client_list);
	if ((server->sampled_s == 0 && server->busy_s > 0) ||
	    (client->sampled_s == 0 && client->busy_s > 0))
		fprintf(stderr, "  (no tick of /proc/stat fell in the busy time of %s: its kinds are unknown and counted as sys)\n",
			server->sampled_s == 0 && server->busy_s > 0 ?
			"the server's CPUs" : "the client's CPUs");
}

/* ---- the steps of a run ----------------------------------------------- */

/* What main's steps hand on to each other. */
struct bench {
	struct worker *w;
	unsigned int started;		/* threads started */
	int out_fd, stamp_fd;
	char path[PATH_MAX];		/* the raw file */
	struct rlimit rl;
	struct cpu_snap snap0, snap1;	/* the CPU window */
	bool have_snaps;
	struct rusage ru0, ru1;
	uint64_t t_end;
	struct shown shown;
	/* Over every thread: samples, failures, the measured span. */
	uint64_t samples, failed, warmup_samples;
	uint64_t first_sent, last_done;
	struct summary sum;
	struct client_load load;
	struct cpu_use server_use, client_use;
	struct stats delay;
	bool bound;
	double cpu;			/* bench's own CPU seconds */
};

static void warn_time_wait(void)
{
	long tw = env_time_wait_sockets();

	if (tw > TW_WARN && !cfg.quiet)
		fprintf(stderr,
			"%s: warning: %ld sockets in TIME_WAIT. connect() scans past them for a free port, which slows the\n"
			"client and inflates the tail (1000 x 10 on our 2-core machine: p99 56 ms -> 476 ms). Wait a minute\n"
			"for them to expire for a clean run.\n",
			prog, tw);
}

/* The command line, the server, the CPUs, the message, the raw file's
 * head: everything before a thread starts. Exits on any failure. */
static void set_up(struct bench *b, int argc, char **argv)
{
	parse_args(argc, argv);
	resolve_server();
	default_label();
	place_cpus();
	if (cfg.connections)
		choose_event_threads();
	raise_nofile(&b->rl);

	cfg.hdr_len = cfg.size < sizeof(struct msg_header) ?
		      cfg.size : sizeof(struct msg_header);
	cfg.body = make_body(cfg.size);
	b->w = calloc(cfg.threads, sizeof(*b->w));
	if (!cfg.body || !b->w) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	warn_time_wait();
	b->stamp_fd = hold_stamping_on();
	b->out_fd = open_output(b->path, sizeof(b->path));
	write_metadata(b->out_fd, &b->rl);
	install_signals();
}

/* Starts the load threads, each waiting at the gate with the engine of
 * the run: the event engine with --connections, else the threads one. */
static void start_workers(struct bench *b)
{
	void (*engine)(struct worker *w) = cfg.connections ? event_run : load_run;
	pthread_attr_t attr;
	unsigned int i;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	for (i = 0; i < cfg.threads; i++) {
		struct worker *w = &b->w[i];
		char *out = malloc(OUTBUF_SIZE);

		w->id = i;
		w->engine = engine;
		record_init(&w->rec, b->out_fd, out);
		w->hdr.magic = HDR_MAGIC;
		w->hdr.thread = i;
		w->rbuf_size = cfg.size < RECVBUF_MAX ? cfg.size : RECVBUF_MAX;
		w->rbuf = malloc(w->rbuf_size);
		if (!w->rbuf || !out) {
			fprintf(stderr, "%s: out of memory for thread %u\n",
				prog, i);
			break;
		}
		err = pthread_create(&w->tid, &attr, worker_thread, w);
		if (err) {
			fprintf(stderr,
				"%s: cannot start thread %u of %u: %s (check ulimit -u and free memory)\n",
				prog, i + 1, cfg.threads, strerror(err));
			break;
		}
		b->started++;
	}
	pthread_attr_destroy(&attr);
}

/* Whether every thread started and has its scheduling; if not, sends
 * them home and says so. */
static bool workers_ready(struct bench *b)
{
	int err = wait_threads_ready(b->w, b->started);

	if (err)
		fprintf(stderr, "%s: the kernel refused SCHED_IDLE for the load threads: %s; run with --sched normal\n",
			prog, strerror(err));
	if (b->started == cfg.threads && !err)
		return true;
	worker_open_gate(-1);
	for (unsigned int i = 0; i < b->started; i++)
		pthread_join(b->w[i].tid, NULL);
	fprintf(stderr, "%s: no samples taken; '%s' has only metadata\n",
		prog, b->path);
	return false;
}

/* Opens the gate, waits for the threads and reads the CPU window around
 * the measured part: from the gate (or the warm-up's end) to the end. */
static void run_load(struct bench *b)
{
	getrusage(RUSAGE_SELF, &b->ru0);
	if (!cfg.warmup)
		b->have_snaps = cpu_snap_take(&b->snap0, true, false);
	cfg.start_ns = now_ns();
	cfg.measure_ns = cfg.start_ns + (uint64_t)cfg.warmup * NSEC;
	cfg.deadline_ns = cfg.measure_ns + (uint64_t)cfg.duration * NSEC;
	worker_open_gate(1);	/* all threads start together */
	if (cfg.warmup) {
		wait_workers(b->w, cfg.threads, cfg.start_ns, cfg.measure_ns,
			     &b->shown);
		b->have_snaps = cpu_snap_take(&b->snap0, true, false);
	}
	wait_workers(b->w, cfg.threads, cfg.start_ns, UINT64_MAX, &b->shown);
	b->have_snaps = cpu_snap_take(&b->snap1, true, true) && b->have_snaps;
	b->t_end = now_ns();
	getrusage(RUSAGE_SELF, &b->ru1);
	for (unsigned int i = 0; i < cfg.threads; i++)
		pthread_join(b->w[i].tid, NULL);
}

/* The threads' counts and span, summed; says what a thread could not do. */
static void count_samples(struct bench *b)
{
	b->first_sent = UINT64_MAX;
	for (unsigned int i = 0; i < cfg.threads; i++) {
		const struct worker *w = &b->w[i];

		b->samples += w->rec.done;
		b->failed += w->rec.failed;
		b->warmup_samples += w->rec.warmup_samples;
		if (w->rec.first_sent_ns < b->first_sent)
			b->first_sent = w->rec.first_sent_ns;
		if (w->rec.last_done_ns > b->last_done)
			b->last_done = w->rec.last_done_ns;
		if (w->setup_errno) {
			fprintf(stderr, "%s: load thread %u could not set up its connections: %s\n",
				prog, i, strerror(w->setup_errno));
			b->failed++;
		}
		if (w->rec.write_errno && !cfg.quiet)
			fprintf(stderr, "%s: writing '%s': %s\n", prog, b->path,
				strerror(w->rec.write_errno));
	}
}

/* Every ok sample's times into the summary, the threads' buffers freed;
 * false when out of memory. */
static bool collect_times(struct bench *b)
{
	struct summary *s = &b->sum;
	size_t room = (b->samples - b->failed + 1) * sizeof(double);

	s->rtt = malloc(room);
	s->arrival = malloc(room);
	s->delay = malloc(room);
	if (!s->rtt || !s->arrival || !s->delay) {
		fprintf(stderr, "%s: out of memory for statistics\n", prog);
		return false;
	}
	for (unsigned int i = 0; i < cfg.threads; i++) {
		for (struct chunk *c = b->w[i].rec.head, *next; c; c = next) {
			for (size_t k = 0; k < c->n; k++) {
				s->rtt[s->n++] = c->v[k].rtt;
				if (isnan(c->v[k].arrival))
					continue;
				s->delay[s->narrival] =
					c->v[k].rtt - c->v[k].arrival;
				s->arrival[s->narrival++] = c->v[k].arrival;
			}
			next = c->next;
			free(c);
		}
		free(b->w[i].rbuf);
		free(b->w[i].rec.out);
	}
	return true;
}

/* The summary line's figures, and whether the client was the bottleneck. */
static void sum_up(struct bench *b)
{
	struct summary *s = &b->sum;

	sum_client_load(b->w, cfg.threads, &b->load);
	b->cpu = cpu_seconds(&b->ru1) - cpu_seconds(&b->ru0);
	s->label = cfg.label;
	s->threads = cfg.threads;
	s->rounds = cfg.rounds;
	s->samples = b->samples;
	s->failed = b->failed;
	/* First send to last completion of the measured samples; a run
	 * that sent nothing: its wall time. */
	s->elapsed_s = (double)(b->last_done >= b->first_sent ?
				b->last_done - b->first_sent :
				b->t_end - cfg.measure_ns) / 1e9;
	if (b->have_snaps) {
		cpu_use(&b->snap0, &b->snap1, &server_set, &b->server_use);
		cpu_use(&b->snap0, &b->snap1, &client_set, &b->client_use);
		use_to_summary(&b->server_use, s->n, &s->server);
		use_to_summary(&b->client_use, s->n, &s->client);
	}
	s->cpu_scope = cpu_scope;
	if (b->load.have_cpu && b->load.thread_s > 0)
		s->rq_share = b->load.wait_s / b->load.thread_s;
	b->bound = summary_client_bound(s, &b->delay);
}

/* The raw file's tail: what is known only at the end. */
static void write_end_metadata(const struct bench *b)
{
	const struct summary *s = &b->sum;
	int fd = b->out_fd;

	dprintf(fd, "# elapsed_s=%.6f\n# client_cpu_s=%.3f\n",
		s->elapsed_s, b->cpu);
	dprintf(fd, "# warmup_samples=%llu\n",
		(unsigned long long)b->warmup_samples);
	if (b->have_snaps)
		write_cpu_metadata(fd, &b->snap0, &b->snap1, &b->server_use,
				   &b->client_use, s->n);
	if (b->load.have_cpu)
		dprintf(fd, "# client_run_s=%.3f\n# client_rq_wait_s=%.3f\n"
			"# client_thread_s=%.3f\n# client_rq_share=%.3f\n",
			b->load.run_s, b->load.wait_s, b->load.thread_s,
			s->rq_share);
	if (!isnan(s->delay_share))
		dprintf(fd, "# client_delay_p50_us=%.1f\n# client_delay_share=%.3f\n",
			b->delay.p50, s->delay_share);
	dprintf(fd, "# bottleneck=%s\n%s",
		b->bound ? "client" :
		isnan(s->delay_share) && isnan(s->rq_share) ? "unknown" : "server",
		stop ? "# interrupted=1\n" : "");
	if (mismatch_first())
		dprintf(fd, "# first_mismatch=%s\n", mismatch_first());
	if (b->load.unstamped)
		dprintf(fd, "# unstamped=%llu\n",
			(unsigned long long)b->load.unstamped);
}

/* The summary line on stdout, and its gist as the raw file's last line;
 * with --window, the stream's line after it: the echoed bytes a second
 * (the rate of ok echoes times their size) and the server's CPU per MiB
 * of them. */
static void print_summary(struct bench *b)
{
	const struct summary *s = &b->sum;
	double rate = s->elapsed_s > 0 ? (double)(s->n + s->extra_ok) / s->elapsed_s : 0;
	double mib = (double)cfg.size / (1 << 20);

	summary_print(&b->sum);
	if (cfg.window)
		printf("stream window=%zu depth=%u size=%zu mib_s=%.2f server_cpu_us_per_mib=%.1f\n",
		       cfg.window, cfg.depth, cfg.size, rate * mib,
		       s->server.echoes ?
		       s->server.busy_s * 1e6 / (double)s->server.echoes / mib : NAN);
	fflush(stdout);
	dprintf(b->out_fd, "# summary label=%s samples=%llu ok=%zu failed=%llu\n",
		cfg.label, (unsigned long long)b->samples, b->sum.n,
		(unsigned long long)b->failed);
	close(b->out_fd);
}

/* When the client was the bottleneck: why, and what to do. */
static void warn_client_bound(const struct bench *b)
{
	const struct summary *s = &b->sum;

	if (!b->bound)
		return;
	if (summary_client_saturated(s))
		fprintf(stderr,
			"%s: warning: the client was the bottleneck: its CPUs were busy %.0f%% of the window, the\n"
			"  server's %.0f%%. The client set the pace: the latency and the rate are its own; the CPU per\n"
			"  echo is still the server's. Use fewer connections, or give the client more CPUs.\n",
			prog, 100 * s->client.busy_s / s->client.capacity_s,
			100 * s->server.busy_s / s->server.capacity_s);
	else if (!isnan(s->delay_share))
		fprintf(stderr,
			"%s: warning: the client was the bottleneck: half the echoes waited over %.1f ms in its kernel\n"
			"  for their thread to read them, %.0f%% of the response time it saw (its threads waited for a CPU\n"
			"  %.0f%% of the time). rtt_us measures the client's scheduling; arrival_us (the kernel's stamp)\n"
			"  still times the server. For rtt_us use fewer threads, or give the client CPUs of its own\n"
			"  (run.sh SERVER --cpus 0, bench --cpus 1; compare does it by default).\n",
			prog, b->delay.p50 / 1e3, 100 * s->delay_share,
			100 * s->rq_share);
	else
		fprintf(stderr,
			"%s: warning: the client was the bottleneck: its threads waited for a CPU %.0f%% of the time,\n"
			"  so rtt_us mostly measures the client's scheduling (no kernel stamps to tell the server's part).\n"
			"  Use fewer threads, or a client on other CPUs or another machine.\n",
			prog, 100 * s->rq_share);
}

/* Without --quiet: the stamps, the CPUs, bench's own cost, the file. */
static void report(const struct bench *b)
{
	const struct summary *s = &b->sum;

	if (cfg.quiet)
		return;
	explain_unstamped(&b->load, s->n);
	if (b->have_snaps)
		say_cpu(&b->server_use, &b->client_use, s->n);
	fprintf(stderr, "client cpu: %.2f s (%.2f us per sample); threads at %s, waiting for a CPU %.0f%% of the time\n",
		b->cpu, b->samples ? b->cpu * 1e6 / (double)b->samples : 0.0,
		cfg.sched_idle ? "SCHED_IDLE" : "normal priority",
		isnan(s->rq_share) ? NAN : 100 * s->rq_share);
	fprintf(stderr, "raw samples: %s%s\n", b->path,
		stop ? " (interrupted run: every finished sample is in it)" : "");
}

static void clean_up(struct bench *b)
{
	if (b->stamp_fd >= 0)
		close(b->stamp_fd);
	cpu_snap_free(&b->snap0);
	cpu_snap_free(&b->snap1);
	free(b->sum.rtt);
	free(b->sum.arrival);
	free(b->sum.delay);
	free(b->w);
	free(cfg.body);
}

int main(int argc, char **argv)
{
	static struct bench b = {
		.sum = { .rq_share = NAN, .delay_share = NAN },
	};

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	set_up(&b, argc, argv);
	start_workers(&b);
	if (!workers_ready(&b))
		return 1;
	run_load(&b);
	count_samples(&b);
	if (!collect_times(&b))
		return 1;
	sum_up(&b);
	write_end_metadata(&b);
	print_summary(&b);
	warn_client_bound(&b);
	report(&b);
	clean_up(&b);
	return b.failed ? 1 : 0;
}
