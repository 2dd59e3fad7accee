/* `mvm gc`: reaping the sandboxes whose VMM is gone (tools/sandbox/sandbox_gc.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/fs_util.h"
#include "common/self_exe.h"
#include "devices/net_helper.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"
#include "tools/sandbox/sandbox_gc.h"

bool sb_gc_may_kill(enum sb_gc_kind k, const struct sb_proc_facts *f)
{
	(void)k;	/* the same rule for both; args_match differs by kind */
	return f->alive && f->same_uid && !f->exe_other && f->args_match && !f->parent_is_mvm;
}

/* A small /proc file of @pid ("stat", "status", "cmdline"), NUL-terminated. */
static ssize_t proc_read(pid_t pid, const char *file, char *buf, size_t cap)
{
	char p[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, file);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* The state letter and parent of @pid from /proc/PID/stat; false if gone. */
static bool proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char buf[512], *rp;
	int pp = 0;

	if (proc_read(pid, "stat", buf, sizeof(buf)) <= 0 || !(rp = strrchr(buf, ')')) ||
	    sscanf(rp + 1, " %c %d", state, &pp) != 2)
		return false;
	*ppid = (pid_t)pp;
	return true;
}

/* Whether @pid's argv[0] names mvm ("mvm", ".../mvm") and, if @verb, its
 * argv[1] is @verb. */
static bool runs_mvm(pid_t pid, const char *verb)
{
	char buf[256], *base;
	ssize_t n;

	if (pid <= 1 || (n = proc_read(pid, "cmdline", buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[n + 1] = 0;	/* argv[1] is "" when absent */
	base = strrchr(buf, '/');
	return !strcmp(base ? base + 1 : buf, "mvm") && (!verb || !strcmp(buf + strlen(buf) + 1, verb));
}

/* Whether /proc/PID/exe is readable and another file than @want. */
static bool exe_other(pid_t pid, const char *want)
{
	char p[64];
	struct stat a, b;

	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	if (stat(p, &a))
		return false;	/* hidden (not dumpable) or gone: the other facts decide */
	return stat(want, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

static void facts(pid_t pid, enum sb_gc_kind k, const char *name, struct sb_proc_facts *f)
{
	char status[2048], exe[PATH_MAX], state = 0;
	const char *uid;
	pid_t ppid = 0;

	memset(f, 0, sizeof(*f));
	if (pid <= 1 || !proc_stat(pid, &state, &ppid) || state == 'Z' || state == 'X')
		return;
	f->alive = true;
	f->parent_is_mvm = runs_mvm(ppid, NULL);
	if (proc_read(pid, "status", status, sizeof(status)) > 0 &&
	    (uid = strstr(status, "\nUid:\t")))
		f->same_uid = strtol(uid + 6, NULL, 10) == (long)getuid();
	if (k == SB_GC_RELAY) {
		f->args_match = sb_pid_is(pid, "relay", name);
		f->exe_other = readlink("/proc/self/exe", exe, sizeof(exe) - 1) > 0 &&
			       exe_other(pid, "/proc/self/exe");
	} else {
		f->args_match = !strncmp(status, "Name:\t" NET_HELPER_EXE "\n",
					 strlen("Name:\t" NET_HELPER_EXE "\n"));
		if (!self_exe_dir(exe, sizeof(exe) - 16)) {
			strcat(exe, "/" NET_HELPER_EXE);
			f->exe_other = exe_other(pid, exe);
		}
	}
}

/* The number @key of NAME's state file @file (edited, maybe: regular,
 * capped, no link followed); 0 if none. */
static pid_t recorded_pid(const char *name, const char *file, const char *key)
{
	char p[PATH_MAX], *text = NULL;
	size_t len;
	cJSON *o;
	double v;

	if (sb_path(name, file, p, sizeof(p)) || file_read_regular(p, 64 << 10, &text, &len))
		return 0;
	o = cJSON_Parse(text);
	free(text);
	v = cJSON_GetNumberValue(cJSON_GetObjectItem(o, key));
	cJSON_Delete(o);
	return v > 1 && v < 1 << 30 ? (pid_t)v : 0;
}

bool sb_gc_run_alive(const char *name)
{
	char *end;
	long pid;

	if (strncmp(name, "run-", 4))
		return false;
	pid = strtol(name + 4, &end, 10);
	return !*end && pid > 1 && pid < 1 << 30 && runs_mvm((pid_t)pid, "run");
}

/* End NAME's leftover @k named in @file's @key, if it is one; appends to @line. */
static void end_leftover(const char *name, enum sb_gc_kind k, const char *file, const char *key,
			 bool dry_run, char *line, size_t cap)
{
	pid_t pid = recorded_pid(name, file, key);
	struct sb_proc_facts f;
	size_t n = strlen(line);

	if (!pid)
		return;
	facts(pid, k, name, &f);
	if (sb_gc_may_kill(k, &f)) {
		if (!dry_run)
			kill(pid, SIGKILL);
		snprintf(line + n, cap - n, "; %s pid %d", k == SB_GC_RELAY ? "relay" : "helper",
			 (int)pid);
	} else if (f.alive && f.args_match) {
		snprintf(line + n, cap - n, "; %s pid %d left alone (not shown to be a leftover)",
			 k == SB_GC_RELAY ? "relay" : "helper", (int)pid);
	}
}

/* Reap one sandbox whose VMM is gone. 0, or -errno (said in the line). */
static int reap(const char *name, bool dry_run, sb_gc_say say, void *ctx)
{
	char line[PATH_MAX * 2 + 512], what[PATH_MAX + 64], dir[PATH_MAX];
	int ret, r;
	size_t n;

	snprintf(line, sizeof(line), "%s %s (its VMM is gone)", dry_run ? "would remove" : "removed",
		 name);
	/* First whatever runs in its own cgroup (all of it is NAME's). */
	ret = sb_cgroup_reap(name, dry_run, what, sizeof(what));
	n = strlen(line);
	if (what[0])
		snprintf(line + n, sizeof(line) - n, "; %s%s", what, ret ? " (not removed)" : "");
	else if (ret == -EINVAL)
		snprintf(line + n, sizeof(line) - n, "; its recorded cgroup was refused (edited?)");
	ret = ret == -EINVAL ? 0 : ret;
	end_leftover(name, SB_GC_RELAY, "relay.json", "pid", dry_run, line, sizeof(line));
	end_leftover(name, SB_GC_HELPER, "confine.json", "helper_pid", dry_run, line, sizeof(line));
	r = sb_path(name, NULL, dir, sizeof(dir));
	if (!r && !dry_run)
		r = sb_remove_state(name);
	n = strlen(line);
	snprintf(line + n, sizeof(line) - n, "; state directory %s%s", dir, r ? " (not removed: " : "");
	if (r) {
		n = strlen(line);
		snprintf(line + n, sizeof(line) - n, "%s)", strerror(-r));
	}
	say(ctx, line);
	return ret ? ret : r;
}

int sb_gc(bool dry_run, sb_gc_say say, void *ctx, int *failures)
{
	char **names;
	int n = sb_list(&names), reaped = 0;

	*failures = 0;
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		/* -1: a pid file names no VMM of this sandbox (sb_vmm_pid also
		 * removed its stale sockets). 0 is a stopped sandbox: kept. */
		if (sb_vmm_pid(names[i]) < 0 && !sb_gc_run_alive(names[i])) {
			if (reap(names[i], dry_run, say, ctx))
				(*failures)++;
			reaped++;
		}
		free(names[i]);
	}
	free(names);
	return reaped;
}
