// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "env.h"

bool env_raise_nofile(uint64_t need, struct rlimit *rl)
{
	getrlimit(RLIMIT_NOFILE, rl);
	if (rl->rlim_cur < rl->rlim_max) {
		rl->rlim_cur = rl->rlim_max;
		setrlimit(RLIMIT_NOFILE, rl);
		getrlimit(RLIMIT_NOFILE, rl);
	}
	return rl->rlim_cur >= need;
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
