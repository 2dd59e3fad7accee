/* Publishing a staged directory or file under its final name, never clobbering (dir_publish.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dir_publish.h"

static int rename_unsupported(int err)
{
	return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP;
}

/* Rename every entry of @from into @to (same file system); stops at the first failure. */
static int move_entries(const char *from, const char *to)
{
	int sfd, dfd = -1, ret = 0;
	DIR *d = NULL;
	struct dirent *e;

	sfd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0 || (dfd = open(to, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || !(d = fdopendir(sfd))) {
		ret = -errno;
		goto out;
	}
	sfd = -1;
	while ((errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* @to was made empty by us and is 0700 until the end, so nothing in it is replaced. */
		if (renameat(dirfd(d), e->d_name, dfd, e->d_name)) {
			ret = -errno;
			goto out;
		}
	}
	ret = -errno;
out:
	if (d)
		closedir(d);
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return ret;
}

static int publish_by_mkdir(const char *stage, const char *dst)
{
	struct stat st;
	int ret;

	if (stat(stage, &st))
		return -errno;
	/* The exclusive step: mkdir fails with EEXIST if @dst exists in any form. */
	if (mkdir(dst, 0700))
		return -errno;
	ret = move_entries(stage, dst);
	if (!ret && chmod(dst, st.st_mode & 07777))
		ret = -errno;
	if (!ret && rmdir(stage))
		ret = -errno;
	if (ret) {
		/* Put back what moved, so the caller's cleanup of @stage removes it all. */
		move_entries(dst, stage);
		rmdir(dst);
	}
	return ret;
}

/* A file, symlink or other non-directory: link(2) fails EEXIST on any existing @dst. */
static int publish_by_link(const char *stage, const char *dst)
{
	/* linkat without AT_SYMLINK_FOLLOW links a symlink itself, never its target. */
	if (linkat(AT_FDCWD, stage, AT_FDCWD, dst, 0))
		return -errno;
	if (unlink(stage)) {
		int ret = -errno;

		unlink(dst);
		return ret;
	}
	return 0;
}

int dir_publish_with(const char *stage, const char *dst, dir_publish_rename_fn rn, char *err, size_t cap)
{
	struct stat st;
	int ret;

	if (!rn)
		rn = renameat2;
	if (!rn(AT_FDCWD, stage, AT_FDCWD, dst, RENAME_NOREPLACE))
		return 0;
	ret = -errno;
	if (rename_unsupported(-ret)) {
		if (lstat(stage, &st))
			ret = -errno;
		else
			ret = S_ISDIR(st.st_mode) ? publish_by_mkdir(stage, dst) : publish_by_link(stage, dst);
		if (ret && ret != -EEXIST) {
			snprintf(err, cap, "%s (the file system of %s has no renameat2(RENAME_NOREPLACE), "
				 "and creating or linking it there failed too)", strerror(-ret), dst);
			return ret;
		}
	}
	if (ret)
		snprintf(err, cap, "%s", ret == -EEXIST ? "it appeared meanwhile; not replaced" : strerror(-ret));
	return ret;
}

int dir_publish(const char *stage, const char *dst, char *err, size_t cap)
{
	return dir_publish_with(stage, dst, NULL, err, cap);
}
