/* qcow2 helpers: whole-buffer I/O and host offset bounds checks. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "images/qcow2_int.h"

/* Reads past end of file yield zeroes, like a sparse tail. */
int qcow2_pread(int fd, void *buf, size_t len, uint64_t off)
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

int qcow2_pwrite(int fd, const void *buf, size_t len, uint64_t off)
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

int qcow2_sync(int fd)
{
	return fdatasync(fd) ? -errno : 0;
}

/*
 * Every host offset read from a table goes through here: cluster aligned,
 * not the header cluster, and inside the file as we know it. Overflow-safe.
 */
bool qcow2_host_off_ok(const struct qcow2 *q, uint64_t off, uint64_t len)
{
	if (off == 0 || (off & (q->cs - 1)))
		return false;
	return off <= q->file_bound && len <= q->file_bound - off;
}
