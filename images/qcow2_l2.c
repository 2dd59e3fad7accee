/*
 * qcow2 L1 table and L2 table cache ("Cluster mapping").
 *
 * Tables are cached in their on-disk byte order so write-back is a plain
 * pwrite. A dirty table is only written by the ordered flush: evicting one
 * runs a full flush first, so an L2 table never reaches the disk before the
 * refcounts and data it points at.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "images/qcow2_int.h"
#include "common/log.h"

int qcow2_l2_init(struct qcow2 *q, unsigned nslots)
{
	q->nslots = nslots;
	q->slots = calloc(nslots, sizeof(*q->slots));
	q->l1_slot = calloc(q->h.l1_size ? q->h.l1_size : 1, sizeof(*q->l1_slot));
	if (!q->slots || !q->l1_slot)
		return -ENOMEM;
	return 0;
}

void qcow2_l2_release(struct qcow2 *q)
{
	for (unsigned i = 0; q->slots && i < q->nslots; i++)
		free(q->slots[i].tbl);
	free(q->slots);
	free(q->l1_slot);
}

static struct l2_slot *pick_victim(struct qcow2 *q)
{
	struct l2_slot *best = &q->slots[0];

	for (unsigned i = 0; i < q->nslots; i++) {
		struct l2_slot *s = &q->slots[i];

		if (!s->off)
			return s;
		if (s->lru < best->lru)
			best = s;
	}
	return best;
}

static int take_slot(struct qcow2 *q, struct l2_slot **out)
{
	struct l2_slot *s = pick_victim(q);
	int err;

	if (s->dirty) {
		err = qcow2_flush_locked(q);
		if (err)
			return err;
	}
	if (s->off)
		q->l1_slot[s->l1_idx] = 0;
	s->off = 0;
	if (!s->tbl) {
		s->tbl = malloc(q->cs);
		if (!s->tbl)
			return -ENOMEM;
	}
	*out = s;
	return 0;
}

static int load_or_create(struct qcow2 *q, struct l2_slot *s, uint32_t i)
{
	uint64_t off = q->l1[i] & QCOW2_OFFSET_MASK;
	int err;

	if (off) {
		s->dirty = false;
		return file_pread(q->fd, s->tbl, q->cs, off);
	}
	/* A new table: it must be on disk before the L1 entry (flush order). */
	err = qcow2_alloc_cluster(q, &off);
	if (err)
		return err;
	memset(s->tbl, 0, q->cs);
	s->dirty = true;
	q->l1[i] = off | QCOW2_OFLAG_COPIED;
	q->l1_dirty = true;
	return 0;
}

int qcow2_l2_get(struct qcow2 *q, uint64_t goff, bool alloc, struct l2_slot **slot)
{
	uint64_t i = l1_index(q, goff), l1e, off;
	struct l2_slot *s;
	int err;

	*slot = NULL;
	if (i >= q->h.l1_size)
		return -EIO;
	if (q->l1_slot[i]) {
		s = &q->slots[q->l1_slot[i] - 1];
		s->lru = ++q->tick;
		*slot = s;
		return 0;
	}
	l1e = q->l1[i];
	off = l1e & QCOW2_OFFSET_MASK;
	if ((l1e & QCOW2_L1_RESERVED) || (off && !qcow2_host_off_ok(q, off, q->cs))) {
		log_error("qcow2 %s: L1 entry %" PRIu64 " (0x%" PRIx64
			  ") invalid or outside the file", q->path, i, l1e);
		return -EIO;
	}
	if (!off && !alloc)
		return 0;
	err = take_slot(q, &s);
	if (!err)
		err = load_or_create(q, s, (uint32_t)i);
	if (err)
		return err;
	s->off = q->l1[i] & QCOW2_OFFSET_MASK;
	s->l1_idx = (uint32_t)i;
	s->lru = ++q->tick;
	q->l1_slot[i] = (uint32_t)(s - q->slots) + 1;
	*slot = s;
	return 0;
}

int qcow2_l2_write_dirty(struct qcow2 *q, bool *wrote)
{
	int err;

	*wrote = false;
	for (unsigned i = 0; i < q->nslots; i++) {
		struct l2_slot *s = &q->slots[i];

		if (!s->off || !s->dirty)
			continue;
		err = qcow2_write_at(q, s->tbl, q->cs, s->off);
		if (err)
			return err;
		s->dirty = false;
		*wrote = true;
	}
	return 0;
}

int qcow2_l1_write(struct qcow2 *q)
{
	size_t bytes = (size_t)q->h.l1_size * 8;
	uint64_t *be = malloc(bytes ? bytes : 8);
	int err;

	if (!be)
		return -ENOMEM;
	for (uint32_t i = 0; i < q->h.l1_size; i++)
		be[i] = htobe64(q->l1[i]);
	err = qcow2_write_at(q, be, bytes, q->h.l1_off);
	free(be);
	if (!err)
		q->l1_dirty = false;
	return err;
}
