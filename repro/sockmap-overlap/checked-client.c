// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * checked-client - THREADS threads, each ROUNDS times: connect to HOST:PORT,
 * send SIZE bytes and read SIZE bytes back (both at once, non-blocking),
 * compare every byte. One line per echo on stdout:
 *
 *   echo thread=T round=R port=P ok
 *   echo thread=T round=R port=P mismatch offset=O repeat_of=S repeat_len=L
 *   echo thread=T round=R port=P mismatch offset=O not_a_repeat
 *   echo thread=T round=R port=P failed reason=...
 *
 * P is the connection's local (client) port, 0 before it has one: the port
 * overlap-trace prints with each old skb, so run.sh can pair them.
 *
 * A message is pseudo-random bytes (seeded per echo), so 64 bytes read at
 * the first mismatch O that equal the message's bytes from S < O on mean
 * the echo sent bytes S..O-1 a second time: a repeat of O - S bytes.
 *
 *   checked-client HOST PORT SIZE THREADS ROUNDS TIMEOUT_S
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROBE 64

static struct sockaddr_in server;
static size_t size;
static int rounds, timeout_s;
static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;

static void fill(unsigned char *b, size_t n, unsigned int seed)
{
	unsigned long long x = 0x9e3779b97f4a7c15ULL * (seed + 1);

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (unsigned char)x;
	}
}

static void report(int t, int r, unsigned int port, const unsigned char *sent,
		   const unsigned char *got)
{
	size_t o = 0, s;

	while (o < size && sent[o] == got[o])
		o++;
	pthread_mutex_lock(&out);
	if (o == size) {
		printf("echo thread=%d round=%d port=%u ok\n", t, r, port);
	} else {
		size_t probe = size - o < PROBE ? size - o : PROBE;

		for (s = 0; s < o; s++)
			if (!memcmp(sent + s, got + o, probe))
				break;
		if (s < o && probe == PROBE)
			printf("echo thread=%d round=%d port=%u mismatch offset=%zu repeat_of=%zu repeat_len=%zu\n",
			       t, r, port, o, s, o - s);
		else
			printf("echo thread=%d round=%d port=%u mismatch offset=%zu not_a_repeat\n",
			       t, r, port, o);
	}
	fflush(stdout);
	pthread_mutex_unlock(&out);
}

static int echo(int t, int r, unsigned char *sent, unsigned char *got)
{
	size_t wrote = 0, read_n = 0;
	time_t end = time(NULL) + timeout_s;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	const char *why = NULL;
	struct sockaddr_in local;
	socklen_t local_len = sizeof(local);
	unsigned int port = 0;

	fill(sent, size, (unsigned int)(t * 100003 + r));
	if (fd < 0 || connect(fd, (struct sockaddr *)&server, sizeof(server))) {
		why = "connect";
		goto fail;
	}
	if (!getsockname(fd, (struct sockaddr *)&local, &local_len))
		port = ntohs(local.sin_port);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (read_n < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;

		if (wrote < size)
			p.events |= POLLOUT;
		if (time(NULL) >= end) {
			why = "timeout";
			goto fail;
		}
		if (poll(&p, 1, 1000) <= 0)
			continue;
		if (p.revents & POLLOUT) {
			k = write(fd, sent + wrote, size - wrote);
			if (k > 0)
				wrote += k;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			k = read(fd, got + read_n, size - read_n);
			if (k == 0 || (k < 0 && errno != EAGAIN)) {
				why = k == 0 ? "closed" : "read";
				goto fail;
			}
			if (k > 0)
				read_n += k;
		}
	}
	close(fd);
	report(t, r, port, sent, got);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	pthread_mutex_lock(&out);
	printf("echo thread=%d round=%d port=%u failed reason=%s read=%zu\n", t, r, port, why, read_n);
	fflush(stdout);
	pthread_mutex_unlock(&out);
	return -1;
}

static void *worker(void *arg)
{
	int t = (int)(long)arg;
	unsigned char *sent = malloc(size), *got = malloc(size);

	for (int r = 0; r < rounds && sent && got; r++)
		echo(t, r, sent, got);
	free(sent);
	free(got);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[256];
	int threads;

	if (argc != 7) {
		fprintf(stderr, "usage: checked-client HOST PORT SIZE THREADS ROUNDS TIMEOUT_S\n");
		return 2;
	}
	server.sin_family = AF_INET;
	if (inet_pton(AF_INET, argv[1], &server.sin_addr) != 1)
		return 2;
	server.sin_port = htons(atoi(argv[2]));
	size = strtoull(argv[3], NULL, 0);
	threads = atoi(argv[4]);
	rounds = atoi(argv[5]);
	timeout_s = atoi(argv[6]);
	if (size < 1 || threads < 1 || threads > 256 || rounds < 1 || timeout_s < 1)
		return 2;
	for (int t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker, (void *)(long)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	return 0;
}
