/* qcow2 read path: map guest ranges to host data, zeroes or the backing file. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "images/qcow2_int.h"
#include "common/log.h"

/* "Cluster mapping", standard cluster descriptor. Host offsets are checked
 * against the file here, once, for reads and writes alike. */
int qcow2_classify(struct qcow2 *q, uint64_t e, enum qcow2_kind *kind, uint64_t *host)
{
	uint64_t off = e & QCOW2_OFFSET_MASK;

	if (e & QCOW2_OFLAG_COMPRESSED) {
		log_error("qcow2 %s: compressed clusters not supported", q->path);
		return -ENOTSUP;
	}
	if ((e & QCOW2_L2_RESERVED) || (!q->v3 && (e & QCOW2_OFLAG_ZERO)) ||
	    (off && !qcow2_host_off_ok(q, off, q->cs))) {
		log_error("qcow2 %s: L2 entry 0x%" PRIx64 " invalid or outside the file",
			  q->path, e);
		return -EIO;
	}
	*host = off;
	if (e & QCOW2_OFLAG_ZERO)
		*kind = QK_ZERO;
	else
		*kind = off ? QK_DATA : QK_BACKING;
	return 0;
}

/* Past the end of a shorter backing file the disk reads as zeroes. */
int qcow2_backing_read(struct qcow2 *q, void *buf, uint64_t goff, size_t n)
{
	size_t m = 0;
	int err;

	if (q->backing && goff < q->backing->size) {
		m = q->backing->size - goff < n ? (size_t)(q->backing->size - goff) : n;
		err = q->backing->ops->read(q->backing, buf, goff, m);
		if (err)
			return err;
	}
	memset((uint8_t *)buf + m, 0, n - m);
	return 0;
}

/* Longest run from @goff (inside one L2 table) with one kind and, for data,
 * contiguous host clusters: one pread for a sequential read. */
static int map_run(struct qcow2 *q, uint64_t goff, size_t len,
		   enum qcow2_kind *kind, uint64_t *host, size_t *n)
{
	uint64_t co = goff & (q->cs - 1), idx = l2_index(q, goff), h;
	uint64_t per = 1ULL << q->l2_bits;
	struct l2_slot *s;
	enum qcow2_kind k;
	int err = qcow2_l2_get(q, goff, false, &s);

	if (err)
		return err;
	*n = q->cs - co < len ? (size_t)(q->cs - co) : len;
	if (!s) {
		uint64_t span_left = ((per - idx) << q->h.cluster_bits) - co;

		*kind = QK_BACKING;
		*n = span_left < len ? (size_t)span_left : len;
		return 0;
	}
	err = qcow2_classify(q, be64toh(s->tbl[idx]), kind, host);
	if (err)
		return err;
	for (uint64_t j = 1; *n < len && idx + j < per; j++) {
		/* A bad later entry just ends the run; reading it reports it. */
		if (qcow2_classify(q, be64toh(s->tbl[idx + j]), &k, &h) || k != *kind ||
		    (k == QK_DATA && h != *host + j * q->cs))
			break;
		*n += len - *n < q->cs ? len - *n : (size_t)q->cs;
	}
	return 0;
}

/* The mapping is looked up under the lock; the data is read without it.
 * A concurrent discard may free the cluster meanwhile: the read then sees
 * old data or zeroes, either a valid answer to a read racing a discard
 * (freed clusters are never reused while the image is open). */
int qcow2_do_read(struct qcow2 *q, void *buf, uint64_t off, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		enum qcow2_kind kind;
		uint64_t host = 0;
		size_t n;
		int err = map_run(q, off, len, &kind, &host, &n);

		if (err)
			return err;
		if (kind == QK_ZERO) {
			memset(p, 0, n);
		} else {
			pthread_mutex_unlock(&q->lock);
			if (kind == QK_DATA)
				err = file_pread(q->fd, p, n, host + (off & (q->cs - 1)));
			else
				err = qcow2_backing_read(q, p, off, n);
			pthread_mutex_lock(&q->lock);
		}
		if (err)
			return err;
		p += n, off += n, len -= n;
	}
	return 0;
}
