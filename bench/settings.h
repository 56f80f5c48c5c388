/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's settings: what bench.c takes from the command line and works
 * out before the load threads start, read by both engines (load.c,
 * event.c) and the recorder (record.c); no one writes them once the gate
 * is open. Beside them, the run's clock and its stop flag.
 */
#ifndef BENCH_SETTINGS_H
#define BENCH_SETTINGS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#define RECVBUF_MAX	(64 * 1024)	/* per-thread receive buffer */
#define HDR_MAGIC	0x6563686fu	/* "echo" */
#define NSEC		1000000000ull

/* The first bytes of every message say who sent it and which one it is. */
struct msg_header {
	uint32_t magic;
	uint32_t thread;
	uint32_t round;
	uint32_t message;
};

struct settings {
	/* From the command line. */
	unsigned int threads;
	unsigned int rounds;
	unsigned int messages;
	unsigned int duration;		/* seconds measured; 0 = rounds mode */
	unsigned int warmup;		/* seconds before them, not measured */
	unsigned int rate;		/* messages/s in total; 0 = closed loop */
	unsigned int connections;	/* event engine (event.c); 0 = a thread each */
	size_t window;			/* --window: bytes kept out per connection; 0: none */
	bool poisson;			/* --arrivals: Poisson, else uniform */
	uint64_t seed;			/* of the Poisson arrivals */
	bool seed_given;		/* --seed; else a random one */
	bool sched_idle;		/* load threads at SCHED_IDLE */
	const char *cpus;		/* --cpus as given; NULL = every CPU */
	size_t size;
	const char *host;
	unsigned int port;
	const char *output;
	char label[64];
	unsigned int timeout_ms;
	bool quiet;
	const char *meta[32];
	unsigned int nmeta;

	/* Worked out by bench.c before the gate opens. */
	struct sockaddr_storage server_addr;
	socklen_t server_addrlen;
	unsigned char *body;		/* shared, read-only message body */
	size_t hdr_len;			/* min(size, sizeof(struct msg_header)) */
	unsigned int depth;		/* closed loop: messages out per connection */
	uint64_t start_ns;		/* the gate opened, CLOCK_MONOTONIC */
	uint64_t measure_ns;		/* the warm-up ends: start_ns without one */
	uint64_t deadline_ns;		/* --duration mode */
};

extern struct settings cfg;

/* SIGINT/SIGTERM: every thread finishes now. */
extern volatile sig_atomic_t stop;

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline bool stopping(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

#endif
