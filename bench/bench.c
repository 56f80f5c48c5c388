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
#include "env.h"
#include "load.h"
#include "rawfile.h"
#include "stats.h"
#include "summary.h"

#define FD_RESERVE	32		/* descriptors besides the sockets */
#define TW_WARN		1000		/* TIME_WAIT sockets that skew a run */

struct config cfg = {
	.threads = 1000,
	.rounds = 10,
	.messages = 1,
	.size = 64,
	.host = "127.0.0.1",
	.port = 12345,
	.timeout_ms = 5000,
	.sched_idle = true,
	.poisson = true,
};

const char *prog = "bench";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [options]\n"
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
"  -s, --size BYTES    message size (default 64)\n"
"  -H, --host ADDR     server address (default 127.0.0.1)\n"
"  -p, --port N        server port (default 12345)\n"
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
"                      /run/echolab/cpus; else every CPU, the client's too)\n"
"  -q, --quiet         print only the summary line\n"
"      --meta K=V      add a '# K=V' metadata line to the file (repeatable)\n"
"      --summarize FILE...  print the summary line of raw files (samples\n"
"                      pooled) instead of running; nothing is sent\n"
"      --samples METRIC FILE...  print 'thread<TAB>time' of every ok sample\n"
"                      of raw files, METRIC rtt or arrival (for plots)\n"
"  -h, --help          this text\n"
"\n"
"Output: the raw file (format in bench/rawfile.h), one row per sample,\n"
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
"stderr says so.\n"
"Exit status: 0 if every sample was ok, 1 if any failed, 2 on bad usage.\n",
		prog);
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

/* cpu_set_parse for flag: a usage error when the list is malformed or names no
 * CPU this process may run on (before --cpus narrows that). */
static void parse_cpus(const char *flag, const char *list, cpu_set_t *set)
{
	static cpu_set_t online;
	static bool have_online;

	if (!cpu_set_parse(list, set))
		usage_error("%s: '%s' is not a CPU list such as 1, 0,2 or 2-3",
			    flag, list);
	if (!have_online)
		have_online = !sched_getaffinity(0, sizeof(online), &online);
	if (have_online) {
		cpu_set_t both;

		CPU_AND(&both, &online, set);
		if (!CPU_COUNT(&both))
			usage_error("%s %s: none of these CPUs is online here (this machine has %ld)",
				    flag, list, sysconf(_SC_NPROCESSORS_ONLN));
	}
}

/* The server's CPUs and the client's, whose time per echo bench reports;
 * where the server's come from: flag, run.sh or all. */
static cpu_set_t server_set, client_set;
static const char *server_cpus_from = "all";
static char server_list[256], client_list[256], cpu_scope[8];
static bool cpus_all;		/* --cpus all */
static bool threads_set;	/* --threads given */

/*
 * Without --server-cpus: where run.sh placed the server (its state, the
 * cpus of a server on this port), else every CPU. The client's: --cpus,
 * else every CPU. cpu_scope says how they overlap.
 */
static void place_cpus(void)
{
	const char *dir = getenv("ECHOLAB_STATE_DIR");
	char path[PATH_MAX], buf[256] = "", port[16] = "";
	cpu_set_t all, both;
	FILE *f;

	if (!dir || !*dir)
		dir = "/run/echolab";
	/* Every online CPU (bench's own affinity is --cpus by now). */
	CPU_ZERO(&all);
	for (int i = 0; i < sysconf(_SC_NPROCESSORS_ONLN) && i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	if (!strcmp(server_cpus_from, "all")) {
		snprintf(path, sizeof(path), "%s/port", dir);
		if ((f = fopen(path, "re"))) {
			if (!fgets(port, sizeof(port), f))
				port[0] = '\0';
			fclose(f);
		}
		snprintf(path, sizeof(path), "%s/cpus", dir);
		if ((!port[0] || (unsigned int)atoi(port) == cfg.port) &&
		    (f = fopen(path, "re"))) {
			if (fgets(buf, sizeof(buf), f)) {
				buf[strcspn(buf, "\n")] = '\0';
				if (cpu_set_parse(buf, &server_set))
					server_cpus_from = "run.sh";
			}
			fclose(f);
		}
	}
	if (!strcmp(server_cpus_from, "all"))
		server_set = all;
	if (!cfg.cpus)
		client_set = all;
	/* A client on another machine: run.sh gave the server its CPUs, so
	 * the load threads take the others unless --cpus says otherwise. */
	if (!cfg.cpus && !cpus_all && !strcmp(server_cpus_from, "run.sh")) {
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &server_set))
				CPU_CLR(i, &client_set);
		if (CPU_COUNT(&client_set) &&
		    !sched_setaffinity(0, sizeof(client_set), &client_set)) {
			cpu_set_format(&client_set, client_list,
				       sizeof(client_list));
			cfg.cpus = client_list;
			if (!cfg.quiet)
				fprintf(stderr, "%s: run.sh placed the server on CPUs %s: the load threads run on CPUs %s, as a client on another machine would (--cpus all: share them)\n",
					prog, buf, client_list);
		} else {
			client_set = all;
		}
	}
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

