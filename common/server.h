/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the userspace echo servers share (user-echo, uring-echo): their
 * command-line conventions and their listening sockets.
 */
#ifndef ECHOLAB_SERVER_H
#define ECHOLAB_SERVER_H

#include <stdbool.h>

/* The program's name in every message; main sets it from argv[0]. */
extern const char *prog;
/* -v: logv prints. */
extern bool verbose;

/* "PROG: MESSAGE", "Try 'PROG --help'.", exit status 2. */
void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...);

/* A message on stderr with -v only. */
void __attribute__((format(printf, 1, 2))) logv(const char *fmt, ...);

/* s as a number in [min, max], or a usage error naming the option. */
unsigned long parse_num(const char *name, const char *s, unsigned long min,
			unsigned long max);

/*
 * SO_REUSEPORT would let a server join a group with another one already on
 * the port and silently share its traffic. A plain bind first tells
 * whether anybody else holds the port: 0 or -errno.
 */
int check_port_free(unsigned int port);

/* A SO_REUSEADDR + SO_REUSEPORT listener (extra_type: SOCK_NONBLOCK or 0);
 * the fd or -errno. */
int open_listener(unsigned int port, int backlog, int extra_type);

/* What to do about a bind or listen error. */
const char *bind_hint(int err);

#endif
