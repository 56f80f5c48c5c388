// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "listen.h"

static struct sockaddr_in any_addr(unsigned int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((unsigned short)port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};

	return sa;
}

int check_port_free(unsigned int port)
{
	struct sockaddr_in sa = any_addr(port);
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

int open_listener(unsigned int port, int backlog, int extra_type)
{
	struct sockaddr_in sa = any_addr(port);
	int one = 1, fd, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | extra_type, 0);
	if (fd < 0)
		return -errno;
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
	default:
		return "check the port and the system limits";
	}
}
