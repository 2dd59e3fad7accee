/* mkdir -p and rm -r (common/fs_util.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs_util.h"

int mkdir_p_at(int dfd, const char *path, mode_t mode)
{
	char p[PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/' || s[-1] == '/')
			continue;
		*s = 0;
		if (mkdirat(dfd, p, mode) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (!mkdirat(dfd, p, mode))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (fstatat(dfd, p, &st, 0))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int mkdir_p(const char *path, mode_t mode)
{
	return mkdir_p_at(AT_FDCWD, path, mode);
}

/*
 * rm_tree walks down with openat(O_NOFOLLOW) and back up with "..", holding
 * only the current directory open. A stack keeps, per level, the name of the
 * directory entered and the identity of its parent, so the way back up is
 * checked (-ESTALE if something moved it meanwhile) and the emptied
 * directory removed by name. A directory's listing restarts after each
 * subdirectory: what was removed is gone, so each restart is shorter.
 */
struct level {
	dev_t dev;
	ino_t ino;		/* the parent we return to */
	char name[NAME_MAX + 1];	/* the directory entered from it */
};

struct walk {
	struct level *v;
	size_t n, cap;
	dev_t dev;		/* the tree's filesystem */
};

static int push(struct walk *w, const struct stat *parent, const char *name)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct level *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n].dev = parent->st_dev;
	w->v[w->n].ino = parent->st_ino;
	snprintf(w->v[w->n].name, sizeof(w->v[w->n].name), "%s", name);
	w->n++;
	return 0;
}

/* Open @name beneath @fd as a subdirectory of the tree's filesystem. fd or -errno. */
static int open_subdir(const struct walk *w, int fd, const char *name)
{
	int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), ret;
	struct stat st;

	if (sub < 0)
		return -errno;
	if (fstat(sub, &st))
		ret = -errno;
	else if (st.st_dev != w->dev)
		ret = -EXDEV;
	else
		return sub;
	close(sub);
	return ret;
}

/*
 * Remove every entry of *fd's directory until a subdirectory turns up; then
 * open it, close *fd, return the subdirectory in *fd and its name in @name:
 * 1. 0 when the directory is empty now, or -errno.
 */
static int clear_files(struct walk *w, int *fd, char name[NAME_MAX + 1])
{
	int dup_fd = dup(*fd), ret = 0;
	struct dirent *de;
	DIR *d;

	d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
	if (!d) {
		ret = -errno;
		if (dup_fd >= 0)
			close(dup_fd);
		return ret;
	}
	while (!ret && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!unlinkat(*fd, de->d_name, 0) || errno == ENOENT)
			continue;
		if (errno != EISDIR) {
			ret = -errno;
			break;
		}
		ret = open_subdir(w, *fd, de->d_name);
		if (ret >= 0) {
			snprintf(name, NAME_MAX + 1, "%s", de->d_name);
			close(*fd);
			*fd = ret;
			ret = 1;
			break;
		}
	}
	if (!ret && errno)
		ret = -errno;	/* readdir failed */
	closedir(d);
	return ret;
}

/* Back up from the emptied directory *fd to its parent and remove it there. */
static int pop(struct walk *w, int *fd)
{
	struct level *l = &w->v[--w->n];
	int up = openat(*fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (up < 0)
		return -errno;
	close(*fd);
	*fd = up;
	if (fstat(up, &st))
		return -errno;
	if (st.st_dev != l->dev || st.st_ino != l->ino)
		return -ESTALE;
	return unlinkat(up, l->name, AT_REMOVEDIR) ? -errno : 0;
}

/* Empty the directory open at @fd (closed on return), whatever its depth. */
static int empty_tree(int fd)
{
	struct walk w = { 0 };
	char name[NAME_MAX + 1];
	struct stat st;
	int ret;

	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	w.dev = st.st_dev;
	for (;;) {
		if (fstat(fd, &st)) {
			ret = -errno;
			break;
		}
		ret = clear_files(&w, &fd, name);
		if (ret == 1)
			ret = push(&w, &st, name);
		else if (!ret && w.n)
			ret = pop(&w, &fd);
		else
			break;
		if (ret)
			break;
	}
	close(fd);
	free(w.v);
	return ret;
}

int rm_tree_at(int dfd, const char *name)
{
	int fd, ret;

	if (!unlinkat(dfd, name, 0))
		return 0;
	if (errno != EISDIR)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = empty_tree(fd);
	if (!ret && unlinkat(dfd, name, AT_REMOVEDIR))
		ret = -errno;
	return ret;
}

int rm_tree(const char *path)
{
	return rm_tree_at(AT_FDCWD, path);
}
