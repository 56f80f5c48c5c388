// SPDX-License-Identifier: GPL-2.0
/*
 * neverread - a client that sends as fast as the kernel takes it and never
 * reads: how much does the server's side let it push?
 *
 *   neverread PORT SECONDS CAP_BYTES HOLD_SECONDS
 *
 * Connects to 127.0.0.1:PORT, then for SECONDS writes 64 KiB at a time
 * into a non-blocking socket, waiting in poll() whenever the kernel takes
 * nothing more. It stops early once CAP_BYTES were accepted or
 * MemAvailable (/proc/meminfo) fell by more than CAP_BYTES, so that a
 * server without flow control cannot hurt the machine. Then it prints
 *
 *   neverread sent=N memavail_drop_kb=N elapsed_ms=N stopped=time|cap|memory
 *
 * (memavail_drop_kb: the largest fall of MemAvailable seen while sending
 * and 200 ms after, against the value before connecting, less what the
 * processes' AnonPages and Shmem grew meanwhile: see
 * kernel_available_kb()), holds the connection open, still
 * unread, for HOLD_SECONDS (the caller serves another client meanwhile),
 * and closes it. Exit status 0 when it ran, 1 on a socket error, 2 on
 * usage.
 *
 *   neverread slow PORT BYTES
 *
 * The other side of it: a client that reads, but late. One thread sends
 * BYTES of a pattern where every byte depends on its offset, 4 MiB at a
 * time, each once the echo of the one before is all back; the other
 * reads in bursts of 1 MiB with 300 ms pauses between them, so that a
 * server with flow control has to hold back and then resume, over and
 * over, and checks every byte it gets. Prints
 *
 *   slow sent=N echoed=N pauses=N
 *
 * Exit status 0 when all BYTES came back in order, 1 when not (the
 * first wrong offset is printed), 2 on usage.
 */
#include <pthread.h>
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 << 10)

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/*
 * MemAvailable less the processes' own memory (AnonPages + Shmem), in
 * KiB, -1 when it cannot be read. Its fall is what the kernel took; a
 * process elsewhere on the machine that allocates at the same time
 * takes MemAvailable down but its AnonPages up by as much.
 */
static long long kernel_available_kb(void)
{
	char line[256];
	long long kb, avail = -1, anon = -1, shmem = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			avail = kb;
		else if (sscanf(line, "AnonPages: %lld kB", &kb) == 1)
			anon = kb;
		else if (sscanf(line, "Shmem: %lld kB", &kb) == 1)
			shmem = kb;
	}
	fclose(f);
	if (avail < 0 || anon < 0 || shmem < 0)
		return -1;
	return avail + anon + shmem;
}

static long long parse(const char *s, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -1;
	return v;
}

/* The pattern: a byte that depends on its offset, so that a chunk echoed
 * out of place shows.
 */
static unsigned char pattern(long long off)
{
	return (unsigned char)(off * 131 + (off >> 16) * 7 + (off >> 24));
}

struct slow {
	int fd;
	long long bytes;
	long long sent;
	volatile long long got;		/* the reader's progress */
	int err;
};

/* Each chunk is sent whole, then the sender waits for all of its echo:
 * the server catches up completely between chunks, and resumes.
 */
#define SLOW_CHUNK	(4LL << 20)

static void *slow_sender(void *arg)
{
	static unsigned char out[CHUNK];
	struct slow *s = arg;
	long long off = 0;
	ssize_t n;
	int i;

	while (off < s->bytes) {
		int len = s->bytes - off < CHUNK ? (int)(s->bytes - off) : CHUNK;

		if (off && off % SLOW_CHUNK == 0)
			while (__atomic_load_n(&s->got, __ATOMIC_RELAXED) < off)
				usleep(1000);

		for (i = 0; i < len; i++)
			out[i] = pattern(off + i);
		n = send(s->fd, out, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			s->err = errno;
			break;
		}
		off += n;
		s->sent = off;
	}
	return NULL;
}

