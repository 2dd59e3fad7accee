/* Whole-buffer positioned I/O shared by the disk back-ends. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "images/file_io.h"

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
