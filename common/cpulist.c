// SPDX-License-Identifier: GPL-2.0
/* CPU lists as taskset -c writes them (cpulist.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpulist.h"

void cpu_set_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;
	int i = 0, n;

	buf[0] = '\0';
	while (i < CPU_SETSIZE) {
		int lo;

		if (!CPU_ISSET(i, set)) {
			i++;
			continue;
		}
		for (lo = i; i + 1 < CPU_SETSIZE && CPU_ISSET(i + 1, set); i++)
			;
		n = lo == i ? snprintf(buf + off, len - off, "%s%d",
				       off ? "," : "", lo)
			    : snprintf(buf + off, len - off, "%s%d-%d",
				       off ? "," : "", lo, i);
		if (n < 0 || (size_t)n >= len - off)
			return;
		off += (size_t)n;
		i++;
	}
}

/* A CPU list as taskset -c takes it, "1", "0,2", "2-3", into set; false
 * when it is malformed. */
bool cpu_set_parse(const char *list, cpu_set_t *set)
{
	const char *p = list;
	char *end;

	CPU_ZERO(set);
	do {
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*p))
			return false;
		lo = hi = strtoul(p, &end, 10);
		if (*end == '-') {
			p = end + 1;
			if (!isdigit((unsigned char)*p))
				return false;
			hi = strtoul(p, &end, 10);
		}
		if (lo > hi || hi >= CPU_SETSIZE)
			return false;
		for (; lo <= hi; lo++)
			CPU_SET(lo, set);
		p = end;
	} while (*p++ == ',');
	return !p[-1];
}
