/* cgroup v2 limits (tools/sandbox/sandbox_cgroup.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
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
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"

#define CG_MOUNT SB_CGROUP_MOUNT

static int put(const char *dir, const char *file, const char *text)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	return file_put_text(p, text);
}

int sb_cgroup_line(const char *text, char *out, size_t cap)
{
	const char *p = text;

	/* The v2 line is "0::PATH"; v1 lines ("N:ctl:PATH") are skipped. */
	while (p && *p) {
		size_t n = strcspn(p, "\n");

		if (!strncmp(p, "0::/", 4) && n - 3 < cap && !memchr(p, 0, n)) {
			memcpy(out, p + 3, n - 3);
			out[n - 3] = 0;
			/* " (deleted)" follows a removed cgroup: no path of ours. */
			return strstr(out, " (deleted)") ? -ENOENT : 0;
		}
		p = p[n] ? p + n + 1 : NULL;
	}
	return -ENOENT;
}

/* This process's cgroup (v2), relative to the mount: "/" or "/a/b". */
static int own_cgroup(char *out, size_t cap)
{
	char *text = file_read_text("/proc/self/cgroup", PATH_MAX + 64);
	int ret = text ? sb_cgroup_line(text, out, cap) : -ENOENT;

	free(text);
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

/* Whether the cgroup directory @dir lists a process in cgroup.procs. */
static bool has_procs(const char *dir)
{
	char p[PATH_MAX + 16], *text;
	bool any;

	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	text = file_read_text(p, 64);
	any = text && text[0];
	free(text);
	return any;
}

/* The directory mvm/ below our cgroup @own, with memory and pids (and cpu)
 * for children, into @dir. */
static int container(const char *own, char *dir, size_t cap, bool cpu)
{
	const char *ctl = cpu ? "+memory +pids +cpu" : "+memory +pids";
	int ret;

	if (snprintf(dir, cap, "%s%s", CG_MOUNT, strcmp(own, "/") ? own : "") >= (int)cap)
		return -ENAMETOOLONG;
	/* EBUSY where our cgroup holds processes (no internal processes below
	 * the root: an engine's job, a scope; we are one of them), said before
	 * the kernel's own check, which first answers ENOENT for a controller
	 * the job's parent did not pass down (pids, often); EACCES or EROFS
	 * where it is not delegated (sb_cgroup_note says which). */
	if (strcmp(own, "/") && has_procs(dir))
		return -EBUSY;
	ret = enable(dir, ctl);
	if (ret)
		return ret;
	strncat(dir, "/mvm", cap - strlen(dir) - 1);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return enable(dir, ctl);
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

enum sb_cg_place sb_cgroup_place(int err)
{
	switch (err) {
	case 0:
		return SB_CG_OWN;
	case -EBUSY:
		return SB_CG_CALLER_BUSY;
	case -EACCES:
	case -EPERM:
	case -EROFS:
		return SB_CG_NOT_DELEGATED;
	case -ENOENT:
		return SB_CG_NO_V2;
	default:
		return SB_CG_FAILED;
	}
}

void sb_cgroup_note(int err, const char *caller, bool cpu_quota, char *buf, size_t cap)
{
	const char *caps = cpu_quota ? "memory.max, pids.max, cpu.max" : "memory.max, pids.max";

	switch (sb_cgroup_place(err)) {
	case SB_CG_OWN:
		snprintf(buf, cap, "%s", "");
		break;
	case SB_CG_CALLER_BUSY:
		snprintf(buf, cap, "the caller's cgroup %s holds processes itself (a Slurm step, a "
			 "systemd-run --scope, a container): cgroup v2 gives it no child with "
			 "controllers, so the sandbox stays in it and is charged to it, under its "
			 "limits; mvm's own caps (%s) are not set", caller, caps);
		break;
	case SB_CG_NOT_DELEGATED:
		snprintf(buf, cap, "no delegated cgroup subtree: the caller's cgroup %s is not "
			 "writable here (%s), so the sandbox stays in it and is charged to it; mvm's "
			 "own caps (%s) are not set", caller, strerror(-err), caps);
		break;
	case SB_CG_NO_V2:
		snprintf(buf, cap, "no cgroup v2 hierarchy at " CG_MOUNT ": mvm's own caps (%s) "
			 "are not set", caps);
		break;
	default:
		snprintf(buf, cap, "the sandbox's cgroup below %s could not be set up (%s): it "
			 "stays in %s; mvm's own caps (%s) are not set", caller, strerror(-err),
			 caller, caps);
	}
}

/* Set up @dir (CG_MOUNT/.../mvm/NAME, made) and move @helper, then us, into
 * it. On failure nothing moved stays moved: the helper goes back to @from. */
static int fill_and_enter(const char *dir, const char *from, uint64_t guest_mem,
			  const char *const *rw_files, int cpu_quota, pid_t helper)
{
	char v[32], back[PATH_MAX];
	int ret = 0;

	snprintf(v, sizeof(v), "%llu", (unsigned long long)(guest_mem + SB_CGROUP_OVERHEAD));
	/* The disk files' pages are charged to this cgroup; on tmpfs they
	 * cannot be reclaimed, so a cap would stall the guest's disk writes at
	 * guest RAM + overhead, or have the kernel kill the VMM (a guest
	 * writing 512 MiB to `mvm run --disk /tmp/x.qcow2`: fio's QD32 jobs).
	 * There the cap is left at max (reported). */
	if (!sb_cgroup_written_on_tmpfs(rw_files))
		ret = put(dir, "memory.max", v);
	snprintf(v, sizeof(v), "%d", SB_CGROUP_PIDS);
	if (!ret)
		ret = put(dir, "pids.max", v);
	/* cpu.max "QUOTA PERIOD": PCT% of one CPU per 100 ms. */
	snprintf(v, sizeof(v), "%d 100000", cpu_quota * 1000);
	if (!ret && cpu_quota > 0)
		ret = put(dir, "cpu.max", v);
	/* Its network helper is its child, started before: it goes too. */
	snprintf(v, sizeof(v), "%d", (int)helper);
	if (!ret && helper > 0)
		ret = put(dir, "cgroup.procs", v);
	if (ret)
		return ret;
	ret = put(dir, "cgroup.procs", "0");	/* "0": the writer itself */
	if (ret && helper > 0 && snprintf(back, sizeof(back), "%s%s", CG_MOUNT,
					  strcmp(from, "/") ? from : "") < (int)sizeof(back))
		(void)put(back, "cgroup.procs", v);
	return ret;
}

int sb_cgroup_enter(const char *name, uint64_t guest_mem, const char *const *rw_files, int cpu_quota,
		    pid_t helper, struct sb_cg_result *r)
{
	char dir[PATH_MAX];
	int ret;

	memset(r, 0, sizeof(*r));
	ret = own_cgroup(r->caller, sizeof(r->caller));
	/* `mvm gc` removes an empty mvm/ between two of our steps: try again. */
	for (int tries = 0; !ret && tries < 3; tries++) {
		ret = container(r->caller, dir, sizeof(dir) - 64, cpu_quota > 0);
		if (ret)
			break;
		strcat(dir, "/");
		strncat(dir, name, sizeof(dir) - strlen(dir) - 1);
		ret = mkdir(dir, 0755) && errno != EEXIST ? -errno : 0;
		if (ret != -ENOENT)
			break;
	}
	if (!ret) {
		if ((ret = fill_and_enter(dir, r->caller, guest_mem, rw_files, cpu_quota,
					      helper)))
			rmdir(dir);	/* nothing of ours is in it */
	}
	sb_cgroup_note(ret, r->caller[0] ? r->caller : "(unknown)", cpu_quota > 0, r->note,
		       sizeof(r->note));
	if (!ret)
		snprintf(r->own, sizeof(r->own), "%s", dir + strlen(CG_MOUNT));
	return ret;
}

int sb_cgroup_join(pid_t pid)
{
	char p[64], cg[PATH_MAX + 8], mine[PATH_MAX], dir[PATH_MAX];
	char *text;
	int ret;

	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	text = file_read_text(p, sizeof(cg) - 1);
	if (!text)
		return -ESRCH;
	ret = sb_cgroup_line(text, cg, sizeof(cg));
	free(text);
	if (!ret)
		ret = own_cgroup(mine, sizeof(mine));
	if (ret || !strcmp(cg, mine))
		return ret;
	if (snprintf(dir, sizeof(dir), "%s%s", CG_MOUNT, strcmp(cg, "/") ? cg : "") >=
	    (int)sizeof(dir))
		return -ENAMETOOLONG;
	return put(dir, "cgroup.procs", "0");
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

/* NAME's own cgroup directory under CG_MOUNT: the one its VMM recorded
 * (confine.json, checked: it may have been edited), else mvm/NAME below
 * our own cgroup. */
static int sandbox_dir(const char *name, char *dir, size_t cap)
{
	char cg[PATH_MAX];

	if (sb_cgroup_recorded(name, cg, sizeof(cg))) {
		if (own_cgroup(cg, sizeof(cg)))
			return -ENOENT;
		if (!strcmp(cg, "/"))
			cg[0] = 0;
		if (snprintf(cg + strlen(cg), sizeof(cg) - strlen(cg), "/mvm/%s", name) >=
		    (int)(sizeof(cg) - strlen(cg)))
			return -ENAMETOOLONG;
	}
	return snprintf(dir, cap, "%s%s", CG_MOUNT, cg) >= (int)cap ? -ENAMETOOLONG : 0;
}

bool sb_cgroup_oom_killed(const char *name)
{
	char p[PATH_MAX], *text;
	bool killed;

	if (sandbox_dir(name, p, sizeof(p) - 16))
		return false;
	strcat(p, "/memory.events");
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
	char dir[PATH_MAX];

	if (!sandbox_dir(name, dir, sizeof(dir)))
		rmdir(dir);
}
