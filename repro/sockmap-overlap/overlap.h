/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* overlap.h - what overlap.bpf.c and overlap-echo.c share. */
#ifndef OVERLAP_H
#define OVERLAP_H

/* Connections the echo holds at once: one per sockmap slot. */
#define OVERLAP_SLOTS 64

/* overlap_stats's slots: skbs redirected, skbs passed (FIN, failures). */
enum { STAT_REDIRECTED, STAT_PASSED, STAT_MAX };

#endif
