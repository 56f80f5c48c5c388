// SPDX-License-Identifier: GPL-2.0
/*
 * earlysend - a send() that begins before its connection's handshake ends,
 * then one more, over the sk_msg bypass: do the bytes arrive in order?
 *
 *   earlysend PORT
 *
 * Both ends are this process's, on 127.0.0.1:PORT (run it in the bypass's
 * cgroup, sockredir on PORT). The listener's accept queue (backlog 0) is
 * kept full by a first connection, so that the client's SYN is dropped
 * and sent again a second later (the initial RTO). Meanwhile the client,
 * connected without blocking, calls a blocking send() of 8 bytes: it
 * sleeps in the kernel's tcp_sendmsg() until the handshake ends in
 * softirq, which is when sockredir's sock_ops program puts the end into
 * its map, and then it goes on where it slept, through TCP, unseen by the
 * sk_msg program. 100 ms later the client sends 8 bytes more, which the
 * sk_msg program sees. The server's end reads only once both are there,
 * and echoes what it read.
 *
 * Without a rule for it the second message was moved onto the server's
 * bypass queue, which the kernel reads before its TCP receive queue
 * (tcp_bpf_recvmsg()): the server read the second message first. Prints
 *
 *   earlysend: first send() waited N ms for the handshake; server read "..."; echo "..."
 *
 * Exit status 0 when the server read, and the client got back, the 16
 * bytes in order; 1 when not, or on a socket error; 2 on usage; 3 when the
 * handshake could not be held back (the case was not made: the first
 * send() did not wait), which says nothing of the bypass.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PART 8
static const char sent[2 * PART + 1] = "first-8-second-8";

static struct sockaddr_in addr;
static int listener, both_sent[2];
static char server_read[2 * PART + 1];
static const char *server_error;

static void die(const char *what)
{
	fprintf(stderr, "earlysend: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Reads LEN bytes, or fewer at EOF or after the socket's timeout. */
static ssize_t read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = recv(fd, buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got ? (ssize_t)got : n;
		got += n;
	}
	return got;
}

static void set_timeout(int fd, int seconds)
{
	struct timeval tv = { seconds, 0 };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		die("SO_RCVTIMEO");
}

/* The server: room in the queue once the client's SYN was dropped, then
 * the client's connection, read once both messages are there, echoed.
 */
static void *serve(void *unused)
{
	int filler, conn;
	char c;

	(void)unused;
	sleep_ms(300);
	filler = accept(listener, NULL, NULL);
	conn = filler < 0 ? -1 : accept(listener, NULL, NULL);
	if (conn < 0) {
		server_error = "accept";
		return NULL;
	}
	set_timeout(conn, 10);
	if (read(both_sent[0], &c, 1) != 1) {
		server_error = "the client's signal";
		return NULL;
	}
	sleep_ms(100);
	if (read_all(conn, server_read, 2 * PART) != 2 * PART)
		server_error = "recv";
	else if (send(conn, server_read, 2 * PART, 0) != 2 * PART)
		server_error = "send";
	close(conn);
	close(filler);
	return NULL;
}

static int tcp_state(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		die("TCP_INFO");
	return ti.tcpi_state;
}

/* Connections in a listener's accept queue. */
static unsigned int queued(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		die("TCP_INFO");
	return ti.tcpi_unacked;
}

/* The client's end, connecting without blocking, its SYN dropped. */
static int connect_held_back(void)
{
	int fd, filler, one = 1;

	listener = socket(AF_INET, SOCK_STREAM, 0);
	if (listener < 0)
		die("socket");
	setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)))
		die("bind (is the port free?)");
	if (listen(listener, 0))
		die("listen");
	filler = socket(AF_INET, SOCK_STREAM, 0);
	if (filler < 0 || connect(filler, (struct sockaddr *)&addr, sizeof(addr)))
		die("connect (the connection that fills the queue)");
	/* Its handshake's last ACK may still be on its way: wait (2 s at
	 * most) until it is in the queue, which a listener's TCP_INFO gives
	 * as tcpi_unacked.
	 */
	for (int i = 0; i < 200 && queued(listener) < 1; i++)
		sleep_ms(10);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) && errno != EINPROGRESS)
		die("connect");
	sleep_ms(50);
	if (tcp_state(fd) != TCP_SYN_SENT) {
		fprintf(stderr, "earlysend: the handshake ended at once (state %d): "
			"the full accept queue did not hold it back\n", tcp_state(fd));
		exit(3);
	}
	if (fcntl(fd, F_SETFL, 0))
		die("fcntl");
	set_timeout(fd, 10);
	return fd;
}

int main(int argc, char **argv)
{
	char echo[2 * PART + 1] = "";
	pthread_t server;
	double t0, waited;
	long port;
	int fd;

	port = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	if (port < 1 || port > 65535) {
		fprintf(stderr, "usage: earlysend PORT\n");
		return 2;
	}
	addr.sin_family = AF_INET;
	addr.sin_port = htons(port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = connect_held_back();
	if (pipe(both_sent) || pthread_create(&server, NULL, serve, NULL))
		die("pipe or thread");
	t0 = now_ms();
	if (send(fd, sent, PART, 0) != PART)
		die("send (the first message)");
	waited = now_ms() - t0;
	sleep_ms(100);
	if (send(fd, sent + PART, PART, 0) != PART)
		die("send (the second message)");
	if (write(both_sent[1], "x", 1) != 1)
		die("write");
	if (read_all(fd, echo, 2 * PART) < 0)
		fprintf(stderr, "earlysend: recv (the echo): %s\n", strerror(errno));
	pthread_join(server, NULL);
	if (server_error) {
		fprintf(stderr, "earlysend: the server's end: %s failed\n", server_error);
		return 1;
	}
	printf("earlysend: first send() waited %.0f ms for the handshake; server read \"%s\"; echo \"%s\"\n",
	       waited, server_read, echo);
	if (waited < 500) {
		fprintf(stderr, "earlysend: the first send() did not wait for the handshake: the case was not made\n");
		return 3;
	}
	return strcmp(server_read, sent) || strcmp(echo, sent) ? 1 : 0;
}
