/* A sandbox's disk: its own copy of a root image, or a fresh ext4 data disk. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/image_store.h"
#include "tools/sandbox_disk.h"

/* Same lookup as `mvm run --image` (tools/image_store.c). */
int sb_image_resolve(const char *arg, char *out, size_t cap)
{
	return image_store_resolve(arg, out, cap);
}

/* Never guess formats of files a guest may have written; here we only refuse qcow2. */
static bool is_qcow2(int fd)
{
	unsigned char m[4];

	return pread(fd, m, 4, 0) == 4 && !memcmp(m, "QFI\xfb", 4);
}

int sb_disk_copy(const char *src, const char *dst, char *err, size_t errlen)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, ret = 0;
	struct stat st;
	off_t left;

	if (in < 0 || fstat(in, &st)) {
		snprintf(err, errlen, "image %s: %s", src, strerror(errno));
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || is_qcow2(in)) {
		snprintf(err, errlen, "image %s: only raw ext4 image files are supported for now", src);
		ret = -EINVAL;
		goto out;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		goto out;
	}
	/* A reflink where the filesystem offers one; else an in-kernel copy. */
	if (ioctl(out, FICLONE, in) == 0)
		goto out;
	for (left = st.st_size; left > 0;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);

		if (n <= 0) {
			ret = n ? -errno : -EIO;
			snprintf(err, errlen, "copying %s: %s", src, strerror(-ret));
			break;
		}
		left -= n;
	}
out:
	if (out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	return ret;
}

int sb_disk_create(const char *dst, uint64_t size, char *err, size_t errlen)
{
	int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), st;
	pid_t pid;

	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	close(fd);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execlp("mkfs.ext4", "mkfs.ext4", "-q", "-F", "-L", "mvm-data",
		       "-E", "root_owner=0:0", dst, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "mkfs.ext4 %s failed (is e2fsprogs installed?)", dst);
		return -EIO;
	}
	return 0;
}
