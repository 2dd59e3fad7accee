/*
 * The output root of operator_policy.h: where a remote caller's host-side
 * writes (promote's bundle) go. Every component is opened with openat2()
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS from the root's descriptor, so a
 * symlink placed anywhere below the root never leads out of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "tools/sandbox/operator_policy.h"

#define MAX_DEPTH 32

int op_out_root_set(struct op_policy *p, const char *dir, const char *sub, char *err, size_t cap)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char path[PATH_MAX], real[PATH_MAX];
	struct stat st;
	int n;

	if (dir)
		n = snprintf(path, sizeof(path), "%s", dir);
	else if (xdg && xdg[0] == '/')
		n = snprintf(path, sizeof(path), "%s/mvm/%s", xdg, sub);
	else
		n = snprintf(path, sizeof(path), "%s/.local/state/mvm/%s", home ? home : "", sub);
	if (n < 0 || (size_t)n >= sizeof(path) || path[0] != '/') {
		snprintf(err, cap, "output root: not an absolute path (set HOME or give one)");
		return -EINVAL;
	}
	if (mkdir_p(path, 0700)) {
		snprintf(err, cap, "output root %.200s: cannot create it: %s", path, strerror(errno));
		return -errno;
	}
	/* The operator's own path may hold symlinks; what is below it may not. */
	if (!realpath(path, real) || stat(real, &st)) {
		snprintf(err, cap, "output root %.200s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022)) {
		snprintf(err, cap, "output root %.200s must be a directory of yours that only you can write "
			 "(chmod 700)", real);
		return -EPERM;
	}
	snprintf(p->out_root, sizeof(p->out_root), "%s", real);
	return 0;
}

/* One component beneath @dfd, as a directory, never through a symlink. */
static int open_beneath(int dfd, const char *name)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dfd, name, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)	/* before 5.6: one component, O_NOFOLLOW is the same */
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return (int)fd;
}

static bool component_ok(const char *c, size_t n)
{
	return n && n <= NAME_MAX && !(n == 1 && c[0] == '.') && !(n == 2 && c[0] == '.' && c[1] == '.');
}

/* @rel relative to the root, checked lexically. NULL (with @err) if bad. */
static const char *relative(const struct op_policy *p, const char *rel, char *err, size_t cap)
{
	size_t rl = strlen(p->out_root), depth = 0;
	const char *r = rel, *c;

	if (!p->out_root[0]) {
		snprintf(err, cap, "no output root is set");
		return NULL;
	}
	if (r[0] == '/') {
		if (strncmp(r, p->out_root, rl) || r[rl] != '/') {
			snprintf(err, cap, "'%.200s' is outside the output root %.200s", rel, p->out_root);
			return NULL;
		}
		r += rl + 1;
	}
	for (c = r;; depth++) {
		size_t n = strcspn(c, "/");

		if (!component_ok(c, n) || depth >= MAX_DEPTH) {
			snprintf(err, cap, "'%.200s': give a relative path beneath the output root %.200s "
				 "(no '.', '..' or empty components, at most %d levels)", rel, p->out_root,
				 MAX_DEPTH);
			return NULL;
		}
		if (!c[n])
			return r;
		c += n + 1;
	}
}

int op_out_resolve(const struct op_policy *p, const char *rel, bool inherit, int *parent_fd,
		   char *leaf, char *abs, char *err, size_t cap)
{
	const char *r = relative(p, rel, err, cap), *c;
	char comp[NAME_MAX + 1];
	struct stat st;
	int dfd, next;

	if (!r)
		return -EINVAL;
	dfd = open(p->out_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		goto fail_errno;
	for (c = r; c[strcspn(c, "/")]; c += strcspn(c, "/") + 1) {
		snprintf(comp, sizeof(comp), "%.*s", (int)strcspn(c, "/"), c);
		next = open_beneath(dfd, comp);
		if (next < 0 && errno == ENOENT && !mkdirat(dfd, comp, 0700))
			next = open_beneath(dfd, comp);
		if (next < 0)
			goto fail_errno;
		close(dfd);
		dfd = next;
	}
	snprintf(leaf, NAME_MAX + 1, "%s", c);
	if (!fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW)) {
		errno = EEXIST;
		goto fail_errno;
	}
	if (errno != ENOENT || (inherit && fcntl(dfd, F_SETFD, 0)))
		goto fail_errno;
	snprintf(abs, PATH_MAX, "%s/%s", p->out_root, r);
	*parent_fd = dfd;
	return 0;
fail_errno:
	next = -errno;
	snprintf(err, cap, "'%.200s' beneath the output root %.200s: %s%s", rel, p->out_root, strerror(-next),
		 next == -ELOOP || next == -EXDEV || next == -ENOTDIR ?
		 " (a file, a symlink or a path leading out of it)" : "");
	if (dfd >= 0)
		close(dfd);
	return next;
}
