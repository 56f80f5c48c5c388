/* SPDX-License-Identifier: GPL-2.0 */
/* What an echo that differs from its message got wrong (mismatch.c). */
#ifndef BENCH_MISMATCH_H
#define BENCH_MISMATCH_H

#include <stddef.h>
#include "settings.h"

/*
 * The first mismatch of a run, said once on stderr: @len bytes read at
 * offset @off of the echo of the message whose header is @h differ from
 * what was sent. Says from which byte on, and where in the message the
 * bytes read there come from: bytes it already had (a repeat), bytes
 * further on (a gap), or none of its own (or too few were read to say).
 */
void mismatch_report(unsigned int thread, const struct msg_header *h,
		     size_t off, const unsigned char *got, size_t len);

/* That description (without the program's name), or NULL: none so far.
 * Read once the load threads are done. */
const char *mismatch_first(void);

#endif
