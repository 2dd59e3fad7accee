/*
 * qcow2 write path. Writes into clusters this image owns (COPIED set) go
 * straight to the file; anything else allocates a fresh cluster at the end
 * of the image, fills it (backing data or zeroes around the guest's bytes)
 * and only then updates the cached L2 entry. Metadata reaches the disk in
 * qcow2_flush_locked(), never here: no per-write sync.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "images/qcow2_int.h"
#include "common/log.h"

static bool all_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

static void set_entry(struct l2_slot *s, uint64_t idx, uint64_t e)
{
	s->tbl[idx] = htobe64(e);
	s->dirty = true;
}

/* Write part of one cluster that has no host cluster of its own yet. */
static int cow_one(struct qcow2 *q, struct l2_slot *s, uint64_t idx,
		   enum qcow2_kind kind, uint64_t host, const uint8_t *buf,
		   uint64_t off, size_t n)
{
	uint64_t co = off & (q->cs - 1), target = host;
	const uint8_t *src = buf;
	int err = 0;

	if (n == q->cs && q->v3 && all_zero(buf, n)) {
		/* "all zeroes" flag: no data cluster needed (v3 only). */
		set_entry(s, idx, kind == QK_ZERO ? be64toh(s->tbl[idx]) : QCOW2_OFLAG_ZERO);
		return 0;
	}
	if (n != q->cs) {
		if (kind == QK_ZERO)
			memset(q->cbuf, 0, q->cs);
		else
			err = qcow2_backing_read(q, q->cbuf, off - co, q->cs);
		memcpy(q->cbuf + co, buf, n);
		src = q->cbuf;
	}
	/* A preallocated zero cluster we own is reused; else append one. */
	if (!err && !(kind == QK_ZERO && host &&
		      (be64toh(s->tbl[idx]) & QCOW2_OFLAG_COPIED)))
		err = qcow2_alloc_cluster(q, &target);
	if (!err)
		err = qcow2_write_at(q, src, q->cs, target);
	if (!err)
		set_entry(s, idx, target | QCOW2_OFLAG_COPIED);
	return err;
}

/* Extend an in-place write over following clusters that are contiguous on
 * the host and owned, so a sequential write is one pwrite. */
static size_t inplace_run(struct qcow2 *q, struct l2_slot *s, uint64_t idx,
			  uint64_t host, uint64_t co, size_t len)
{
	uint64_t per = 1ULL << q->l2_bits;
	size_t n = q->cs - co < len ? (size_t)(q->cs - co) : len;
	enum qcow2_kind k;
	uint64_t h, e;

	for (uint64_t j = 1; n < len && idx + j < per; j++) {
		e = be64toh(s->tbl[idx + j]);
		if (!(e & QCOW2_OFLAG_COPIED) || qcow2_classify(q, e, &k, &h) ||
		    k != QK_DATA || h != host + j * q->cs)
			break;
		n += len - n < q->cs ? len - n : (size_t)q->cs;
	}
	return n;
}

/* Does entry @e leave the cluster without a host cluster of its own? */
static bool needs_alloc(struct qcow2 *q, uint64_t e)
{
	enum qcow2_kind k;
	uint64_t h;

	return !qcow2_classify(q, e, &k, &h) && (k == QK_BACKING || (k == QK_ZERO && !h));
}

static int write_segment(struct qcow2 *q, struct l2_slot *s, uint64_t idx,
			 const uint8_t *buf, uint64_t host, uint64_t n)
{
	int err = qcow2_write_at(q, buf, n * q->cs, host);

	for (uint64_t j = 0; !err && j < n; j++)
		set_entry(s, idx + j, (host + j * q->cs) | QCOW2_OFLAG_COPIED);
	return err;
}

/* Whole clusters needing allocation, in a row (a sequential write): take
 * them back to back from the allocator and write each contiguous segment
 * with one pwrite, as QEMU does. Returns bytes done in *done (0: none). */
