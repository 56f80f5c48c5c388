/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bench learns from the machine it runs on: descriptor limits, the
 * network sysctls and TIME_WAIT sockets that shape a run, and how much
 * of the CPU its own threads got (the scheduler's per-thread statistics).
 */
#ifndef BENCH_ENV_H
#define BENCH_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

/* Raises RLIMIT_NOFILE's soft limit to the hard one; fills *rl. Returns
 * false when fewer than need descriptors may be open even then. */
bool env_raise_nofile(uint64_t need, struct rlimit *rl);

/* TIME_WAIT sockets now (the "tw" of /proc/net/sockstat), -1 if unknown. */
long env_time_wait_sockets(void);

/* '# key=value' lines for the kernel, host and network sysctls. */
void env_write_metadata(int fd);

/* The calling thread's scheduler statistics (/proc/thread-self/schedstat):
 * time on a CPU and time runnable but waiting for one, in ns. */
struct env_cpu {
	uint64_t run_ns, wait_ns;
};

/* false when the kernel does not keep them (CONFIG_SCHED_INFO=n). */
bool env_thread_cpu(struct env_cpu *c);

/*
 * Who listens on TCP port here: the listening socket's owner's program
 * name, without a trailing "-echo-server" (user-echo-server -> "user"), or
 * "kernel" for a socket no process holds (an in-kernel server). false when
 * nothing here listens on the port.
 */
bool env_listener_name(unsigned int port, char *name, size_t len);

#endif
