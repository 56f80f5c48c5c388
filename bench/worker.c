// SPDX-License-Identifier: GPL-2.0
/* The load threads (worker.h): the gate, the engine, the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "worker.h"

unsigned int threads_ready;
static unsigned int threads_finished;

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate;			/* 1: go, -1: abort */
/* threads_finished grows under it; worker_wait_finished sleeps on it. */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond;
static pthread_once_t done_once = PTHREAD_ONCE_INIT;

static void done_cond_init(void);

void *worker_thread(void *arg)
{
	struct sched_param idle = { .sched_priority = 0 };
	struct worker *w = arg;

	/* pid 0: this thread. The server gets the CPUs, we what is left. */
	if (cfg.sched_idle && sched_setscheduler(0, SCHED_IDLE, &idle))
		w->sched_err = errno;
	__atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);

	pthread_mutex_lock(&gate_lock);
	while (!gate)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);

	if (gate > 0) {
		w->have_cpu = env_thread_cpu(&w->cpu0);
		w->begin_ns = now_ns();
		w->engine(w);
		w->end_ns = now_ns();
		w->have_cpu = w->have_cpu && env_thread_cpu(&w->cpu1);
	}
	record_flush(&w->rec);
	pthread_mutex_lock(&done_lock);
	__atomic_add_fetch(&threads_finished, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&done_cond);
	pthread_mutex_unlock(&done_lock);
	return NULL;
}

void worker_open_gate(int value)
{
	pthread_once(&done_once, done_cond_init);
	pthread_mutex_lock(&gate_lock);
	gate = value;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

/* The condition variable times its waits on CLOCK_MONOTONIC, as now_ns. */
static void done_cond_init(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&done_cond, &attr);
	pthread_condattr_destroy(&attr);
}

bool worker_wait_finished(unsigned int n, uint64_t until_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(until_ns / NSEC),
		.tv_nsec = (long)(until_ns % NSEC),
	};
	bool all;

	pthread_once(&done_once, done_cond_init);
	pthread_mutex_lock(&done_lock);
	while (!(all = __atomic_load_n(&threads_finished, __ATOMIC_ACQUIRE) >= n) &&
	       pthread_cond_timedwait(&done_cond, &done_lock, &ts) != ETIMEDOUT)
		;
	all = __atomic_load_n(&threads_finished, __ATOMIC_ACQUIRE) >= n;
	pthread_mutex_unlock(&done_lock);
	return all;
}
