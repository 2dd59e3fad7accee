/* Finding and reaping a dead sandbox's own cgroup (tools/sandbox/sandbox_cgroup.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/file_io.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"

#define CG_MOUNT SB_CGROUP_MOUNT

bool sb_cgroup_path_ok(const char *path, const char *name)
{
	size_t n = strlen(path), tail = strlen(name) + 5;	/* "/mvm/" NAME */
	const char *c = path;

	if (!sb_name_ok(name) || path[0] != '/' || n < tail || n >= PATH_MAX ||
	    strcmp(path + n - tail + 5, name) || strncmp(path + n - tail, "/mvm/", 5))
		return false;
	/* Components of names a cgroup has, none "." or "..", none empty. */
	while (*c == '/') {
		size_t len = strspn(c + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_.:@-+=,");

		if (!len || (len == 1 && c[1] == '.') || (len == 2 && !strncmp(c + 1, "..", 2)))
			return false;
		c += 1 + len;
	}
	return !*c;
}

/* The string @key of NAME's confine.json into @out (it may have been edited:
 * a regular file, capped, no link followed). 0, -ENOENT (absent or not a
 * string) or -errno. */
static int confine_field(const char *name, const char *key, char *out, size_t cap)
{
	char p[PATH_MAX], *text = NULL;
	size_t len;
	cJSON *o = NULL;
	const char *v;
	int ret = sb_path(name, "confine.json", p, sizeof(p));

	if (!ret)
		ret = file_read_regular(p, 64 << 10, &text, &len);
	if (!ret && !(o = cJSON_Parse(text)))
		ret = -EBADMSG;
	v = ret ? NULL : cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
	if (!ret)
		ret = !v ? -ENOENT : snprintf(out, cap, "%s", v) >= (int)cap ? -ENAMETOOLONG : 0;
	cJSON_Delete(o);
	free(text);
	return ret;
}

int sb_cgroup_recorded(const char *name, char *out, size_t cap)
{
	int ret = confine_field(name, "cgroup", out, cap);

	return ret ? ret : sb_cgroup_path_ok(out, name) ? 0 : -EINVAL;
}

bool sb_cgroup_recorded_note(const char *name, char *out, size_t cap)
{
	if (confine_field(name, "cgroup_note", out, cap) || !out[0])
		return false;
	for (char *c = out; *c; c++)	/* the VMM wrote it: no terminal controls */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return true;
}

/* Where cgroup.kill is missing (before 5.14): SIGKILL each process listed. */
static void busy_kill(const char *dir)
{
	char p[PATH_MAX + 16], *procs, *save = NULL;

	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	procs = file_read_text(p, 1 << 16);
	for (char *w = procs ? strtok_r(procs, "\n", &save) : NULL; w; w = strtok_r(NULL, "\n", &save))
		if (atoi(w) > 1)
			kill(atoi(w), SIGKILL);
	free(procs);
}

/* Until @dir's cgroup.events says "populated 0": its processes are gone
 * (dying ones still count). At most 10 s. 0 or -ETIMEDOUT. */
static int wait_empty(const char *dir)
{
	char p[PATH_MAX + 16], *ev;
	bool populated = true;

	snprintf(p, sizeof(p), "%s/cgroup.events", dir);
	for (int i = 0; i < 500 && populated; i++) {
		ev = file_read_text(p, 256);
		populated = ev && strstr(ev, "populated 1");
		free(ev);
		if (populated) {
			if (i % 50 == 49)
				busy_kill(dir);
			usleep(20000);
		}
	}
	return populated ? -ETIMEDOUT : 0;
}

int sb_cgroup_reap(const char *name, bool dry_run, char *what, size_t cap)
{
	char dir[PATH_MAX], p[PATH_MAX + 32], *procs;
	struct statfs f;
	bool busy;
	int ret = sb_cgroup_recorded(name, dir + strlen(CG_MOUNT), sizeof(dir) - strlen(CG_MOUNT));

	what[0] = 0;
	if (ret)	/* refused (edited): said; unreadable or none: nothing of ours */
		return ret == -EINVAL ? ret : 0;
	memcpy(dir, CG_MOUNT, strlen(CG_MOUNT));
	if (statfs(dir, &f) || f.f_type != CGROUP2_SUPER_MAGIC)
		return 0;	/* gone already, or not a cgroup */
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	procs = file_read_text(p, 1 << 16);
	busy = procs && procs[0];
	free(procs);
	snprintf(what, cap, "cgroup %s%s", dir + strlen(CG_MOUNT),
		 busy ? " (and the processes still in it)" : "");
	if (dry_run)
		return 0;
	/* Everything in NAME's own cgroup is NAME's: ended at once (5.14+). */
	snprintf(p, sizeof(p), "%s/cgroup.kill", dir);
	if (busy && file_put_text(p, "1"))
		busy_kill(dir);
	ret = wait_empty(dir);
	if (!ret && rmdir(dir) && errno != ENOENT)
		ret = -errno;
	*strrchr(dir, '/') = 0;
	rmdir(dir);	/* mvm/ itself once empty: the engine removes its job's cgroup */
	return ret;
}

