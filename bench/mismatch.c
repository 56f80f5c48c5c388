// SPDX-License-Identifier: GPL-2.0
/*
 * A mismatch's description. The body is xorshift bytes, so 16 of them
 * found at one place of the message are found nowhere else: where the
 * bytes that went wrong match tells a repeat (a server or a kernel that
 * sent some bytes twice) from a gap (lost bytes) and from bytes that are
 * not the message's at all (another message's header, or garbage).
 */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include "cli.h"
#include "mismatch.h"

#define PROBE_LEN	16	/* bytes looked for elsewhere in the message */

static int told;
static char first[256];	/* its description, for the raw file */

/* The byte at offset @pos of the message whose header is @h. */
static unsigned char sent_at(const struct msg_header *h, size_t pos)
{
	return pos < cfg.hdr_len ? ((const unsigned char *)h)[pos] :
				   cfg.body[pos - cfg.hdr_len];
}

/* Where in the body @n bytes at @p are, or -1. */
static ssize_t body_find(const unsigned char *p, size_t n)
{
	size_t body = cfg.size - cfg.hdr_len, q;

	for (q = 0; n <= body && q <= body - n; q++)
		if (cfg.body[q] == p[0] && !memcmp(cfg.body + q, p, n))
			return (ssize_t)q;
	return -1;
}

void mismatch_report(unsigned int thread, const struct msg_header *h,
		     size_t off, const unsigned char *got, size_t len)
{
	size_t at, i, n;
	ssize_t q;
	int k;

	if (__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		return;
	for (i = 0; i < len && off + i < cfg.size && got[i] == sent_at(h, off + i); i++)
		;
	at = off + i;
	k = snprintf(first, sizeof(first), "thread %u: the echo of a %zu-byte message differs from byte %zu on: ",
		     thread, cfg.size, at);
	n = len - i < PROBE_LEN ? len - i : PROBE_LEN;
	q = n == PROBE_LEN ? body_find(got + i, n) : -1;
	if (n < PROBE_LEN)
		snprintf(first + k, sizeof(first) - k, "%zu bytes read there, too few to say whose", n);
	else if (q < 0)
		snprintf(first + k, sizeof(first) - k, "the bytes read there are not from the message");
	else if ((q += (ssize_t)cfg.hdr_len) < (ssize_t)at)
		snprintf(first + k, sizeof(first) - k, "the bytes read there are its bytes from %zd on, a repeat of %zd bytes",
			 q, (ssize_t)at - q);
	else
		snprintf(first + k, sizeof(first) - k, "the bytes read there are its bytes from %zd on, a gap of %zd bytes",
			 q, q - (ssize_t)at);
	fprintf(stderr, "%s: %s (only the first mismatch is told)\n", prog, first);
}

const char *mismatch_first(void)
{
	return __atomic_load_n(&told, __ATOMIC_ACQUIRE) ? first : NULL;
}
