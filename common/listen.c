// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "listen.h"

struct in_addr parse_addr(const char *name, const char *s)
{
	struct in_addr a;

	/* inet_pton takes exactly four decimal parts, each at most 255. */
	if (inet_pton(AF_INET, s, &a) != 1)
		usage_error("%s: '%s' is not an IPv4 address (a dotted quad such as %s or 0.0.0.0)",
			    name, s, DEFAULT_ADDR);
	return a;
}

void warn_if_any_addr(struct in_addr addr)
{
	if (addr.s_addr == htonl(INADDR_ANY))
		fprintf(stderr, "%s: warning: listening on 0.0.0.0 (every interface): any host that can reach this machine can connect\n",
			prog);
}

static struct sockaddr_in sockaddr_of(struct in_addr addr, unsigned int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((unsigned short)port),
		.sin_addr = addr,
	};

	return sa;
}

int check_port_free(struct in_addr addr, unsigned int port)
{
	struct sockaddr_in sa = sockaddr_of(addr, port);
	int one = 1, err = 0, fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = -errno;
	close(fd);
	return err;
}

static void set_buf(int fd, int force_opt, int opt, int bytes,
		    const char *name)
{
	if (!bytes)
		return;
	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) &&
	    setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)))
		fprintf(stderr, "%s: setting %s to %d: %s\n", prog, name, bytes,
			strerror(errno));
}

int open_listener(struct in_addr addr, unsigned int port, int backlog,
		  int extra_type)
{
	return open_listener_bufs(addr, port, backlog, extra_type, 0, 0);
}

int open_listener_bufs(struct in_addr addr, unsigned int port, int backlog,
		       int extra_type, int sndbuf, int rcvbuf)
{
	struct sockaddr_in sa = sockaddr_of(addr, port);
	int one = 1, fd, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | extra_type, 0);
	if (fd < 0)
		return -errno;
	set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, sndbuf, "SO_SNDBUF");
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, rcvbuf, "SO_RCVBUF");
	/* REUSEADDR: restart at once over TIME_WAIT; REUSEPORT: workers. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, backlog)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

const char *bind_hint(int err)
{
	switch (err) {
	case EADDRINUSE:
		return "another program holds the port: stop it (./run.sh stop) or pick another with --port";
	case EACCES:
		return "ports below 1024 need root (or CAP_NET_BIND_SERVICE)";
	case EADDRNOTAVAIL:
		return "no interface of this machine has that address: pick one 'ip -4 addr' lists with --addr";
	default:
		return "check the port and the system limits";
	}
}