static int slow_reader(long long port, long long bytes)
{
	static unsigned char in[CHUNK];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 10 };
	struct slow s = { .bytes = bytes };
	long long got = 0, burst = 0, pauses = 0, i;
	pthread_t t;
	ssize_t n;

	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s.fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s.fd < 0 || connect(s.fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("neverread slow: connect");
		return 1;
	}
	/* A stuck echo is a failure, never a hang. */
	setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (pthread_create(&t, NULL, slow_sender, &s)) {
		fprintf(stderr, "neverread slow: pthread_create failed\n");
		return 1;
	}
	while (got < bytes) {
		n = recv(s.fd, in, sizeof(in), 0);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			fprintf(stderr, "neverread slow: %s after %lld of %lld bytes\n",
				n ? strerror(errno) : "EOF", got, bytes);
			break;
		}
		for (i = 0; i < n; i++) {
			if (in[i] != pattern(got + i)) {
				fprintf(stderr, "neverread slow: byte %lld is wrong "
					"(%u, want %u)\n", got + i, in[i],
					pattern(got + i));
				pthread_join(t, NULL);
				return 1;
			}
		}
		got += n;
		__atomic_store_n(&s.got, got, __ATOMIC_RELAXED);
		burst += n;
		if (burst >= (1 << 20)) {
			burst = 0;
			pauses++;
			usleep(300 * 1000);
		}
	}
	shutdown(s.fd, SHUT_WR);
	pthread_join(t, NULL);
	printf("slow sent=%lld echoed=%lld pauses=%lld\n", s.sent, got, pauses);
	close(s.fd);
	return got == bytes && !s.err ? 0 : 1;
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long long port, secs, cap, hold, sent = 0, mem0, mem, drop = 0;
	long long t0, deadline, next_look = 0;
	const char *stopped = "time";
	struct pollfd pfd;
	int fd;
	ssize_t n;

	if (argc == 4 && !strcmp(argv[1], "slow")) {
		port = parse(argv[2], 65535);
		cap = parse(argv[3], 1LL << 40);
		if (port <= 0 || cap <= 0) {
			fprintf(stderr, "usage: neverread slow PORT BYTES\n");
			return 2;
		}
		return slow_reader(port, cap);
	}
	if (argc != 5 || (port = parse(argv[1], 65535)) <= 0 ||
	    (secs = parse(argv[2], 3600)) < 0 || (cap = parse(argv[3], 1LL << 40)) <= 0 ||
	    (hold = parse(argv[4], 3600)) < 0) {
		fprintf(stderr, "usage: neverread PORT SECONDS CAP_BYTES HOLD_SECONDS\n");
		return 2;
	}
	memset(buf, 'n', sizeof(buf));
	mem0 = kernel_available_kb();
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		perror("neverread: socket");
		return 1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
		perror("neverread: connect");
		return 1;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, 5000) != 1 || (pfd.revents & (POLLERR | POLLHUP))) {
		fprintf(stderr, "neverread: connect to port %lld failed\n", port);
		return 1;
	}

	t0 = now_ms();
	deadline = t0 + secs * 1000;
	while (now_ms() < deadline) {
		n = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (n > 0) {
			sent += n;
		} else if (n < 0 && errno == EAGAIN) {
			pfd.revents = 0;
			poll(&pfd, 1, 50);
		} else if (n < 0 && errno != EINTR) {
			perror("neverread: send");
			return 1;
		}
		if (now_ms() >= next_look) {	/* every 10 ms: cheap enough */
			next_look = now_ms() + 10;
			mem = kernel_available_kb();
			if (mem0 > 0 && mem > 0 && mem0 - mem > drop)
				drop = mem0 - mem;
		}
		if (sent >= cap) {
			stopped = "cap";
			break;
		}
		if (drop * 1024 > cap) {
			stopped = "memory";
			break;
		}
	}
	/* What the kernel does with the last writes shows a moment later. */
	usleep(200 * 1000);
	mem = kernel_available_kb();
	if (mem0 > 0 && mem > 0 && mem0 - mem > drop)
		drop = mem0 - mem;
	printf("neverread sent=%lld memavail_drop_kb=%lld elapsed_ms=%lld stopped=%s\n",
	       sent, drop, now_ms() - t0, stopped);
	fflush(stdout);
	sleep(hold);
	close(fd);
	return 0;
}
