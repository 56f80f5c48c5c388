/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A cgroup v2 directory of the suite's own, for the BPF loaders.
 *
 * sock_ops programs attach to a cgroup and see the sockets of the processes
 * in it (and its descendants). Every BPF loader makes a child cgroup of its
 * own and attaches there, never to the root: the machine's own connections
 * must not run through our programs.
 */
#ifndef ECHOLAB_CGROUP_H
#define ECHOLAB_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct own_cgroup {
	const char *prog;	/* for messages: "ebpf-echo-server: ..." */
	char parent[PATH_MAX];	/* the cgroup we create ours in */
	char path[PATH_MAX];	/* ours: <parent>/<name>; "" when not made */
	char orig[PATH_MAX];	/* where this process started, to go back */
	int fd;			/* O_RDONLY of path, for attaching; -1 */
	bool joined;		/* this process moved into it */
};

/*
 * Picks the parent directory: @root when given, else the first cgroup2
 * mount in /proc/self/mountinfo. Prints what failed and what to do.
 */
int cgroup_setup(struct own_cgroup *cg, const char *prog, const char *root);

/*
 * Creates <parent>/<name> and opens it. A stale empty one (left by kill -9)
 * is replaced; one that still holds processes is -EBUSY, reported with a pid.
 */
int cgroup_create(struct own_cgroup *cg, const char *name);

/* Moves @pid (0: this process) into DIR. */
int cgroup_join(const char *dir, pid_t pid);

/* Moves this process into ours, saying what failed. */
int cgroup_enter(struct own_cgroup *cg);

/* Moves every process still in ours to @to (0 on success). */
int cgroup_evict(struct own_cgroup *cg, const char *to);

/*
 * Takes this process back where it started (when it had joined), moves any
 * other process out to the parent, saying so, and removes the directory.
 */
void cgroup_remove(struct own_cgroup *cg);

#endif
