// SPDX-License-Identifier: GPL-2.0
/* Runs the host disturbed; disturbed.h has the rules and the data behind
 * them. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "disturbed.h"
#include "rawfile.h"

static const char *const side_name[NSIDES] = { "server", "client" };

void disturbance_init(struct disturbance *d)
{
	int i;

	d->window_s = d->user_hz = d->echoes = d->cpu_us_per_echo = NAN;
	for (i = 0; i < NSIDES; i++) {
		d->steal_s[i] = d->negative_s[i] = NAN;
		d->cpus[i] = 1;
	}
}

void disturbance_meta(struct disturbance *d, const char *key,
		      const char *value)
{
	cpu_set_t set;
	int i;

	if (!strcmp(key, "window_s"))
		d->window_s = raw_number(value);
	else if (!strcmp(key, "user_hz"))
		d->user_hz = raw_number(value);
	else if (!strcmp(key, "cpu_echoes"))
		d->echoes = raw_number(value);
	else if (!strcmp(key, "server_cpu_us_per_echo"))
		d->cpu_us_per_echo = raw_number(value);
	for (i = 0; i < NSIDES; i++) {
		size_t n = strlen(side_name[i]);

		if (strncmp(key, side_name[i], n) || key[n] != '_')
			continue;
		if (!strcmp(key + n, "_steal_s"))
			d->steal_s[i] = raw_number(value);
		else if (!strcmp(key + n, "_busy_negative_s"))
			d->negative_s[i] = raw_number(value);
		else if (!strcmp(key + n, "_cpus"))
			d->cpus[i] = cpu_set_parse(value, &set) &&
				     CPU_COUNT(&set) ? CPU_COUNT(&set) : 1;
	}
}

/* Appends one reason to why, "; " after another. */
static void add(char *why, size_t len, const char *fmt, ...)
{
	size_t off = strlen(why);
	va_list ap;

	if (off && off + 2 < len) {
		strcpy(why + off, "; ");
		off += 2;
	}
	if (off >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(why + off, len - off, fmt, ap);
	va_end(ap);
}

bool disturbance_found(const struct disturbance *d, size_t ok, char *why,
		       size_t len)
{
	double hz = d->user_hz > 0 ? d->user_hz : 100;
	double echoes = d->echoes >= 0 ? d->echoes : (double)ok;
	int i;

	why[0] = '\0';
	for (i = 0; i < NSIDES; i++) {
		double capacity = d->window_s * d->cpus[i];

		if (capacity > 0 && d->steal_s[i] > STEAL_BOUND * capacity)
			add(why, len, "%s steal %.1f%% of the window (%.2f s)",
			    side_name[i], 100 * d->steal_s[i] / capacity,
			    d->steal_s[i]);
	}
	/* Over a tick per CPU: the rounding of the counts at both ends. */
	for (i = 0; i < NSIDES; i++)
		if (d->negative_s[i] > d->cpus[i] / hz)
			add(why, len, "%s busy %.2f s below zero",
			    side_name[i], d->negative_s[i]);
	if (echoes > 0 && d->cpu_us_per_echo < CPU_FLOOR_US)
		add(why, len, "server CPU %.2f us per echo with %.0f echoes",
		    d->cpu_us_per_echo, echoes);
	return why[0] != '\0';
}
