/*
 * qcow2 write path. Writes into clusters this image owns (COPIED set) go
 * straight to the file; anything else allocates a fresh cluster at the end
 * of the image, fills it (backing data or zeroes around the guest's bytes)
 * and only then updates the cached L2 entry. Metadata reaches the disk in
 * qcow2_flush_locked(), never here: no per-write sync. Data is written with
 * q->lock dropped (see qcow2_int.h): a flush meanwhile may make an
 * allocated cluster's refcount durable before its L2 entry, which a crash
 * turns into a leak (harmless), never into a reference to unwritten data.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
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

/* Point guest offset @goff at @e after the lock was dropped: the slot
 * taken before may have been evicted meanwhile, so look it up again. */
static int set_entry_at(struct qcow2 *q, uint64_t goff, uint64_t e)
{
	struct l2_slot *s;
	int err = qcow2_l2_get(q, goff, true, &s);

	if (!err)
		set_entry(s, l2_index(q, goff), e);
	return err;
}

/* Fill a bounce cluster: backing data or zeroes around the guest's bytes. */
static int fill_bounce(struct qcow2 *q, uint8_t *bounce, enum qcow2_kind kind,
		       const uint8_t *buf, uint64_t off, size_t n)
{
	uint64_t co = off & (q->cs - 1);
	int err = 0;

	if (kind == QK_ZERO)
		memset(bounce, 0, q->cs);
	else
		err = qcow2_backing_read(q, bounce, off - co, q->cs);
	memcpy(bounce + co, buf, n);
	return err;
}

/* Write part of one cluster that has no host cluster of its own yet. The
 * caller made sure the cluster is not busy; the lock is dropped for the
 * backing read and the data write. */
static int cow_one(struct qcow2 *q, struct l2_slot *s, uint64_t idx,
		   enum qcow2_kind kind, uint64_t host, const uint8_t *buf,
		   uint64_t off, size_t n)
{
	uint64_t target = host, cl = off >> q->h.cluster_bits;
	uint8_t *bounce = NULL;
	int err = 0;

	if (n == q->cs && q->v3 && all_zero(buf, n)) {
		/* "all zeroes" flag: no data cluster needed (v3 only). */
		set_entry(s, idx, kind == QK_ZERO ? be64toh(s->tbl[idx]) : QCOW2_OFLAG_ZERO);
		return 0;
	}
	/* A preallocated zero cluster we own is reused; else append one. */
	if (!(kind == QK_ZERO && host && (be64toh(s->tbl[idx]) & QCOW2_OFLAG_COPIED)))
		err = qcow2_alloc_cluster(q, &target);
	if (err)
		return err;
	qcow2_busy_claim(q, cl, 1);
	pthread_mutex_unlock(&q->lock);
	if (n != q->cs) {
		bounce = malloc(q->cs);
		err = bounce ? fill_bounce(q, bounce, kind, buf, off, n) : -ENOMEM;
	}
	if (!err)
		err = qcow2_write_at(q, bounce ? bounce : buf, q->cs, target);
	free(bounce);
	pthread_mutex_lock(&q->lock);
	if (!err)
		err = set_entry_at(q, off, target | QCOW2_OFLAG_COPIED);
	qcow2_busy_release(q, cl);
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

/* Clusters one allocating run takes at most (8 MiB at 64 KiB). */
#define RUN_MAX 128

/* Write @n whole clusters to the host clusters @host[], one pwrite per
 * contiguous stretch (lock not held). */
static int write_hosts(struct qcow2 *q, const uint8_t *buf, const uint64_t *host, uint64_t n)
{
	int err = 0;

	for (uint64_t i = 0, j; !err && i < n; i = j) {
		for (j = i + 1; j < n && host[j] == host[i] + (j - i) * q->cs; j++)
			;
		err = qcow2_write_at(q, buf + i * q->cs, (j - i) * q->cs, host[i]);
	}
	return err;
}

/* Whole clusters needing allocation, in a row (a sequential write): take
 * them back to back from the allocator, then write them without the lock,
 * contiguous stretches with one pwrite each, as QEMU does. The caller made
 * sure the first is not busy; the run stops at a busy one. Returns bytes
 * done in *done (0: none). */
static int alloc_run(struct qcow2 *q, struct l2_slot *s, uint64_t idx,
		     const uint8_t *buf, uint64_t off, size_t len, size_t *done)
{
	uint64_t per = 1ULL << q->l2_bits, cl = off >> q->h.cluster_bits, i;
	uint64_t host[RUN_MAX];
	int err = 0;

	*done = 0;
	for (i = 0; i < RUN_MAX && (i + 1) * q->cs <= len && idx + i < per; i++) {
		if (!needs_alloc(q, be64toh(s->tbl[idx + i])) ||
		    (q->v3 && all_zero(buf + i * q->cs, q->cs)) ||
		    (i && qcow2_busy_overlaps(q, cl + i, 1)))
			break;
		err = qcow2_alloc_cluster(q, &host[i]);
		if (err)
			return err;
	}
	if (!i)
		return 0;
	qcow2_busy_claim(q, cl, i);
	pthread_mutex_unlock(&q->lock);
	err = write_hosts(q, buf, host, i);
	pthread_mutex_lock(&q->lock);
	for (uint64_t j = 0; !err && j < i; j++)
		err = set_entry_at(q, off + j * q->cs, host[j] | QCOW2_OFLAG_COPIED);
	qcow2_busy_release(q, cl);
	*done = (size_t)(i * q->cs);
	return err;
}

/* In place, into clusters this image owns: no metadata changes, so the
 * lock is not needed for the write itself. */
static int write_inplace(struct qcow2 *q, struct l2_slot *s, uint64_t idx, uint64_t host,
			 const uint8_t *buf, uint64_t co, size_t len, size_t *done)
{
	int err;

	*done = inplace_run(q, s, idx, host, co, len);
	pthread_mutex_unlock(&q->lock);
	err = qcow2_write_at(q, buf, *done, host + co);
	pthread_mutex_lock(&q->lock);
	return err;
}

static int write_chunk(struct qcow2 *q, const uint8_t *buf, uint64_t off,
		       size_t len, size_t *done)
{
	uint64_t co = off & (q->cs - 1), idx = l2_index(q, off), host, e;
	struct l2_slot *s;
	enum qcow2_kind kind;
	int err;

again:
	err = qcow2_l2_get(q, off, true, &s);
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
	if (kind == QK_DATA)
		return write_inplace(q, s, idx, host, buf, co, len, done);
	if (qcow2_busy_blocks(q, off >> q->h.cluster_bits)) {
		qcow2_busy_wait(q);
		goto again;
	}
	if (co == 0 && len >= q->cs) {
		err = alloc_run(q, s, idx, buf, off, len, done);
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
		int err;

		/* Not under an allocating write in flight: it would set the
		 * entry after us and undo the discard of a finished write. */
		while (qcow2_busy_overlaps(q, c >> q->h.cluster_bits, 1))
			qcow2_busy_wait(q);
		err = qcow2_l2_get(q, c, q->v3, &s);

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
