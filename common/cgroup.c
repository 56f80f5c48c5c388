// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A cgroup v2 directory of the suite's own; see cgroup.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include "cgroup.h"

/* Undo the octal escapes (\040 for a space...) of /proc/self/mountinfo. */
static void unescape_mount_path(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* First cgroup2 mount point in /proc/self/mountinfo, -ENOENT if none. */
static int find_cgroup2_mount(char *buf, size_t size)
{
	char line[4096], mnt[PATH_MAX], fstype[64];
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* id parent maj:min root MOUNTPOINT opts [optional...] - FSTYPE ... */
		char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		unescape_mount_path(mnt);
		if ((size_t)snprintf(buf, size, "%s", mnt) >= size)
			continue;
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

static bool is_cgroup2_dir(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == CGROUP2_SUPER_MAGIC;
}

static int write_file(const char *path, const char *text)
{
	ssize_t len = strlen(text), n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n != len)
		err = n < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

int cgroup_join(const char *dir, pid_t pid)
{
	char path[PATH_MAX + 16], text[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(text, sizeof(text), "%d\n", pid ? pid : getpid());
	return write_file(path, text);
}

/* A pid listed in DIR/cgroup.procs, or 0 when there is none. */
static long cgroup_first_pid(const char *dir)
{
	char path[PATH_MAX + 16];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

/* Remember the cgroup we started in: "0::/path" of /proc/self/cgroup. */
static void remember_own_cgroup(struct own_cgroup *cg, const char *mount)
{
	char line[PATH_MAX + 8];
	FILE *f = fopen("/proc/self/cgroup", "re");

	cg->orig[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if ((size_t)snprintf(cg->orig, sizeof(cg->orig), "%s%s", mount,
				     strcmp(line + 3, "/") ? line + 3 : "") >=
		    sizeof(cg->orig))
			cg->orig[0] = '\0';
		break;
	}
	fclose(f);
}

int cgroup_setup(struct own_cgroup *cg, const char *prog, const char *root)
{
	char mount[PATH_MAX];
	int err;

	memset(cg, 0, sizeof(*cg));
	cg->prog = prog;
	cg->fd = -1;
	err = find_cgroup2_mount(mount, sizeof(mount));
	if (!err)
		remember_own_cgroup(cg, mount);
	if (root) {
		snprintf(cg->parent, sizeof(cg->parent), "%s", root);
	} else if (!err) {
		snprintf(cg->parent, sizeof(cg->parent), "%s", mount);
	} else {
		fprintf(stderr, "%s: no cgroup v2 mount in /proc/self/mountinfo: "
			"sock_ops attaches to a cgroup v2 directory; mount one "
			"(mkdir -p /sys/fs/cgroup/unified && mount -t cgroup2 none "
			"/sys/fs/cgroup/unified) or pass --cgroup-root DIR\n", prog);
		return -ENOENT;
	}
	if (!is_cgroup2_dir(cg->parent)) {
		fprintf(stderr, "%s: %s is not a cgroup v2 directory: pass "
			"--cgroup-root with a directory of a cgroup2 mount (see: "
			"grep cgroup2 /proc/self/mountinfo)\n", prog, cg->parent);
		return -ENOTDIR;
	}
	return 0;
}

/* Programs attached to DIR's sock_ops hook; 0 when none or unknown. */
static __u32 sock_ops_attached(const char *dir)
{
	__u32 count = 0;
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (bpf_prog_query(fd, BPF_CGROUP_SOCK_OPS, 0, NULL, NULL, &count))
		count = 0;
	close(fd);
	return count;
}

int cgroup_create(struct own_cgroup *cg, const char *name)
{
	long pid;
	int err;

	if ((size_t)snprintf(cg->path, sizeof(cg->path), "%s/%s", cg->parent,
			     name) >= sizeof(cg->path)) {
		fprintf(stderr, "%s: cgroup path too long: %s\n", cg->prog,
			cg->parent);
		cg->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (mkdir(cg->path, 0755) && errno == EEXIST) {
		/* A live loader's cgroup may be empty, but its link keeps
		 * sock_ops attached; a killed loader's link is gone.
		 */
		if (sock_ops_attached(cg->path)) {
			fprintf(stderr, "%s: cgroup %s has sock_ops attached: "
				"another instance serves this port; stop it or "
				"choose another port with -p\n", cg->prog, cg->path);
			cg->path[0] = '\0';
			return -EBUSY;
		}
		/* Left over from a killed loader: rmdir works once it is
		 * empty.
		 */
		if (rmdir(cg->path) && errno == EBUSY) {
			pid = cgroup_first_pid(cg->path);
			if (pid)
				fprintf(stderr, "%s: cgroup %s still holds pid "
					"%ld (another instance on this port?); "
					"stop it or choose another port with -p\n",
					cg->prog, cg->path, pid);
			else
				fprintf(stderr, "%s: cannot remove the stale "
					"cgroup %s (it has child cgroups); remove "
					"them with rmdir\n", cg->prog, cg->path);
			cg->path[0] = '\0';
			return -EBUSY;
		}
		mkdir(cg->path, 0755);
	}
	cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0) {
		err = -errno;
		fprintf(stderr, "%s: cannot create cgroup %s: %s; check that %s "
			"is a writable cgroup v2 directory\n", cg->prog, cg->path,
			strerror(-err), cg->parent);
		cg->path[0] = '\0';
		return err;
	}
	return 0;
}

int cgroup_enter(struct own_cgroup *cg)
{
	int err = cgroup_join(cg->path, 0);

	if (err)
		fprintf(stderr, "%s: cannot move into cgroup %s: %s\n",
			cg->prog, cg->path, strerror(-err));
	cg->joined = !err;
	return err;
}

int cgroup_evict(struct own_cgroup *cg, const char *to)
{
	long pid;
	int err, tries;

	/* A process may fork while we move it: go until the list is empty. */
	for (tries = 0; tries < 1000; tries++) {
		pid = cgroup_first_pid(cg->path);
		if (!pid)
			return 0;
		err = cgroup_join(to, pid);
		if (err && err != -ESRCH)
			return err;
	}
	return -EBUSY;
}

void cgroup_remove(struct own_cgroup *cg)
{
	long pid;

	if (cg->fd >= 0)
		close(cg->fd);
	cg->fd = -1;
	if (!cg->path[0])
		return;
	/* Ourselves first: back where we came from, or to the parent. */
	if (cg->joined && (!cg->orig[0] || cgroup_join(cg->orig, 0)) &&
	    cgroup_join(cg->parent, 0))
		fprintf(stderr, "%s: cannot leave cgroup %s: %s\n", cg->prog,
			cg->path, strerror(errno));
	pid = cgroup_first_pid(cg->path);
	if (pid) {
		fprintf(stderr, "%s: pid %ld (and maybe others) still in %s: "
			"moving them to %s\n", cg->prog, pid, cg->path, cg->parent);
		if (cgroup_evict(cg, cg->parent))
			fprintf(stderr, "%s: cannot move them: %s\n", cg->prog,
				strerror(errno));
	}
	if (rmdir(cg->path))
		fprintf(stderr, "%s: cannot remove cgroup %s: %s; remove it with "
			"'rmdir %s'\n", cg->prog, cg->path, strerror(errno),
			cg->path);
	cg->path[0] = '\0';
}
