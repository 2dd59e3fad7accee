/* cgroup v2 limits (tools/sandbox/sandbox_cgroup.h). */
#include <errno.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <sys/vfs.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "tools/sandbox/sandbox_cgroup.h"

#define CG_MOUNT "/sys/fs/cgroup"

static int put(const char *dir, const char *file, const char *text)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	return file_put_text(p, text);
}

/* This process's cgroup (v2), relative to the mount: "/" or "/a/b". */
static int own_cgroup(char *out, size_t cap)
{
	char buf[PATH_MAX + 8];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int ret = -ENOENT;

	while (f && fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "0::", 3)) {
			buf[strcspn(buf, "\n")] = 0;
			snprintf(out, cap, "%s", buf + 3);
			ret = 0;
		}
	if (f)
		fclose(f);
	return ret;
}

bool sb_cgroup_has_controllers(const char *text, const char *ctl)
{
	char want[64], *save = NULL;
	bool all = text != NULL;

	snprintf(want, sizeof(want), "%s", ctl);
	for (char *w = strtok_r(want, " ", &save); w && all; w = strtok_r(NULL, " ", &save)) {
		size_t n = strlen(w + 1);

		all = false;	/* a whole word of @text: "cpu" is not "cpuset" */
		for (const char *t = text; !all && (t = strstr(t, w + 1)); t += n)
			all = (t == text || t[-1] == ' ') && (t[n] == ' ' || t[n] == '\n' || !t[n]);
	}
	return all;
}

/* @ctl's controllers ("+memory +pids") for @dir's children. Written only
 * when one is missing: on Linux 6.1 every write to cgroup.subtree_control,
 * a no-op too, waits for an RCU grace period (cgroup_update_dfl_csses takes
 * the threadgroup rwsem for writing), and this runs on every start. */
static int enable(const char *dir, const char *ctl)
{
	char p[PATH_MAX], *text;
	bool all;

	if (snprintf(p, sizeof(p), "%s/cgroup.subtree_control", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	text = file_read_text(p, 1024);
	all = sb_cgroup_has_controllers(text, ctl);
	free(text);
	return all ? 0 : file_put_text(p, ctl);
}

/* The directory mvm/ below our cgroup, with memory and pids for children. */
static int container(char *dir, size_t cap, bool cpu)
{
	char own[PATH_MAX];
	int ret = own_cgroup(own, sizeof(own));

	if (ret)
		return ret;
	if (snprintf(dir, cap, "%s%s", CG_MOUNT, strcmp(own, "/") ? own : "") >= (int)cap)
		return -ENAMETOOLONG;
	/* Fails with EBUSY where our cgroup holds processes (no internal
	 * processes below the root) and EACCES where it is not delegated. */
	ret = enable(dir, cpu ? "+memory +pids +cpu" : "+memory +pids");
	if (ret)
		return ret;
	strncat(dir, "/mvm", cap - strlen(dir) - 1);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return enable(dir, cpu ? "+memory +pids +cpu" : "+memory +pids");
}

/* @path (a file or directory) lies on tmpfs or ramfs. */
static bool on_tmpfs(const char *path)
{
	struct statfs f;

	return !statfs(path, &f) && (f.f_type == TMPFS_MAGIC || f.f_type == RAMFS_MAGIC);
}

bool sb_cgroup_written_on_tmpfs(const char *const *rw_files)
{
	if (on_tmpfs("."))
		return true;
	for (int i = 0; rw_files && rw_files[i]; i++)
		if (on_tmpfs(rw_files[i]))
			return true;
	return false;
}

int sb_cgroup_enter(const char *name, uint64_t guest_mem, const char *const *rw_files, int cpu_quota,
		    pid_t helper, char *path, size_t cap)
{
	char dir[PATH_MAX], v[32];
	int ret = container(dir, sizeof(dir) - 64, cpu_quota > 0);

	if (!ret) {
		strcat(dir, "/");
		strncat(dir, name, sizeof(dir) - strlen(dir) - 1);
		if (mkdir(dir, 0755) && errno != EEXIST)
			ret = -errno;
	}
	snprintf(v, sizeof(v), "%llu", (unsigned long long)(guest_mem + SB_CGROUP_OVERHEAD));
	/* The disk files' pages are charged to this cgroup; on tmpfs they
	 * cannot be reclaimed, so a cap would stall the guest's disk writes at
	 * guest RAM + overhead, or have the kernel kill the VMM (a guest
	 * writing 512 MiB to `mvm run --disk /tmp/x.qcow2`: fio's QD32 jobs).
	 * There the cap is left at max (reported). */
	if (!ret && !sb_cgroup_written_on_tmpfs(rw_files))
		ret = put(dir, "memory.max", v);
	snprintf(v, sizeof(v), "%d", SB_CGROUP_PIDS);
	if (!ret)
		ret = put(dir, "pids.max", v);
	/* cpu.max "QUOTA PERIOD": PCT% of one CPU per 100 ms. */
	snprintf(v, sizeof(v), "%d 100000", cpu_quota * 1000);
	if (!ret && cpu_quota > 0)
		ret = put(dir, "cpu.max", v);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	if (!ret)
		ret = put(dir, "cgroup.procs", v);
	/* Its network helper is its child, started before: it goes too. */
	snprintf(v, sizeof(v), "%d", (int)helper);
	if (!ret && helper > 0)
		ret = put(dir, "cgroup.procs", v);
	if (ret) {
		snprintf(path, cap, "%s", ret == -EBUSY ? "our cgroup holds other processes" :
			 ret == -EACCES || ret == -EROFS || ret == -EPERM ?
			 "no delegated cgroup subtree" : strerror(-ret));
		return ret;
	}
	snprintf(path, cap, "%s", dir + strlen(CG_MOUNT));
	return 0;
}

long sb_cgroup_oom_kills(const char *text)
{
	const char *p = text;

	/* "key value" lines; the key must start its line ("oom_group_kill"
	 * is another counter). */
	while (p && *p) {
		if (!strncmp(p, "oom_kill ", 9))
			return strtol(p + 9, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

bool sb_cgroup_oom_killed(const char *name)
{
	char p[PATH_MAX], own[PATH_MAX], *text;
	bool killed;

	if (own_cgroup(own, sizeof(own)) ||
	    snprintf(p, sizeof(p), "%s%s/mvm/%s/memory.events", CG_MOUNT,
		     strcmp(own, "/") ? own : "", name) >= (int)sizeof(p))
		return false;
	text = file_read_text(p, 4096);
	killed = text && sb_cgroup_oom_kills(text) > 0;
	free(text);
	return killed;
}

bool sb_cgroup_oom_message(const char *name, const char *when, char *buf, size_t len)
{
	if (!sb_cgroup_oom_killed(name))
		return false;
	snprintf(buf, len, "the kernel's OOM killer ended the VMM %s: its cgroup's memory.max "
		 "(guest RAM + %llu MiB) was reached", when, SB_CGROUP_OVERHEAD >> 20);
	return true;
}

void sb_cgroup_remove(const char *name)
{
	char dir[PATH_MAX], own[PATH_MAX];

	if (own_cgroup(own, sizeof(own)))
		return;
	snprintf(dir, sizeof(dir), "%s%s/mvm/%s", CG_MOUNT, strcmp(own, "/") ? own : "", name);
	rmdir(dir);
}
