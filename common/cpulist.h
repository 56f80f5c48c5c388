/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU lists, "0-1,3", as taskset -c and run.sh's --cpus write them: bench
 * reads and writes them (--cpus, the raw file's server_cpus), judge reads
 * them back from the raw file.
 */
#ifndef ECHOLAB_CPULIST_H
#define ECHOLAB_CPULIST_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

/* set as a CPU list, "0-1,3". */
void cpu_set_format(const cpu_set_t *set, char *buf, size_t len);

/* A CPU list as taskset -c takes it, "1", "0,2", "2-3", into set; false
 * when it is malformed. */
bool cpu_set_parse(const char *list, cpu_set_t *set);

#endif
