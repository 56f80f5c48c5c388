/* SPDX-License-Identifier: GPL-2.0 */
/* The listening sockets of the servers that open one (user-echo, uring-echo,
 * ebpf-echo). */
#ifndef ECHOLAB_LISTEN_H
#define ECHOLAB_LISTEN_H

#include <netinet/in.h>

/* Where a server listens unless --addr says otherwise: loopback only. */
#define DEFAULT_ADDR	"127.0.0.1"

/* s as an IPv4 dotted quad, or a usage error naming the option. */
struct in_addr parse_addr(const char *name, const char *s);

/* The warning a listener on 0.0.0.0 gets, on stderr; nothing otherwise. */
void warn_if_any_addr(struct in_addr addr);

/*
 * SO_REUSEPORT would let a server join a group with another one already on
 * the port and silently share its traffic. A plain bind first tells
 * whether anybody else holds the port: 0 or -errno.
 */
int check_port_free(struct in_addr addr, unsigned int port);

/* A SO_REUSEADDR + SO_REUSEPORT listener on addr:port (extra_type:
 * SOCK_NONBLOCK or 0); the fd or -errno. */
int open_listener(struct in_addr addr, unsigned int port, int backlog,
		  int extra_type);

/*
 * The same, with SO_SNDBUF and SO_RCVBUF set before listen(), so that the
 * sockets it accepts inherit them and the window scale fits (bytes; 0 for
 * the kernel's autotuning). *BUFFORCE first: as root, net.core.[rw]mem_max
 * do not cap them. A size that cannot be set is reported, not fatal.
 */
int open_listener_bufs(struct in_addr addr, unsigned int port, int backlog,
		       int extra_type, int sndbuf, int rcvbuf);

/* What to do about a bind or listen error. */
const char *bind_hint(int err);

#endif
