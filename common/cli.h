/* SPDX-License-Identifier: GPL-2.0 */
/* The suite's command-line conventions in C (bench, user-echo, uring-echo):
 * "PROG: what is wrong", "Try 'PROG --help'.", exit status 2. */
#ifndef ECHOLAB_CLI_H
#define ECHOLAB_CLI_H

#include <stdbool.h>

/* The program's name in every message; main sets it from argv[0]. */
extern const char *prog;
/* -v: logv prints. */
extern bool verbose;

/* "PROG: MESSAGE", "Try 'PROG --help'.", exit status 2. */
void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...);

/* A message on stderr with -v only. */
void __attribute__((format(printf, 1, 2))) logv(const char *fmt, ...);

/* s as a number in [min, max], or a usage error naming the option. */
unsigned long parse_num(const char *name, const char *s, unsigned long min,
			unsigned long max);

#endif