static void parse_args(int argc, char **argv)
{
	cpu_set_t cpus;
	bool server_cpus_set = false;

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
		{ "host",     required_argument, NULL, 'H' },
		{ "port",     required_argument, NULL, 'p' },
		{ "output",   required_argument, NULL, 'o' },
		{ "label",    required_argument, NULL, 'l' },
		{ "timeout",  required_argument, NULL, 'T' },
		{ "quiet",    no_argument,       NULL, 'q' },
		{ "meta",     required_argument, NULL, 'M' },
		{ "summarize", no_argument,      NULL, 'S' },
		{ "samples",  required_argument, NULL, 'A' },
		{ "help",     no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool rounds_set = false, messages_set = false, summarize_mode = false;
	bool arrivals_set = false;
	const char *metric = NULL;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:c:r:m:d:R:s:H:p:o:l:T:qh",
				longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			cfg.threads = parse_num("--threads", optarg, 1, 100000);
			threads_set = true;
			break;
		case 'c':
			cfg.connections = parse_num("--connections", optarg, 1,
						    100000);
			break;
		case 'a':
			if (!strcmp(optarg, "poisson"))
				cfg.poisson = true;
			else if (!strcmp(optarg, "uniform"))
				cfg.poisson = false;
			else
				usage_error("--arrivals: '%s' is not poisson or uniform",
					    optarg);
			arrivals_set = true;
			break;
		case 'e':
			cfg.seed = parse_num("--seed", optarg, 0, ULONG_MAX);
			cfg.seed_given = true;
			break;
		case 'r':
			cfg.rounds = parse_num("--rounds", optarg, 1, 100000000);
			rounds_set = true;
			break;
		case 'm':
			cfg.messages = parse_num("--messages", optarg, 1,
						 100000000);
			messages_set = true;
			break;
		case 'd':
			cfg.duration = parse_num("--duration", optarg, 1, 86400);
			break;
		case 'R':
			cfg.rate = parse_num("--rate", optarg, 1, 10000000);
			break;
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
			cpus_all = !strcmp(optarg, "all");
			if (cpus_all)
				break;	/* every CPU, run.sh's placement or not */
			parse_cpus("--cpus", optarg, &cpus);
			cfg.cpus = optarg;
			client_set = cpus;
			break;
		case 'U':
			parse_cpus("--server-cpus", optarg, &server_set);
			server_cpus_set = true;
			break;
		case 'W':
			cfg.warmup = parse_num("--warmup", optarg, 0, 86400);
			break;
		case 's':
			cfg.size = parse_num("--size", optarg, 1, 1UL << 30);
			break;
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
			cfg.timeout_ms = parse_num("--timeout", optarg, 1,
						   3600000);
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'M':
			if (!strchr(optarg, '=') || *optarg == '=' ||
			    strpbrk(optarg, "\n"))
				usage_error("--meta: '%s' is not KEY=VALUE",
					    optarg);
			if (cfg.nmeta == sizeof(cfg.meta) / sizeof(cfg.meta[0]))
				usage_error("--meta: at most %zu of them",
					    sizeof(cfg.meta) / sizeof(cfg.meta[0]));
			cfg.meta[cfg.nmeta++] = optarg;
			break;
		case 'S':
			summarize_mode = true;
			break;
		case 'A':
			if (strcmp(optarg, "rtt") && strcmp(optarg, "arrival"))
				usage_error("--samples: '%s' is not rtt or arrival",
					    optarg);
			metric = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (summarize_mode || metric) {
		if (optind == argc)
			usage_error("%s needs raw files",
				    metric ? "--samples" : "--summarize");
		exit(summary_of_files(prog, argc - optind, argv + optind, metric));
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	/* Threads inherit the affinity: set it once, before any starts. */
	if (cfg.cpus && sched_setaffinity(0, sizeof(cpus), &cpus)) {
		fprintf(stderr, "%s: cannot run on CPUs %s: %s\n", prog,
			cfg.cpus, strerror(errno));
		exit(2);
	}
	if (cfg.duration && rounds_set)
		usage_error("--duration cannot be combined with --rounds: a timed run has no rounds (--messages N: a connection per N messages)");
	if (cfg.warmup && !cfg.duration)
		usage_error("--warmup needs --duration: the warm-up comes before a timed run, e.g. --warmup 1 -d 5");
	if (cfg.rate && !cfg.duration)
		usage_error("--rate needs --duration: an open-loop run is timed, e.g. -R 5000 -d 10");
	if (cfg.connections) {
		if (!cfg.duration)
			usage_error("--connections needs --duration: the event engine runs timed, e.g. -c 1000 -R 50000 -d 10");
		if (messages_set)
			usage_error("--connections keeps every connection for the whole run: it takes no --messages");
		if (threads_set && cfg.threads > cfg.connections)
			usage_error("--threads %u is more than --connections %u: each thread needs a connection",
				    cfg.threads, cfg.connections);
	} else if (arrivals_set || cfg.seed_given) {
		usage_error("--arrivals and --seed shape the event engine's open loop: give --connections and --rate");
	}
	if ((arrivals_set || cfg.seed_given) && !cfg.rate)
		usage_error("--arrivals and --seed need --rate: a closed loop has no arrivals to draw");
	if (cfg.rate && cfg.rate > (cfg.connections ? cfg.connections :
				    cfg.threads) * 1000000ULL)
		usage_error("--rate %u over %u %s is more than one message per microsecond each",
			    cfg.rate, cfg.connections ? cfg.connections : cfg.threads,
			    cfg.connections ? "connections" : "threads");
	if (server_cpus_set)
		server_cpus_from = "flag";
	if (cfg.duration) {
		cfg.rounds = 0;
		if (!messages_set)
			cfg.messages = 0;	/* one connection for the run */
	}
	else if ((unsigned long long)cfg.threads * cfg.rounds * cfg.messages >
		 1000000000ULL)
		usage_error("threads x rounds x messages is over 10^9 samples; use --duration for long runs");
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
	memcpy(&server_addr, ai->ai_addr, ai->ai_addrlen);
	server_addrlen = ai->ai_addrlen;
	freeaddrinfo(res);
}

/*
 * Without --label: the server listening on the port, when it is on this
 * machine (env_listener_name: user-echo-server is "user"); run.sh and
 * compare pass --label.
 */
static void default_label(void)
{
	const struct sockaddr_in *in4 = (const void *)&server_addr;
	const struct sockaddr_in6 *in6 = (const void *)&server_addr;
	bool local = (server_addr.ss_family == AF_INET &&
		      (ntohl(in4->sin_addr.s_addr) >> 24) == 127) ||
		     (server_addr.ss_family == AF_INET6 &&
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
	if (!threads_set) {
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
		done += __atomic_load_n(&w[i].done, __ATOMIC_RELAXED);
		failed += __atomic_load_n(&w[i].failed, __ATOMIC_RELAXED);
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
 * Waits for the workers until CLOCK_MONOTONIC reaches until_ns (UINT64_MAX:
 * until they finish); true when they have. On SIGINT/SIGTERM wakes them so
 * they stop soon. Their end is seen at once (load_wait_finished), so the
 * CPU window closes on it, not up to a poll later.
 */
static bool wait_workers(struct worker *w, unsigned int n, uint64_t t_start,
			 uint64_t until_ns, struct shown *sh)
{
	bool show = !cfg.quiet && isatty(STDERR_FILENO);

	for (;;) {
		uint64_t t = now_ns(), next = t + 50000000ull;

		if (load_wait_finished(n, next < until_ns ? next : until_ns))
			break;
		t = now_ns();
		if (t >= until_ns)
			return false;
		if (stop) {
			unsigned int i;

			/* Repeat: a worker may have been between its check
			 * of the flag and a blocking call the first time. */
			for (i = 0; i < n; i++)
				pthread_kill(w[i].tid, SIGUSR1);
		}
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
		l->unstamped += w[i].unstamped;
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
		"# %s_steal_s=%.2f\n",
		side, u->busy_s, side, u->usr_s, side, u->sys_s, side,
		u->softirq_s, side, u->irq_s, side, u->sampled_s,
		side, u->steal_s);
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

int main(int argc, char **argv)
{
	uint64_t t_end, samples = 0, failed = 0, warmup_samples = 0;
	uint64_t first_sent = UINT64_MAX, last_done = 0;
	struct cpu_snap snap0 = { 0 }, snap1 = { 0 };
	struct cpu_use server_use, client_use;
	struct shown shown = { 0 };
	bool have_snaps = false;
	unsigned int i, started = 0;
	struct summary sum = { .rq_share = NAN, .delay_share = NAN };
	struct client_load load;
	struct rusage ru0, ru1;
	pthread_attr_t attr;
	struct worker *w;
	char path[PATH_MAX];
	struct rlimit rl;
	struct stats delay;
	bool bound;
	double cpu;
	int out_fd, stamp_fd, err;
	long tw;

	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	parse_args(argc, argv);
	resolve_server();
	default_label();
	place_cpus();
	if (cfg.connections)
		choose_event_threads();
	raise_nofile(&rl);

	hdr_len = cfg.size < sizeof(struct msg_header) ?
		  cfg.size : sizeof(struct msg_header);
	body = make_body(cfg.size);
	w = calloc(cfg.threads, sizeof(*w));
	if (!body || !w) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}

	tw = env_time_wait_sockets();
	if (tw > TW_WARN && !cfg.quiet)
		fprintf(stderr,
			"%s: warning: %ld sockets in TIME_WAIT. connect() scans past them for a free port, which slows the\n"
			"client and inflates the tail (1000 x 10 on our 2-core machine: p99 56 ms -> 476 ms). Wait a minute\n"
			"for them to expire for a clean run.\n",
			prog, tw);
	stamp_fd = hold_stamping_on();
	out_fd = open_output(path, sizeof(path));
	write_metadata(out_fd, &rl);
	install_signals();

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	for (i = 0; i < cfg.threads; i++) {
		w[i].id = i;
		w[i].out_fd = out_fd;
		w[i].hdr.magic = HDR_MAGIC;
		w[i].hdr.thread = i;
		w[i].rbuf_size = cfg.size < RECVBUF_MAX ? cfg.size : RECVBUF_MAX;
		w[i].rbuf = malloc(w[i].rbuf_size);
		w[i].out = malloc(OUTBUF_SIZE);
		if (!w[i].rbuf || !w[i].out) {
			fprintf(stderr, "%s: out of memory for thread %u\n",
				prog, i);
			break;
		}
		err = pthread_create(&w[i].tid, &attr, load_thread, &w[i]);
		if (err) {
			fprintf(stderr,
				"%s: cannot start thread %u of %u: %s (check ulimit -u and free memory)\n",
				prog, i + 1, cfg.threads, strerror(err));
			break;
		}
		started++;
	}
	pthread_attr_destroy(&attr);
	err = wait_threads_ready(w, started);
	if (err)
		fprintf(stderr, "%s: the kernel refused SCHED_IDLE for the load threads: %s; run with --sched normal\n",
			prog, strerror(err));
	if (started < cfg.threads || err) {
		load_open_gate(-1);
		for (i = 0; i < started; i++)
			pthread_join(w[i].tid, NULL);
		fprintf(stderr, "%s: no samples taken; '%s' has only metadata\n",
			prog, path);
		return 1;
	}

	getrusage(RUSAGE_SELF, &ru0);
	/* The CPU window opens at the gate, or when the warm-up ends. */
	if (!cfg.warmup)
		have_snaps = cpu_snap_take(&snap0, true, false);
	start_ns = now_ns();
	measure_ns = start_ns + (uint64_t)cfg.warmup * NSEC;
	deadline_ns = measure_ns + (uint64_t)cfg.duration * NSEC;
	load_open_gate(1);	/* all threads start together */
	if (cfg.warmup) {
		wait_workers(w, cfg.threads, start_ns, measure_ns, &shown);
		have_snaps = cpu_snap_take(&snap0, true, false);
	}
	wait_workers(w, cfg.threads, start_ns, UINT64_MAX, &shown);
	have_snaps = cpu_snap_take(&snap1, true, true) && have_snaps;
	t_end = now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	for (i = 0; i < cfg.threads; i++)
		pthread_join(w[i].tid, NULL);

	/* Gather every ok sample's times for the statistics. */
	for (i = 0; i < cfg.threads; i++) {
		samples += w[i].done;
		failed += w[i].failed;
		warmup_samples += w[i].warmup_samples;
		if (w[i].first_sent_ns < first_sent)
			first_sent = w[i].first_sent_ns;
		if (w[i].last_done_ns > last_done)
			last_done = w[i].last_done_ns;
		if (w[i].setup_errno) {
			fprintf(stderr, "%s: load thread %u could not set up its connections: %s\n",
				prog, i, strerror(w[i].setup_errno));
			failed++;
		}
		if (w[i].write_errno && !cfg.quiet)
			fprintf(stderr, "%s: writing '%s': %s\n", prog, path,
				strerror(w[i].write_errno));
	}
	sum.rtt = malloc((samples - failed + 1) * sizeof(double));
	sum.arrival = malloc((samples - failed + 1) * sizeof(double));
	sum.delay = malloc((samples - failed + 1) * sizeof(double));
	if (!sum.rtt || !sum.arrival || !sum.delay) {
		fprintf(stderr, "%s: out of memory for statistics\n", prog);
		return 1;
	}
	for (i = 0; i < cfg.threads; i++) {
		for (struct chunk *c = w[i].head, *next; c; c = next) {
			for (size_t k = 0; k < c->n; k++) {
				sum.rtt[sum.n++] = c->v[k].rtt;
				if (isnan(c->v[k].arrival))
					continue;
				sum.delay[sum.narrival] =
					c->v[k].rtt - c->v[k].arrival;
				sum.arrival[sum.narrival++] = c->v[k].arrival;
			}
			next = c->next;
			free(c);
		}
		free(w[i].rbuf);
		free(w[i].out);
	}
	sum_client_load(w, cfg.threads, &load);
	cpu = cpu_seconds(&ru1) - cpu_seconds(&ru0);
	sum.label = cfg.label;
	sum.threads = cfg.threads;
	sum.rounds = cfg.rounds;
	sum.samples = samples;
	sum.failed = failed;
	/* First send to last completion of the measured samples; a run
	 * that sent nothing: its wall time. */
	sum.elapsed_s = (double)(last_done >= first_sent ?
				 last_done - first_sent : t_end - measure_ns) / 1e9;
	if (have_snaps) {
		cpu_use(&snap0, &snap1, &server_set, &server_use);
		cpu_use(&snap0, &snap1, &client_set, &client_use);
		use_to_summary(&server_use, sum.n, &sum.server);
		use_to_summary(&client_use, sum.n, &sum.client);
	}
	sum.cpu_scope = cpu_scope;
	if (load.have_cpu && load.thread_s > 0)
		sum.rq_share = load.wait_s / load.thread_s;
	bound = summary_client_bound(&sum, &delay);

	dprintf(out_fd, "# elapsed_s=%.6f\n# client_cpu_s=%.3f\n",
		sum.elapsed_s, cpu);
	dprintf(out_fd, "# warmup_samples=%llu\n",
		(unsigned long long)warmup_samples);
	if (have_snaps)
		write_cpu_metadata(out_fd, &snap0, &snap1, &server_use,
				   &client_use, sum.n);
	if (load.have_cpu)
		dprintf(out_fd, "# client_run_s=%.3f\n# client_rq_wait_s=%.3f\n"
			"# client_thread_s=%.3f\n# client_rq_share=%.3f\n",
			load.run_s, load.wait_s, load.thread_s, sum.rq_share);
	if (!isnan(sum.delay_share))
		dprintf(out_fd, "# client_delay_p50_us=%.1f\n# client_delay_share=%.3f\n",
			delay.p50, sum.delay_share);
	dprintf(out_fd, "# bottleneck=%s\n%s",
		bound ? "client" :
		isnan(sum.delay_share) && isnan(sum.rq_share) ? "unknown" : "server",
		stop ? "# interrupted=1\n" : "");
	if (load.unstamped)
		dprintf(out_fd, "# unstamped=%llu\n",
			(unsigned long long)load.unstamped);
	summary_print(&sum);
	fflush(stdout);
	dprintf(out_fd, "# summary label=%s samples=%llu ok=%zu failed=%llu\n",
		cfg.label, (unsigned long long)samples, sum.n,
		(unsigned long long)failed);
	close(out_fd);
	if (bound && summary_client_saturated(&sum))
		fprintf(stderr,
			"%s: warning: the client was the bottleneck: its CPUs were busy %.0f%% of the window, the\n"
			"  server's %.0f%%. The client set the pace: the latency and the rate are its own; the CPU per\n"
			"  echo is still the server's. Use fewer connections, or give the client more CPUs.\n",
			prog, 100 * sum.client.busy_s / sum.client.capacity_s,
			100 * sum.server.busy_s / sum.server.capacity_s);
	else if (bound && !isnan(sum.delay_share))
		fprintf(stderr,
			"%s: warning: the client was the bottleneck: half the echoes waited over %.1f ms in its kernel\n"
			"  for their thread to read them, %.0f%% of the response time it saw (its threads waited for a CPU\n"
			"  %.0f%% of the time). rtt_us measures the client's scheduling; arrival_us (the kernel's stamp)\n"
			"  still times the server. For rtt_us use fewer threads, or give the client CPUs of its own\n"
			"  (run.sh SERVER --cpus 0, bench --cpus 1; compare does it by default).\n",
			prog, delay.p50 / 1e3, 100 * sum.delay_share,
			100 * sum.rq_share);
	else if (bound)
		fprintf(stderr,
			"%s: warning: the client was the bottleneck: its threads waited for a CPU %.0f%% of the time,\n"
			"  so rtt_us mostly measures the client's scheduling (no kernel stamps to tell the server's part).\n"
			"  Use fewer threads, or a client on other CPUs or another machine.\n",
			prog, 100 * sum.rq_share);
	if (!cfg.quiet) {
		explain_unstamped(&load, sum.n);
		if (have_snaps)
			say_cpu(&server_use, &client_use, sum.n);
		fprintf(stderr, "client cpu: %.2f s (%.2f us per sample); threads at %s, waiting for a CPU %.0f%% of the time\n",
			cpu, samples ? cpu * 1e6 / (double)samples : 0.0,
			cfg.sched_idle ? "SCHED_IDLE" : "normal priority",
			isnan(sum.rq_share) ? NAN : 100 * sum.rq_share);
		fprintf(stderr, "raw samples: %s%s\n", path,
			stop ? " (interrupted run: every finished sample is in it)" : "");
	}
	if (stamp_fd >= 0)
		close(stamp_fd);
	cpu_snap_free(&snap0);
	cpu_snap_free(&snap1);
	free(sum.rtt);
	free(sum.arrival);
	free(sum.delay);
	free(w);
	free(body);
	return failed ? 1 : 0;
}