static int alloc_run(struct qcow2 *q, struct l2_slot *s, uint64_t idx,
		     const uint8_t *buf, size_t len, size_t *done)
{
	uint64_t per = 1ULL << q->l2_bits, seg = 0, segn = 0, i, off;
	int err = 0;

	for (i = 0; (i + 1) * q->cs <= len && idx + i < per; i++) {
		if (!needs_alloc(q, be64toh(s->tbl[idx + i])) ||
		    (q->v3 && all_zero(buf + i * q->cs, q->cs)))
			break;
		err = qcow2_alloc_cluster(q, &off);
		if (err)
			return err;
		if (segn && off != seg + segn * q->cs) {
			err = write_segment(q, s, idx + i - segn, buf + (i - segn) * q->cs,
					    seg, segn);
			segn = 0;
		}
		if (err)
			return err;
		if (!segn)
			seg = off;
		segn++;
	}
	if (segn)
		err = write_segment(q, s, idx + i - segn, buf + (i - segn) * q->cs, seg, segn);
	*done = (size_t)(i * q->cs);
	return err;
}

static int write_chunk(struct qcow2 *q, const uint8_t *buf, uint64_t off,
		       size_t len, size_t *done)
{
	uint64_t co = off & (q->cs - 1), idx = l2_index(q, off), host, e;
	struct l2_slot *s;
	enum qcow2_kind kind;
	int err = qcow2_l2_get(q, off, true, &s);

	if (err)
		return err;
	e = be64toh(s->tbl[idx]);
	err = qcow2_classify(q, e, &kind, &host);
	if (err)
		return err;
	if (kind == QK_DATA && !(e & QCOW2_OFLAG_COPIED)) {
		log_error("qcow2 %s: cluster shared with a snapshot; writing it is "
			  "not supported", q->path);
		return -ENOTSUP;
	}
	if (kind == QK_DATA) {
		*done = inplace_run(q, s, idx, host, co, len);
		return qcow2_write_at(q, buf, *done, host + co);
	}
	if (co == 0 && len >= q->cs) {
		err = alloc_run(q, s, idx, buf, len, done);
		if (err || *done)
			return err;
	}
	*done = q->cs - co < len ? (size_t)(q->cs - co) : len;
	return cow_one(q, s, idx, kind, host, buf, off, *done);
}

int qcow2_do_write(struct qcow2 *q, const uint8_t *buf, uint64_t off, size_t len)
{
	while (len) {
		size_t n = 0;
		int err = write_chunk(q, buf, off, len, &n);

		if (err)
			return err;
		q->data_dirty = true;
		buf += n, off += n, len -= n;
	}
	return 0;
}

/* Whole clusters only. v3 marks them "all zeroes"; v2 can only drop the
 * mapping, which would expose the backing file, so it does so only
 * without one. The host cluster is freed after the L2 change is durable. */
int qcow2_do_discard(struct qcow2 *q, uint64_t off, uint64_t len)
{
	uint64_t start = (off + q->cs - 1) & ~(q->cs - 1);
	uint64_t end = (off + len) & ~(q->cs - 1);

	if (!q->v3 && q->backing)
		return 0;
	for (uint64_t c = start; c < end; c += q->cs) {
		uint64_t idx = l2_index(q, c), host = 0, e = 0;
		enum qcow2_kind kind = QK_BACKING;
		struct l2_slot *s;
		int err = qcow2_l2_get(q, c, q->v3, &s);

		if (!err && s)
			err = qcow2_classify(q, e = be64toh(s->tbl[idx]), &kind, &host);
		if (err)
			return err;
		if (!s || (kind == QK_ZERO && !host) || (kind == QK_BACKING && !q->v3))
			continue;
		if (host && (e & QCOW2_OFLAG_COPIED))
			err = qcow2_defer_free(q, host);
		if (err)
			return err;
		set_entry(s, idx, q->v3 ? QCOW2_OFLAG_ZERO : 0);
	}
	return 0;
}
