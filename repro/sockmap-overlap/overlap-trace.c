// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * overlap-trace - loads trace.bpf.c (a kprobe on sk_psock_verdict_recv),
 * waits SECONDS or a SIGINT/SIGTERM, then prints what it counted:
 *
 *   trace skbs=N conns=N old_skbs=N old_bytes=N gap_skbs=N
 *   trace old_lengths=L,L,...   (the first ones, in order)
 *   trace old port=P len=L      (the same ones: client port, old bytes)
 *
 *   overlap-trace SECONDS
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "trace.h"
#include "trace.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	unsigned long long v[T_MAX] = { 0 };
	struct trace_bpf *skel;
	time_t end;

	if (argc != 2) {
		fprintf(stderr, "usage: overlap-trace SECONDS\n");
		return 2;
	}
	end = time(NULL) + atoi(argv[1]);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	skel = trace_bpf__open_and_load();
	if (!skel || trace_bpf__attach(skel)) {
		fprintf(stderr, "overlap-trace: cannot load or attach the kprobe\n");
		return 1;
	}
	fprintf(stderr, "overlap-trace: attached\n");
	while (!stop && time(NULL) < end)
		usleep(100000);
	for (__u32 k = 0; k < T_MAX; k++)
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.trace_stats), &k, &v[k]);
	printf("trace skbs=%llu conns=%llu old_skbs=%llu old_bytes=%llu gap_skbs=%llu\n",
	       v[T_SKBS], v[T_CONNS], v[T_OLD], v[T_OLD_BYTES], v[T_GAP]);
	printf("trace old_lengths=");
	for (__u32 i = 0; i < v[T_OLD] && i < TRACE_SAMPLES; i++) {
		struct trace_sample s = { 0 };

		bpf_map_lookup_elem(bpf_map__fd(skel->maps.trace_samples), &i, &s);
		printf("%s%u", i ? "," : "", s.len);
	}
	printf("\n");
	for (__u32 i = 0; i < v[T_OLD] && i < TRACE_SAMPLES; i++) {
		struct trace_sample s = { 0 };

		bpf_map_lookup_elem(bpf_map__fd(skel->maps.trace_samples), &i, &s);
		printf("trace old port=%u len=%u\n", s.port, s.len);
	}
	trace_bpf__destroy(skel);
	return 0;
}
