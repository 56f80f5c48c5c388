// SPDX-License-Identifier: GPL-2.0
/* The raw file's writer and reader; the format is described in rawfile.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rawfile.h"

static char *put_uint(char *p, uint64_t v)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (i)
		*p++ = tmp[--i];
	return p;
}

/* ns as microseconds with one decimal, or '-'. No printf: this runs once
 * per message on every client thread. */
static char *put_us(char *p, uint64_t ns)
{
	uint64_t tenths;

	if (ns == RAW_NO_TIME) {
		*p++ = '-';
		return p;
	}
	tenths = (ns + 50) / 100;
	p = put_uint(p, tenths / 10);
	*p++ = '.';
	*p++ = (char)('0' + tenths % 10);
	return p;
}

char *raw_put_row(char *p, const struct raw_sample *s)
{
	const char *name = s->status;

	p = put_uint(p, s->thread);
	*p++ = '\t';
	p = put_uint(p, s->round);
	*p++ = '\t';
	p = put_us(p, s->connect_ns);
	*p++ = '\t';
	p = put_us(p, s->rtt_ns);
	*p++ = '\t';
	p = put_us(p, s->arrival_ns);
	*p++ = '\t';
	p = put_us(p, s->lag_ns);
	*p++ = '\t';
	p = put_us(p, s->sent_ns);
	*p++ = '\t';
	while (*name)
		*p++ = *name++;
	*p++ = '\n';
	return p;
}

/* ---- reading ---------------------------------------------------------- */

int raw_open(struct raw_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	/* zlib reads a plain file as it is: committed results are gzipped. */
	r->f = gzopen(path, "r");
	if (!r->f)
		return -1;
	/* Until a columns line says otherwise: the first format. */
	r->col_thread = 0;
	r->col_connect = 2;
	r->col_rtt = 3;
	r->col_arrival = -1;
	r->col_lag = -1;
	r->col_sent = -1;
	r->col_status = 4;
	r->ncols = 5;
	return 0;
}

void raw_close(struct raw_reader *r)
{
	if (r->f)
		gzclose(r->f);
	free(r->line);
	r->f = NULL;
	r->line = NULL;
}

static int set_columns(struct raw_reader *r, char *names)
{
	char *name;
	int i = 0;

	r->col_thread = r->col_connect = r->col_rtt = -1;
	r->col_arrival = r->col_lag = r->col_status = r->col_sent = -1;
	while ((name = strsep(&names, "\t"))) {
		if (!strcmp(name, "thread"))
			r->col_thread = i;
		else if (!strcmp(name, "connect_us"))
			r->col_connect = i;
		else if (!strcmp(name, "rtt_us"))
			r->col_rtt = i;
		else if (!strcmp(name, "arrival_us"))
			r->col_arrival = i;
		else if (!strcmp(name, "lag_us"))
			r->col_lag = i;
		else if (!strcmp(name, "status"))
			r->col_status = i;
		else if (!strcmp(name, "sent_us"))
			r->col_sent = i;
		i++;
	}
	r->ncols = i;
	if (r->col_thread < 0 || r->col_rtt < 0 || r->col_status < 0) {
		snprintf(r->err, sizeof(r->err),
			 "'%s': the columns line lacks thread, rtt_us or status",
			 r->path);
		return -1;
	}
	return 0;
}

static double field_us(char **cols, int col)
{
	char *end;
	double v;

	if (col < 0 || !strcmp(cols[col], "-"))
		return NAN;
	v = strtod(cols[col], &end);
	return end == cols[col] ? NAN : v;
}

/* getline() for a gzFile: the line's length, 0 at the end, -1 on an
 * error (r->err says which; a truncated .gz is one). */
static ssize_t read_line(struct raw_reader *r)
{
	const char *why;
	size_t len = 0;
	int err;

	for (;;) {
		if (r->cap - len < 2) {
			size_t ncap = r->cap ? 2 * r->cap : 256;
			char *nl = realloc(r->line, ncap);

			if (!nl) {
				why = strerror(ENOMEM);
				goto fail;
			}
			r->line = nl;
			r->cap = ncap;
		}
		if (!gzgets(r->f, r->line + len, (int)(r->cap - len))) {
			why = gzerror(r->f, &err);
			if (err == Z_OK)
				return (ssize_t)len;
			if (err == Z_ERRNO)
				why = strerror(errno);
			goto fail;
		}
		len += strlen(r->line + len);
		if (len && r->line[len - 1] == '\n')
			return (ssize_t)len;
	}
fail:
	snprintf(r->err, sizeof(r->err), "reading '%s': %s", r->path, why);
	return -1;
}

int raw_next(struct raw_reader *r, struct raw_entry *e)
{
	char *cols[16], *p;
	ssize_t got;
	int c;

	while ((got = read_line(r)) > 0) {
		r->line[strcspn(r->line, "\n")] = '\0';
		if (!r->line[0])
			continue;
		if (r->line[0] == '#') {
			char *eq;

			p = r->line + 1;
			p += strspn(p, " ");
			eq = strchr(p, '=');
			if (!eq)
				continue;	/* a comment */
			*eq = '\0';
			if (!strcmp(p, "columns") && set_columns(r, eq + 1))
				return -1;
			e->kind = RAW_META;
			e->key = p;
			e->value = eq + 1;
			return 1;
		}
		p = r->line;
		for (c = 0; c < 16 && p; c++)
			cols[c] = strsep(&p, "\t");
		if (c != r->ncols) {
			snprintf(r->err, sizeof(r->err),
				 "'%s': not a bench raw file (row '%.60s' has %d columns, not %d)",
				 r->path, r->line, c, r->ncols);
			return -1;
		}
		e->kind = RAW_ROW;
		e->thread = (unsigned int)strtoul(cols[r->col_thread], NULL, 10);
		e->connect_us = field_us(cols, r->col_connect);
		e->rtt_us = field_us(cols, r->col_rtt);
		e->arrival_us = field_us(cols, r->col_arrival);
		e->lag_us = field_us(cols, r->col_lag);
		e->sent_us = field_us(cols, r->col_sent);
		e->status = cols[r->col_status];
		return 1;
	}
	return got < 0 ? -1 : 0;
}

double raw_number(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return NAN;
	return v;
}
