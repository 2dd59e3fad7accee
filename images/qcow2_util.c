/* qcow2 helpers: whole-buffer I/O and host offset bounds checks. */
#include <errno.h>
#include <fcntl.h>
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

int qcow2_write_at(struct qcow2 *q, const void *buf, size_t len, uint64_t off)
{
	if (q->trace)
		q->trace->write(q->trace->opaque, off, buf, len);
	return qcow2_pwrite(q->fd, buf, len, off);
}

int qcow2_sync_q(struct qcow2 *q)
{
	if (q->trace)
		q->trace->sync(q->trace->opaque);
	return qcow2_sync(q->fd);
}

/* Freed clusters: give the space back to the host filesystem (best effort;
 * the cluster is unreferenced on disk by now, its contents do not matter). */
void qcow2_punch(struct qcow2 *q, uint64_t off, uint64_t len)
{
	if (q->trace)
		q->trace->write(q->trace->opaque, off, NULL, len);
	(void)fallocate(q->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
			(off_t)len);
}
