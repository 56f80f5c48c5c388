// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * overlap-echo - loads overlap.bpf.c, listens on PORT, puts every accepted
 * socket into the sockmap (slot fd % OVERLAP_SLOTS, found by the client's
 * port) and never reads: the verdict program echoes everything. It polls
 * each socket for hangup only, prints the verdict's counts every second
 * on stderr, and exits after SECONDS (or on SIGINT/SIGTERM).
 *
 *   overlap-echo PORT SECONDS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "overlap.h"
#include "overlap.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void stats(struct overlap_bpf *skel, const char *when)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long total[STAT_MAX] = { 0 };
	unsigned long long v[256];

	for (__u32 k = 0; k < STAT_MAX && ncpu > 0 && ncpu <= 256; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.overlap_stats), &k, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			total[k] += v[c];
	}
	fprintf(stderr, "overlap-echo: %s redirected_skbs=%llu passed_skbs=%llu\n",
		when, total[STAT_REDIRECTED], total[STAT_PASSED]);
}

int main(int argc, char **argv)
{
	struct pollfd pfd[OVERLAP_SLOTS + 1];
	__u32 port_of[OVERLAP_SLOTS + 1] = { 0 };
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct overlap_bpf *skel;
	int lfd, one = 1, map, slots, n = 1;
	time_t end, last = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: overlap-echo PORT SECONDS\n");
		return 2;
	}
	a.sin_port = htons(atoi(argv[1]));
	end = time(NULL) + atoi(argv[2]);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	skel = overlap_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "overlap-echo: loading the BPF object failed\n");
		return 1;
	}
	map = bpf_map__fd(skel->maps.overlap_socks);
	slots = bpf_map__fd(skel->maps.overlap_slot);
	if (bpf_prog_attach(bpf_program__fd(skel->progs.overlap_verdict), map,
			    BPF_SK_SKB_STREAM_VERDICT, 0)) {
		perror("overlap-echo: attaching the verdict");
		return 1;
	}
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 128)) {
		perror("overlap-echo: listen");
		return 1;
	}
	pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	fprintf(stderr, "overlap-echo: listening on %s\n", argv[1]);

	while (!stop && time(NULL) < end) {
		if (poll(pfd, n, 200) < 0 && errno != EINTR)
			break;
		if (time(NULL) != last) {
			last = time(NULL);
			stats(skel, "tick");
		}
		/* A hangup: out of the map, closed, its slot freed. */
		for (int i = 1; i < n; i++) {
			if (!(pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
				continue;
			__u32 slot = pfd[i].fd % OVERLAP_SLOTS;

			bpf_map_delete_elem(map, &slot);
			bpf_map_delete_elem(slots, &port_of[i]);
			close(pfd[i].fd);
			pfd[i] = pfd[n - 1];
			port_of[i] = port_of[n - 1];
			n--;
			i--;
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		int fd = accept(lfd, (struct sockaddr *)&peer, &len);

		if (fd < 0)
			continue;
		if (n > OVERLAP_SLOTS || fd >= 4 * OVERLAP_SLOTS) {
			fprintf(stderr, "overlap-echo: too many connections\n");
			close(fd);
			continue;
		}
		__u32 slot = fd % OVERLAP_SLOTS, port = ntohs(peer.sin_port);
		__u64 val = fd;

		/* The slot first: the verdict looks it up for the first skb. */
		if (bpf_map_update_elem(slots, &port, &slot, BPF_ANY) ||
		    bpf_map_update_elem(map, &slot, &val, BPF_ANY)) {
			perror("overlap-echo: into the sockmap");
			close(fd);
			continue;
		}
		pfd[n] = (struct pollfd){ .fd = fd, .events = POLLRDHUP };
		port_of[n++] = port;
	}
	stats(skel, "end");
	overlap_bpf__destroy(skel);
	return 0;
}
