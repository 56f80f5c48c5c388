/* SPDX-License-Identifier: GPL-2.0 */
/* The suite's command-line conventions in C (bench, the analysis, the
 * servers and fronts): "PROG: what is wrong", "Try 'PROG --help'.", exit
 * status 2. */
#ifndef ECHOLAB_CLI_H
#define ECHOLAB_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* The program's name in every message; main sets it from argv[0]. */
extern const char *prog;
/* -v: logv prints. */
extern bool verbose;

/* "PROG: MESSAGE", "Try 'PROG --help'.", exit status 2. */
void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...);

/* A message on stderr with -v only. */
void __attribute__((format(printf, 1, 2))) logv(const char *fmt, ...);

/*
 * The one number parser: s, decimal, whole, in [min, max], into *v.
 * Returns 0, -EINVAL when s is not such a number (a sign, letters,
 * nothing) or -ERANGE when it is out of [min, max]; *v is set either way
 * where s is a number. For the programs whose messages are their own.
 */
int str_to_num(const char *s, unsigned long min, unsigned long max,
	       unsigned long *v);

/* s as a number in [min, max], or a usage error naming the option. */
unsigned long parse_num(const char *name, const char *s, unsigned long min,
			unsigned long max);

/*
 * getopt_long the suite's way: -h prints usage(stdout) and exits 0; a
 * missing value or an unknown option is a usage error. Returns the
 * program's next option, or -1 after the last. shortopts starts with ':'.
 */
int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts, void (*usage)(FILE *f));

/* A usage error for the first operand left, for programs that take none. */
void cli_no_operands(int argc, char **argv);

#endif
