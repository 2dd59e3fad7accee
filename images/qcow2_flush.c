/*
 * qcow2 ordered metadata write-back: the crash-safety argument lives here.
 *
 * Without lazy refcounts a qcow2 image stays consistent if every cluster's
 * refcount is on disk before anything references it, and every reference
 * is dropped on disk before the refcount goes down (QEMU's "refcounts
 * before L2 before L1" rule). So one flush is:
 *   1. refcount blocks (then, after a sync, the refcount table),
 *   2. fdatasync: new data and refcounts are durable,
 *   3. header, if the refcount table moved, and fdatasync,
 *   4. dirty L2 tables, fdatasync if the L1 changes too,
 *   5. the L1 table, fdatasync,
 *   6. only now decrement refcounts of clusters dropped in 4-5.
 * A crash anywhere leaves at worst clusters with a refcount and no user
 * (leaks, which `qemu-img check` reports but never needs to repair).
 */
#include <errno.h>

#include "images/qcow2_int.h"

static bool meta_dirty(const struct qcow2 *q)
{
	if (q->l1_dirty || q->rt_dirty || q->rt_moved || q->npending)
		return true;
	for (unsigned i = 0; i < q->nslots; i++)
		if (q->slots[i].off && q->slots[i].dirty)
			return true;
	for (uint64_t i = 0; i < q->rt_entries; i++)
		if (q->rb_dirty[i])
			return true;
	return false;
}

static int write_rt_header(struct qcow2 *q)
{
	uint8_t f[12];
	int err;

	/* rt offset and size are adjacent: one 12-byte write in one sector. */
	put_be64(f, q->rt_off);
	put_be32(f + 8, q->rt_clusters);
	err = qcow2_write_at(q, f, sizeof(f), QH_RT_OFF);
	if (!err)
		err = qcow2_sync_q(q);
	if (!err)
		q->rt_moved = false;
	return err;
}

static int apply_pending_frees(struct qcow2 *q)
{
	int err = 0;

	for (size_t i = 0; !err && i < q->npending; i++) {
		err = qcow2_rc_update(q, q->pending_free[i], -1);
		/* Best effort: give the space back to the host filesystem. */
		if (!err)
			qcow2_punch(q, q->pending_free[i], q->cs);
	}
	q->npending = 0;
	return err;
}

static int write_mapping(struct qcow2 *q)
{
	bool wrote;
	int err = qcow2_l2_write_dirty(q, &wrote);

	if (!err && q->l1_dirty) {
		if (wrote)
			err = qcow2_sync_q(q);
		if (!err)
			err = qcow2_l1_write(q);
		wrote = true;
	}
	if (!err && wrote)
		err = qcow2_sync_q(q);
	return err;
}

int qcow2_flush_locked(struct qcow2 *q)
{
	bool frees;
	int err;

	if (q->b.read_only)
		return 0;
	if (!meta_dirty(q)) {
		if (!q->data_dirty)
			return 0;
		err = qcow2_sync_q(q);
		if (!err)
			q->data_dirty = false;
		return err;
	}
	frees = q->npending != 0;
	err = qcow2_rc_write_dirty(q);
	if (!err)
		err = qcow2_sync_q(q);
	if (!err)
		q->data_dirty = false;
	if (!err && q->rt_moved)
		err = write_rt_header(q);
	if (!err)
		err = write_mapping(q);
	if (!err && frees)
		err = apply_pending_frees(q);
	return err;
}
