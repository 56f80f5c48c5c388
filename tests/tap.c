// SPDX-License-Identifier: GPL-2.0
/* TAP for the C unit tests: see tap.h. */
#include <stdio.h>
#include <string.h>

#include "tap.h"

static int test_no;
static int failures;

void ok(int cond, const char *name)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_no, name);
	if (!cond)
		failures++;
}

/* known: NAME is one of the table's cases. */
static int known(const char *name, const struct tap_case *cases, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, cases[i].name))
			return 1;
	return 0;
}

/* named: CASE is one of the arguments, or there are none (every case). */
static int named(const char *name, int argc, char **argv)
{
	int a;

	for (a = 1; a < argc; a++)
		if (!strcmp(argv[a], name))
			return 1;
	return argc < 2;
}

int tap_run(const char *prog, const struct tap_case *cases, size_t n,
	    int argc, char **argv)
{
	size_t i;
	int a;

	for (a = 1; a < argc; a++) {
		if (known(argv[a], cases, n))
			continue;
		fprintf(stderr, "%s: no case named '%s'. Its cases:\n", prog, argv[a]);
		for (i = 0; i < n; i++)
			fprintf(stderr, "  %s\n", cases[i].name);
		return 2;
	}
	printf("TAP version 13\n");
	for (i = 0; i < n; i++)
		if (named(cases[i].name, argc, argv))
			cases[i].run();
	printf("1..%d\n", test_no);	/* trailing plan */
	return failures ? 1 : 0;
}
