/*
 * qcow2 refcounts and cluster allocation ("Host cluster management").
 *
 * The allocator only appends at the end of the image: a cluster freed in
 * this session is never reused, so a crash can never leave one cluster
 * referenced twice (at worst it is leaked). New refcount blocks are placed
 * on the first free cluster, inside the range they describe, so they count
 * themselves; the refcount table grows by moving to a bigger copy.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "images/qcow2_int.h"
#include "common/log.h"

static int rc_set(struct qcow2 *q, uint64_t off, uint64_t val);

/* "Refcount block" entries are refcount_bits wide, big-endian; sub-byte
 * widths are packed from the least significant bit (QEMU's layout). */
static uint64_t rb_get(const uint8_t *blk, uint64_t i, unsigned order)
{
	switch (order) {
	case 3: return blk[i];
	case 4: return get_be16(blk + 2 * i);
	case 5: return get_be32(blk + 4 * i);
	case 6: return get_be64(blk + 8 * i);
	default: {
		unsigned bits = 1U << order;
		uint64_t bit = i * bits;

		return (blk[bit / 8] >> (bit % 8)) & ((1U << bits) - 1);
	}
	}
}

static void rb_set(uint8_t *blk, uint64_t i, unsigned order, uint64_t v)
{
	switch (order) {
	case 3: blk[i] = (uint8_t)v; break;
	case 4: put_be16(blk + 2 * i, (uint16_t)v); break;
	case 5: put_be32(blk + 4 * i, (uint32_t)v); break;
	case 6: put_be64(blk + 8 * i, v); break;
	default: {
		unsigned bits = 1U << order;
		uint64_t bit = i * bits;
		uint8_t mask = (uint8_t)(((1U << bits) - 1) << (bit % 8));

		blk[bit / 8] = (uint8_t)((blk[bit / 8] & ~mask) | ((v << (bit % 8)) & mask));
	}
	}
}

int qcow2_rc_load(struct qcow2 *q)
{
	uint64_t bytes = (uint64_t)q->h.rt_clusters * q->cs;
	int err;

	q->rb_entries = (q->cs * 8) >> q->h.refcount_order;
	q->rt_entries = bytes / 8;
	q->rt_off = q->h.rt_off;
	q->rt_clusters = q->h.rt_clusters;
	q->rt = malloc(bytes);
	q->rb = calloc(q->rt_entries, sizeof(*q->rb));
	q->rb_dirty = calloc(q->rt_entries, sizeof(*q->rb_dirty));
	if (!q->rt || !q->rb || !q->rb_dirty)
		return -ENOMEM;
	err = file_pread(q->fd, q->rt, bytes, q->rt_off);
	if (err)
		return err;
	for (uint64_t i = 0; i < q->rt_entries; i++)
		q->rt[i] = be64toh(q->rt[i]);
	return 0;
}

void qcow2_rc_release(struct qcow2 *q)
{
	for (uint64_t i = 0; q->rb && i < q->rt_entries; i++)
		free(q->rb[i]);
	free(q->rb);
	free(q->rb_dirty);
	free(q->rt);
	free(q->pending_free);
}

static int rb_load(struct qcow2 *q, uint64_t ri)
{
	uint64_t off = q->rt[ri];
	int err;

	if ((off & QCOW2_RT_RESERVED) || !qcow2_host_off_ok(q, off, q->cs)) {
		log_error("qcow2 %s: refcount block %" PRIu64 " offset 0x%" PRIx64
			  " invalid or outside the file", q->path, ri, off);
		return -EIO;
	}
	q->rb[ri] = malloc(q->cs);
	if (!q->rb[ri])
		return -ENOMEM;
	err = file_pread(q->fd, q->rb[ri], q->cs, off);
	if (err) {
		free(q->rb[ri]);
		q->rb[ri] = NULL;
	}
	return err;
}

static uint64_t bump(struct qcow2 *q, uint64_t nclusters)
{
	uint64_t off = q->next_free;

	q->next_free += nclusters * q->cs;
	if (q->next_free > q->file_bound)
		q->file_bound = q->next_free;
	return off;
}

/* Pick a table size that also covers the clusters the move itself takes. */
static uint64_t new_rt_entries(const struct qcow2 *q, uint64_t need_ri)
{
	uint64_t per = q->cs / 8, span = q->cs * q->rb_entries;
	uint64_t n = q->rt_entries * 2 > need_ri + 1 ? q->rt_entries * 2 : need_ri + 1;

	for (;;) {
		uint64_t end;

		n = (n + per - 1) / per * per;
		end = q->next_free + (n / per + 2) * q->cs;
		if (end / span < n)
			return n;
		n = end / span + 1;
	}
}

