/* SPDX-License-Identifier: GPL-2.0 */
/* The listening sockets of the userspace servers (user-echo, uring-echo). */
#ifndef ECHOLAB_LISTEN_H
#define ECHOLAB_LISTEN_H

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
