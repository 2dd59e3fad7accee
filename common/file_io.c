/* Whole-buffer file I/O shared by the disk back-ends and the state files. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"

/* Reads past end of file yield zeroes, like a sparse tail. */
int file_pread(int fd, void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			memset(buf, 0, len);
			return 0;
		}
		buf = (char *)buf + n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int file_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf = (const char *)buf + n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int file_write_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX + 8];
	int fd, ret;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = file_pwrite(fd, text, strlen(text), 0);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

char *file_read_text(const char *path, size_t max)
{
	char *buf = malloc(max + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 && buf ? read(fd, buf, max) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

int file_put_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	size_t n = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		ret = -errno;
	close(fd);
	return ret;
}

int file_read_regular(const char *path, size_t max, char **text, size_t *len)
{
	struct stat st;
	/* O_NONBLOCK: a FIFO put in its place must not hang the open. */
	int ret = 0, fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*text = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max)
		ret = -EBADMSG;
	else if (!(*text = calloc(1, (size_t)st.st_size + 1)))
		ret = -ENOMEM;
	else
		ret = file_pread(fd, *text, (size_t)st.st_size, 0);
	close(fd);
	if (ret) {
		free(*text);
		*text = NULL;
		return ret;
	}
	*len = (size_t)st.st_size;
	return 0;
}
