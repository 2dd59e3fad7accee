/* qcow2 helpers: sync and host offset bounds checks. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "images/qcow2_int.h"

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
	return file_pwrite(q->fd, buf, len, off);
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
