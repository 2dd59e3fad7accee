/* Sandbox state directories: names, paths, pid and status, events, listing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/events.h"
#include "common/fs_util.h"
#include "tools/sandbox/api_client.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/template.h"
#include "tools/sandbox/sock_probe.h"
#include "tools/sandbox/sandbox_cgroup.h"

int sb_root(char *out, size_t cap)
{
	const char *s = getenv("MVM_STATE_DIR"), *x = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	char cwd[PATH_MAX];

	/* Absolute always: the VMM runs in its state directory. */
	if (s && *s && s[0] != '/' && getcwd(cwd, sizeof(cwd)))
		n = snprintf(out, cap, "%s/%s", cwd, s);
	else if (s && *s)
		n = snprintf(out, cap, "%s", s);
	else if (x && *x)
		n = snprintf(out, cap, "%s/mvm", x);
	else
		n = snprintf(out, cap, "%s/.local/state/mvm", home && *home ? home : "/tmp");
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

bool sb_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > SB_NAME_MAX || name[0] == '.' || name[0] == '-' || name[0] == '_')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

int sb_path(const char *name, const char *file, char *out, size_t cap)
{
	char root[PATH_MAX];
	int n;

	if (!sb_name_ok(name))
		return -EINVAL;
	if (sb_root(root, sizeof(root)))
		return -ENAMETOOLONG;
	n = file ? snprintf(out, cap, "%s/%s/%s", root, name, file)
		 : snprintf(out, cap, "%s/%s", root, name);
	/* Unix socket paths must fit sun_path (108 bytes). */
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

bool sb_exists(const char *name)
{
	char p[PATH_MAX];

	return !sb_path(name, "config.json", p, sizeof(p)) && access(p, F_OK) == 0;
}

static pid_t parent_of(pid_t pid)
{
	char p[64], buf[512], *rp;
	int fd, ppid = 0;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

/* @pid's argv as NUL-separated words; @a1 and @a2 point at argv[1] and argv[2] ("" if absent). */
static bool read_args(pid_t pid, char *cmd, size_t cap, const char **a1, const char **a2)
{
	char p[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, cmd, cap - 2);
	close(fd);
	if (n <= 0)
		return false;	/* gone, or a zombie */
	cmd[n] = cmd[n + 1] = 0;
	*a1 = cmd + strlen(cmd) + 1;
	*a2 = *a1 < cmd + n ? *a1 + strlen(*a1) + 1 : cmd + n;
	if (*a2 > cmd + n)
		*a2 = cmd + n;
	return true;
}

bool sb_pid_is(pid_t pid, const char *verb, const char *name)
{
	char cmd[512];
	const char *a1, *a2;

	return pid > 0 && read_args(pid, cmd, sizeof(cmd), &a1, &a2) && !strcmp(a1, verb) &&
	       !strcmp(a2, name);
}

/* Whether @pid is the VMM of @name (not a recycled pid): `mvm vmm NAME`, or
 * the VMM child of `mvm run` (pid P) whose sandbox is run-P. */
static bool is_our_vmm(pid_t pid, const char *name)
{
	char cmd[512], own[32];
	const char *a1, *a2;

	if (!read_args(pid, cmd, sizeof(cmd), &a1, &a2))
		return false;
	if (!strcmp(a1, "run")) {
		/* In its PID namespace the VMM is the child of mvm run's child
		 * (vmm/confine/pidns.c): the CLI is one step further up. */
		pid_t up = parent_of(pid);

		snprintf(own, sizeof(own), "run-%d", (int)up);
		if (strcmp(own, name) && read_args(up, cmd, sizeof(cmd), &a1, &a2) &&
		    !strcmp(a1, "run"))
			snprintf(own, sizeof(own), "run-%d", (int)parent_of(up));
		return !strcmp(own, name);
	}
	return !strcmp(a1, "vmm") && !strcmp(a2, name);
}

static void remove_stale(const char *name)
{
	static const char *files[] = { "api.sock", "vsock.sock" };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!sb_path(name, files[i], p, sizeof(p)))
			unlink(p);
}

pid_t sb_vmm_pid(const char *name)
{
	char p[PATH_MAX], buf[32] = { 0 };
	int fd;
	long pid;

	if (sb_path(name, "pid", p, sizeof(p)))
		return 0;
	/* The VMM can write its state directory: no link followed, and a FIFO
	 * put there reads as nothing instead of hanging `mvm ls`. */
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	pid = strtol(buf, NULL, 10);
	if (pid > 0 && is_our_vmm((pid_t)pid, name))
		return (pid_t)pid;
	remove_stale(name);
	return -1;
}

const char *sb_status(const char *name, pid_t *pidp)
{
	pid_t pid = sb_vmm_pid(name);
	char st[32];

	if (pidp)
		*pidp = pid > 0 ? pid : 0;
	if (pid < 0)
		return "crashed";
	if (pid == 0)
		return "stopped";
	if (!api_status(name, st, sizeof(st)) && !strcmp(st, "paused"))
		return "paused";
	return "running";
}

void sb_event_put(const char *name, cJSON *ev)
{
	char p[PATH_MAX];

	if (sb_path(name, "events.jsonl", p, sizeof(p)))
		cJSON_Delete(ev);
	else
		(void)event_append(p, ev);
}

void sb_event(const char *name, const char *type)
{
	sb_event_put(name, event_new(type, 0));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sb_list(char ***names)
{
	char root[PATH_MAX];
	struct dirent *de;
	char **v = NULL;
	int n = 0, cap = 0;
	DIR *d;

	*names = NULL;
	if (sb_root(root, sizeof(root)))
		return -ENAMETOOLONG;
	d = opendir(root);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!sb_name_ok(de->d_name) || !sb_exists(de->d_name))
			continue;
		if (n == cap) {
			char **nv = realloc(v, (size_t)(cap = cap ? cap * 2 : 16) * sizeof(char *));

			if (!nv)
				break;
			v = nv;
		}
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(char *), cmp_str);
	*names = v;
	return n;
}

int sb_remove_state(const char *name)
{
	char dir[PATH_MAX];
	int ret = sb_path(name, NULL, dir, sizeof(dir));

	if (ret)
		return ret;
	sb_template_unlink(name);	/* keeps its template's ledger true */
	ret = rm_tree(dir);
	sb_cgroup_remove(name);
	return ret;
}

/* mkdir -p of the state root, private to the user; its path in @root. */
static int make_root(char *root, size_t cap)
{
	if (sb_root(root, cap))
		return -ENAMETOOLONG;
	return mkdir_p(root, 0700);
}

int sb_prepare_root(char *err, size_t cap)
{
	char root[PATH_MAX];
	int ret = make_root(root, sizeof(root));

	if (ret) {
		snprintf(err, cap, "cannot create the state directory %s: %s (set MVM_STATE_DIR)", root,
			 strerror(-ret));
		return ret;
	}
	return sock_probe_dir(root, err, cap);
}

int sb_mkdir(const char *name, char *dir, size_t cap)
{
	char root[PATH_MAX];
	int ret = make_root(root, sizeof(root));

	if (!ret && sb_path(name, NULL, dir, cap))
		ret = -ENAMETOOLONG;
	return ret ? ret : mkdir(dir, 0700) ? -errno : 0;
}