static int grow_rt(struct qcow2 *q, uint64_t need_ri)
{
	uint64_t n = new_rt_entries(q, need_ri), nclusters = n * 8 / q->cs;
	uint64_t old_off = q->rt_off, old_clusters = q->rt_clusters, off;
	uint64_t *rt;
	uint8_t **rb;
	bool *dirty;
	int err;

	if (nclusters * q->cs > QCOW2_MAX_REFTABLE_BYTES) {
		log_error("qcow2 %s: refcount table would exceed %u bytes", q->path,
			  QCOW2_MAX_REFTABLE_BYTES);
		return -EFBIG;
	}
	rt = calloc(n, sizeof(*rt));
	rb = calloc(n, sizeof(*rb));
	dirty = calloc(n, sizeof(*dirty));
	if (!rt || !rb || !dirty) {
		free(rt), free(rb), free(dirty);
		return -ENOMEM;
	}
	memcpy(rt, q->rt, q->rt_entries * sizeof(*rt));
	memcpy(rb, q->rb, q->rt_entries * sizeof(*rb));
	memcpy(dirty, q->rb_dirty, q->rt_entries * sizeof(*dirty));
	free(q->rt), free(q->rb), free(q->rb_dirty);
	q->rt = rt, q->rb = rb, q->rb_dirty = dirty, q->rt_entries = n;
	off = bump(q, nclusters);
	q->rt_off = off, q->rt_clusters = (uint32_t)nclusters;
	q->rt_dirty = q->rt_moved = true;
	/* The old table stays valid on disk until the header points away. */
	for (uint64_t i = 0; i < old_clusters; i++) {
		err = qcow2_defer_free(q, old_off + i * q->cs);
		if (err)
			return err;
	}
	for (uint64_t i = 0; i < nclusters; i++) {
		err = rc_set(q, off + i * q->cs, 1);
		if (err)
			return err;
	}
	return 0;
}

/* Make refblock @ri resident; with @create, allocate it when missing.
 * Returns 1 when it does not exist and !create. */
static int ensure_rb(struct qcow2 *q, uint64_t ri, bool create)
{
	uint64_t off;
	int err;

	if (ri >= q->rt_entries) {
		if (!create)
			return 1;
		err = grow_rt(q, ri);
		if (err)
			return err;
	}
	if (q->rb[ri])
		return 0;
	if (q->rt[ri])
		return rb_load(q, ri);
	if (!create)
		return 1;
	q->rb[ri] = calloc(1, q->cs);
	if (!q->rb[ri])
		return -ENOMEM;
	off = bump(q, 1);
	q->rt[ri] = off;
	q->rb_dirty[ri] = true;
	q->rt_dirty = true;
	return rc_set(q, off, 1);
}

static int rc_set(struct qcow2 *q, uint64_t off, uint64_t val)
{
	uint64_t idx = off >> q->h.cluster_bits;
	uint64_t ri = idx / q->rb_entries;
	int err = ensure_rb(q, ri, true);

	if (err)
		return err;
	rb_set(q->rb[ri], idx % q->rb_entries, q->h.refcount_order, val);
	q->rb_dirty[ri] = true;
	return 0;
}

int qcow2_rc_update(struct qcow2 *q, uint64_t off, int delta)
{
	uint64_t idx = off >> q->h.cluster_bits, ri = idx / q->rb_entries;
	uint64_t max = q->h.refcount_order == 6 ? UINT64_MAX
		       : (1ULL << (1U << q->h.refcount_order)) - 1;
	uint64_t cur = 0;
	int err = ensure_rb(q, ri, delta > 0);

	if (err < 0)
		return err;
	if (err == 0)
		cur = rb_get(q->rb[ri], idx % q->rb_entries, q->h.refcount_order);
	if ((delta < 0 && cur < (uint64_t)-delta) ||
	    (delta > 0 && max - cur < (uint64_t)delta)) {
		log_error("qcow2 %s: refcount of cluster 0x%" PRIx64 " would leave range",
			  q->path, off);
		return -EIO;
	}
	return rc_set(q, off, cur + (uint64_t)(int64_t)delta);
}

int qcow2_alloc_cluster(struct qcow2 *q, uint64_t *off)
{
	*off = bump(q, 1);
	return rc_set(q, *off, 1);
}

int qcow2_defer_free(struct qcow2 *q, uint64_t off)
{
	if (q->npending == q->cap_pending) {
		size_t cap = q->cap_pending ? q->cap_pending * 2 : 64;
		uint64_t *p = realloc(q->pending_free, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		q->pending_free = p, q->cap_pending = cap;
	}
	q->pending_free[q->npending++] = off;
	return 0;
}

static int write_rt(struct qcow2 *q)
{
	uint64_t *be = malloc(q->rt_entries * 8);
	int err;

	if (!be)
		return -ENOMEM;
	for (uint64_t i = 0; i < q->rt_entries; i++)
		be[i] = htobe64(q->rt[i]);
	err = qcow2_write_at(q, be, q->rt_entries * 8, q->rt_off);
	free(be);
	return err;
}

/* Refblocks first, then (after a sync) the table that points at new ones,
 * so the table never references a block whose contents are not on disk. */
int qcow2_rc_write_dirty(struct qcow2 *q)
{
	int err;

	for (uint64_t ri = 0; ri < q->rt_entries; ri++) {
		if (!q->rb_dirty[ri])
			continue;
		err = qcow2_write_at(q, q->rb[ri], q->cs, q->rt[ri]);
		if (err)
			return err;
		q->rb_dirty[ri] = false;
	}
	if (!q->rt_dirty)
		return 0;
	err = qcow2_sync_q(q);
	if (!err)
		err = write_rt(q);
	if (!err)
		q->rt_dirty = false;
	return err;
}
