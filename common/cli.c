// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

bool verbose;

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(2);
}

void logv(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

int str_to_num(const char *s, unsigned long min, unsigned long max,
	       unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	/* strtoul takes a sign, and wraps a minus round: neither is a count. */
	if (*s == '-' || *s == '+' || errno || end == s || *end)
		return -EINVAL;
	return *v < min || *v > max ? -ERANGE : 0;
}

unsigned long parse_num(const char *name, const char *s, unsigned long min,
			unsigned long max)
{
	unsigned long v;
	int err = str_to_num(s, min, max, &v);

	if (err == -EINVAL)
		usage_error("%s: '%s' is not a number", name, s);
	if (err)
		usage_error("%s: %lu is out of range [%lu, %lu]", name, v,
			    min, max);
	return v;
}

int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts, void (*usage)(FILE *f))
{
	int c;

	opterr = 0;	/* the messages are ours */
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	switch (c) {
	case 'h':
		usage(stdout);
		exit(0);
	case ':':
		usage_error("option '%s' needs a value", argv[optind - 1]);
	case '?':
		usage_error("unknown option '%s'", argv[optind - 1]);
	}
	return c;
}

void cli_no_operands(int argc, char **argv)
{
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}
