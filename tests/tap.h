/* SPDX-License-Identifier: GPL-2.0 */
/* TAP for the C unit tests (stats-test, interval-test): named results and
 * cases picked by name, as the .t files have them (tests/lib.sh). */
#ifndef ECHOLAB_TAP_H
#define ECHOLAB_TAP_H

#include <stddef.h>

struct tap_case {
	const char *name;
	void (*run)(void);
};

/* One result: "ok N - NAME", or "not ok N - NAME" when cond is 0. */
void ok(int cond, const char *name);

/*
 * The cases argv names (every case when it names none), in the table's
 * order, then the trailing plan. A name the table lacks: the cases listed
 * on stderr and exit status 2 before any runs. Returns main's status: 1
 * when a result failed.
 */
int tap_run(const char *prog, const struct tap_case *cases, size_t n,
	    int argc, char **argv);

#endif
