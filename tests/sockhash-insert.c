// SPDX-License-Identifier: GPL-2.0
/*
 * sockhash-insert - which TCP states a SOCKHASH takes a socket in: the
 * kernel's rule the proxy's sockmap path lives by (a client whose FIN came
 * before the insertion is relayed by the process, proxy/README.md).
 *
 *   sockhash-insert
 *
 * Makes a SOCKHASH with the bpf(2) system call itself, a connection over
 * loopback, and tries to insert the accepted end twice: while it is
 * established (then takes it out again), and after the client's FIN has
 * put it in CLOSE_WAIT (the state is read back with TCP_INFO before each
 * try). Prints
 *
 *   established=ok|ERRNO-NAME close_wait=ok|ERRNO-NAME
 *
 * Exit status 0 when both tries were made (whatever the kernel answered:
 * the caller judges that), 1 when the experiment itself failed (no root,
 * no SOCKHASH, a socket call), 2 on usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "sockhash-insert: %s: %s\n", what, strerror(errno));
	return 1;
}

static int map_create(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_SOCKHASH;
	a.key_size = sizeof(uint32_t);
	a.value_size = sizeof(uint32_t);
	a.max_entries = 4;
	return syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
}

/* "ok", or the name of the errno the kernel refused the insertion with. */
static const char *insert(int map, uint32_t key, int fd)
{
	uint32_t value = fd;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&value;
	a.flags = BPF_ANY;
	if (!syscall(SYS_bpf, BPF_MAP_UPDATE_ELEM, &a, sizeof(a)))
		return "ok";
	return strerrorname_np(errno) ? strerrorname_np(errno) : "unknown-errno";
}

static void delete(int map, uint32_t key)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (uintptr_t)&key;
	syscall(SYS_bpf, BPF_MAP_DELETE_ELEM, &a, sizeof(a));
}

static int tcp_state(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ? -1 : ti.tcpi_state;
}

/* Waits up to 2 s for FD to reach STATE (the FIN's arrival). */
static int wait_state(int fd, int state)
{
	struct timespec ms = { .tv_nsec = 1000000 };
	int i;

	for (i = 0; i < 2000; i++) {
		if (tcp_state(fd) == state)
			return 0;
		nanosleep(&ms, NULL);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	const char *established, *close_wait;
	int map, lfd, cfd, afd;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: sockhash-insert (no arguments; needs root)\n");
		return 2;
	}
	map = map_create();
	if (map < 0)
		return die("creating a SOCKHASH (root? a kernel with CONFIG_BPF_STREAM_PARSER?)");
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len))
		return die("a listener on loopback");
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&sa, sizeof(sa)))
		return die("connecting to it");
	afd = accept(lfd, NULL, NULL);
	if (afd < 0)
		return die("accept");
	if (tcp_state(afd) != TCP_ESTABLISHED) {
		fprintf(stderr, "sockhash-insert: the accepted socket is in state %d, not established\n",
			tcp_state(afd));
		return 1;
	}
	established = insert(map, 1, afd);
	delete(map, 1);
	if (shutdown(cfd, SHUT_WR))
		return die("shutdown of the client's writing");
	if (wait_state(afd, TCP_CLOSE_WAIT)) {
		fprintf(stderr, "sockhash-insert: no CLOSE_WAIT within 2 s after the client's FIN (state %d)\n",
			tcp_state(afd));
		return 1;
	}
	close_wait = insert(map, 2, afd);
	printf("established=%s close_wait=%s\n", established, close_wait);
	return 0;
}
