/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The load engine: what one client thread does (load_thread), and what the
 * threads share with the main thread that sets them up (bench.c). Every
 * thread waits at the gate until the main thread opens it, runs its load
 * shape (--rounds x --messages, or --duration, closed or open loop), and
 * records every sample: its row into the raw file, its times into chunks.
 */
#ifndef BENCH_LOAD_H
#define BENCH_LOAD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "env.h"
#include "rawfile.h"

#define OUTBUF_SIZE	(16 * 1024)	/* per-thread row buffer */
#define RECVBUF_MAX	(64 * 1024)	/* per-thread receive buffer */
#define CHUNK_SAMPLES	65536
#define HDR_MAGIC	0x6563686fu	/* "echo" */
#define NO_TIME		RAW_NO_TIME
#define NSEC		1000000000ull

enum status {
	ST_OK,
	ST_TIMEOUT,	/* no answer within --timeout */
	ST_REFUSED,	/* nothing listening */
	ST_RESET,	/* server reset the connection */
	ST_EOF,		/* server closed before the whole echo came back */
	ST_MISMATCH,	/* the echo differs from what was sent */
	ST_NOPORT,	/* out of local ports */
	ST_ERROR,	/* any other socket error */
	ST_ABORTED,	/* not sent: an earlier message on this connection failed */
	ST_INTERRUPTED,	/* cut short by SIGINT/SIGTERM: not recorded */
};

extern const char *const status_name[];

struct config {
	unsigned int threads;
	unsigned int rounds;
	unsigned int messages;
	unsigned int duration;		/* seconds measured; 0 = rounds mode */
	unsigned int warmup;		/* seconds before them, not measured */
	unsigned int rate;		/* messages/s in total; 0 = closed loop */
	unsigned int connections;	/* event engine (event.c); 0 = a thread each */
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
};

/* The first bytes of every message say who sent it and which one it is. */
struct msg_header {
	uint32_t magic;
	uint32_t thread;
	uint32_t round;
	uint32_t message;
};

/* The two response times of an ok sample, µs; arrival NAN without a stamp. */
struct times_us {
	double rtt, arrival;
};

struct chunk {
	struct chunk *next;
	size_t n, cap;
	struct times_us v[];
};

/* What one message measured, ns (NO_TIME: none); sent and done are
 * CLOCK_MONOTONIC readings at the send and when the echo was complete. */
struct times_ns {
	uint64_t rtt, arrival, lag;
	uint64_t sent, done;
};

struct worker {
	pthread_t tid;
	unsigned int id;
	int out_fd;
	struct msg_header hdr;		/* header of the message in flight */
	unsigned char *rbuf;
	size_t rbuf_size;
	char *out;			/* rows not yet written */
	size_t out_len;
	struct chunk *head, *tail;	/* response times of ok samples */
	uint64_t stamp_ns;		/* last receive stamp, CLOCK_REALTIME */
	uint64_t unstamped;		/* ok samples without a stamp */
	uint64_t clock_steps;		/* stamps dropped: the clock stepped */
	bool stamps_refused;		/* SO_TIMESTAMPING failed */
	int sched_err;			/* SCHED_IDLE refused: its errno */
	int setup_errno;		/* the event engine could not start */
	struct env_cpu cpu0, cpu1;	/* scheduler statistics, start and end */
	bool have_cpu;
	uint64_t begin_ns, end_ns;	/* when this thread ran the load */
	/* Read by the main thread for progress; written only here. */
	uint64_t done;
	uint64_t failed;
	int write_errno;
	uint64_t last_ns;		/* when the last echo completed */
	/* The measured samples' span: the first send, the last completion
	 * (UINT64_MAX and 0 while there is none); the warm-up's samples. */
	uint64_t first_sent_ns, last_done_ns;
	uint64_t warmup_samples;
} __attribute__((aligned(64)));

/* Set up by bench.c before the threads start; read-only after. */
extern struct config cfg;
extern struct sockaddr_storage server_addr;
extern socklen_t server_addrlen;
extern unsigned char *body;		/* shared, read-only message body */
extern size_t hdr_len;			/* min(size, sizeof(struct msg_header)) */
extern uint64_t start_ns;		/* the gate opened, CLOCK_MONOTONIC */
extern uint64_t deadline_ns;		/* --duration mode */
extern uint64_t measure_ns;		/* the warm-up ends: start_ns without one */

/* Between the threads and the main thread. */
extern volatile sig_atomic_t stop;	/* SIGINT/SIGTERM: finish now */
extern unsigned int threads_ready;	/* their scheduling is set */
extern unsigned int threads_finished;

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

/* Records one sample of connection (the raw file's thread column) id:
 * its row, and its times for the statistics. t NULL: never sent. */
void load_record(struct worker *w, unsigned int id, unsigned int round,
		 uint64_t connect_ns, const struct times_ns *t, enum status st);

/* What a socket call's errno means for the sample. */
enum status load_errno_status(int err);

/* The event engine (event.c): this thread's share of --connections. */
void load_run_event(struct worker *w);

/* A client thread (pthread_create's start routine); arg: its worker. */
void *load_thread(void *arg);

/* Lets the threads go (1) or sends them home without a run (-1). */
void load_open_gate(int value);

/* Waits until n threads have finished or CLOCK_MONOTONIC reaches
 * until_ns, whichever comes first; true when they have finished. A
 * finishing thread wakes it at once, so the end of a run is seen within
 * microseconds, not at the next poll. */
bool load_wait_finished(unsigned int n, uint64_t until_ns);

#endif
