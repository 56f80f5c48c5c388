// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "server.h"

bool env_raise_nofile(uint64_t need, struct rlimit *rl)
{
	return !raise_nofile_limit(0, rl) && rl->rlim_cur >= need;
}

long env_time_wait_sockets(void)
{
	char line[256];
	long tw = -1;
	FILE *f = fopen("/proc/net/sockstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " tw ");

		if (!strncmp(line, "TCP:", 4) && p)
			tw = strtol(p + 4, NULL, 10);
	}
	fclose(f);
	return tw;
}

static void read_sysctl(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	if (fgets(buf, (int)len, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		for (char *p = buf; *p; p++)
			if (*p == '\t')
				*p = '-';
	}
	fclose(f);
}

void env_write_metadata(int fd)
{
	static const struct { const char *key, *path; } sysctls[] = {
		{ "somaxconn", "/proc/sys/net/core/somaxconn" },
		{ "tcp_max_syn_backlog", "/proc/sys/net/ipv4/tcp_max_syn_backlog" },
		{ "ip_local_port_range", "/proc/sys/net/ipv4/ip_local_port_range" },
		{ "tcp_tw_reuse", "/proc/sys/net/ipv4/tcp_tw_reuse" },
		{ "tcp_max_tw_buckets", "/proc/sys/net/ipv4/tcp_max_tw_buckets" },
	};
	char date[32], host[256] = "unknown", val[64];
	struct utsname u;
	time_t t = time(NULL);
	unsigned int i;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	dprintf(fd, "# kernel=%s\n# date=%s\n# hostname=%s\n# cores=%ld\n",
		u.release, date, host, sysconf(_SC_NPROCESSORS_ONLN));
	for (i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		read_sysctl(sysctls[i].path, val, sizeof(val));
		dprintf(fd, "# %s=%s\n", sysctls[i].key, val);
	}
	dprintf(fd, "# time_wait=%ld\n", env_time_wait_sockets());
}

bool env_thread_cpu(struct env_cpu *c)
{
	char buf[128];
	ssize_t n;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return sscanf(buf, "%" SCNu64 " %" SCNu64, &c->run_ns, &c->wait_ns) == 2;
}

/* The inode of a socket listening on port in a /proc/net/tcp{,6} table;
 * 0 for none (a kernel socket has inode 0 too: *found says it exists). */
static unsigned long listen_inode(const char *table, unsigned int port,
				  bool *found)
{
	unsigned long inode = 0, ino;
	unsigned int lport, state;
	char line[512];
	FILE *f = fopen(table, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		/* sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*s %*s %*s %*u %*u %lu",
			   &lport, &state, &ino) != 3)
			continue;
		if (lport == port && state == 0x0a) {	/* TCP_LISTEN */
			*found = true;
			if (ino) {
				inode = ino;
				break;
			}
		}
	}
	fclose(f);
	return inode;
}

/* The pid of the process holding socket inode, 0 if none. */
static pid_t socket_owner(unsigned long inode)
{
	char want[64], path[16 + 2 * 256], link[64];
	struct dirent *p, *fd;
	pid_t owner = 0;
	DIR *procs, *fds;
	ssize_t n;

	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	procs = opendir("/proc");
	if (!procs)
		return 0;
	while (!owner && (p = readdir(procs))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fd = readdir(fds))) {
			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name,
				 fd->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (!strcmp(link, want)) {
				owner = (pid_t)atoi(p->d_name);
				break;
			}
		}
		closedir(fds);
	}
	closedir(procs);
	return owner;
}

bool env_listener_name(unsigned int port, char *name, size_t len)
{
	static const char suffix[] = "-echo-server";
	char path[64], exe[PATH_MAX], *base;
	unsigned long inode;
	bool found = false;
	size_t n;
	pid_t pid;

	inode = listen_inode("/proc/net/tcp", port, &found);
	if (!inode)
		inode = listen_inode("/proc/net/tcp6", port, &found);
	if (!found)
		return false;
	pid = inode ? socket_owner(inode) : 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = pid ? (size_t)readlink(path, exe, sizeof(exe) - 1) : 0;
	if (!pid || n == (size_t)-1 || n == 0) {
		snprintf(name, len, "kernel");
		return true;
	}
	exe[n] = '\0';
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	n = strlen(base);
	if (n > sizeof(suffix) - 1 && !strcmp(base + n - (sizeof(suffix) - 1), suffix))
		base[n - (sizeof(suffix) - 1)] = '\0';
	snprintf(name, len, "%s", base);
	return true;
}
