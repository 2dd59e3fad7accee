/*
 * Snapshot section of a virtio-mmio device (version 1): device type, offered
 * and acked features, status, selectors, interrupt status, config
 * generation; per queue size, ready, ring addresses, next-avail and
 * next-used; then the device's own bytes. Loading checks everything a guest
 * or a tampered file could have put there (queue sizes, ring addresses
 * inside RAM, features we never offered) before anything changes, and after
 * loading re-notifies every queue: a buffer the driver made available just
 * before the snapshot must not wait for a kick that already happened.
 */
#include <errno.h>
#include <string.h>

#include "devices/virtio_mmio.h"
#include "common/snap_buf.h"
#include "vmm/vm.h"

#define STATUS_DRIVER_OK 4

int virtio_mmio_save(void *dev, struct snap_w *w)
{
	struct virtio_dev *d = dev;
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	snap_w_u32(w, d->ops->device_id);
	snap_w_u64(w, d->ops->features);
	snap_w_u32(w, d->status);
	snap_w_u32(w, d->dev_feat_sel);
	snap_w_u32(w, d->drv_feat_sel);
	snap_w_u32(w, d->queue_sel);
	snap_w_u64(w, d->driver_features);
	snap_w_u32(w, __atomic_load_n(&d->isr, __ATOMIC_SEQ_CST));
	snap_w_u32(w, d->config_generation);
	snap_w_u16(w, d->ops->num_queues);
	for (int q = 0; q < d->ops->num_queues; q++) {
		const struct virtqueue *vq = &d->vq[q];

		snap_w_u16(w, vq->size);
		snap_w_u8(w, vq->ready);
		snap_w_u8(w, vq->broken);
		snap_w_u64(w, vq->desc_gpa);
		snap_w_u64(w, vq->avail_gpa);
		snap_w_u64(w, vq->used_gpa);
		snap_w_u16(w, vq->last_avail);
		snap_w_u16(w, vq->used_idx);
	}
	if (d->ops->save)
		ret = d->ops->save(d, w);
	pthread_mutex_unlock(&d->lock);
	return ret ? ret : w->err;
}

/* A ready queue must pass the same checks as when the driver set it up. */
static int check_queue(struct virtio_dev *d, struct virtqueue *vq)
{
	struct virtqueue tmp = *vq;

	if (!vq->ready)
		return vq->size > VQ_MAX_SIZE ? -EBADMSG : 0;
	if (vq->size > d->ops->queue_max || vq_activate(&tmp, &d->vm->mem))
		return -EBADMSG;
	return 0;
}

static void read_queue(struct snap_r *r, struct virtqueue *vq)
{
	uint8_t ready, broken;

	vq->size = snap_r_u16(r);
	ready = snap_r_u8(r);
	broken = snap_r_u8(r);
	if (ready > 1 || broken > 1)
		r->err = -EBADMSG;
	vq->ready = ready;
	vq->broken = broken;
	vq->desc_gpa = snap_r_u64(r);
	vq->avail_gpa = snap_r_u64(r);
	vq->used_gpa = snap_r_u64(r);
	vq->last_avail = snap_r_u16(r);
	vq->used_idx = snap_r_u16(r);
}

struct transport {
	uint32_t status, dev_feat_sel, drv_feat_sel, queue_sel, isr, gen;
	uint64_t driver_features;
	struct virtqueue vq[VIRTIO_MAX_QUEUES];
};

static int read_transport(struct virtio_dev *d, struct snap_r *r, struct transport *t)
{
	uint64_t offered = d->ops->features | (1ULL << VIRTIO_F_VERSION_1);
	uint32_t id = snap_r_u32(r);
	uint64_t features = snap_r_u64(r);
	uint16_t nq;

	t->status = snap_r_u32(r);
	t->dev_feat_sel = snap_r_u32(r);
	t->drv_feat_sel = snap_r_u32(r);
	t->queue_sel = snap_r_u32(r);
	t->driver_features = snap_r_u64(r);
	t->isr = snap_r_u32(r);
	t->gen = snap_r_u32(r);
	nq = snap_r_u16(r);
	/* A device may offer more than when the snapshot was taken (a new
	 * offload): the driver negotiated from the old set and keeps it. */
	if (r->err || id != d->ops->device_id || (features & ~d->ops->features) ||
	    nq != d->ops->num_queues)
		return -EBADMSG;	/* another device (or device model) in this slot */
	if (t->status > 0xff || t->isr > 3 || (t->driver_features & ~offered))
		return -EBADMSG;
	for (int q = 0; q < nq; q++) {
		read_queue(r, &t->vq[q]);
		if (r->err || check_queue(d, &t->vq[q]))
			return -EBADMSG;
	}
	return 0;
}

static void apply_transport(struct virtio_dev *d, const struct transport *t)
{
	d->status = t->status;
	d->dev_feat_sel = t->dev_feat_sel;
	d->drv_feat_sel = t->drv_feat_sel;
	d->queue_sel = t->queue_sel;
	d->driver_features = t->driver_features;
	__atomic_store_n(&d->isr, t->isr, __ATOMIC_SEQ_CST);
	d->config_generation = t->gen;
	for (int q = 0; q < d->ops->num_queues; q++) {
		d->vq[q] = t->vq[q];
		d->vq[q].mem = &d->vm->mem;
		/* Event-index state follows the negotiated features; with no
		 * record of the last interrupt, the next completion interrupts
		 * (a spurious interrupt is harmless, a missed one stalls). */
		d->vq[q].event_idx = (t->driver_features >> VIRTIO_F_EVENT_IDX) & 1;
		d->vq[q].signalled_valid = false;
	}
}

int virtio_mmio_load(void *dev, struct snap_r *r, uint32_t version, bool apply)
{
	struct virtio_dev *d = dev;
	struct transport t;
	int ret;

	memset(&t, 0, sizeof(t));
	if (version != VIRTIO_SNAP_VERSION)
		return -EPROTO;
	pthread_mutex_lock(&d->lock);
	ret = read_transport(d, r, &t);
	if (!ret && apply)
		apply_transport(d, &t);
	if (!ret && d->ops->load)
		ret = d->ops->load(d, r, apply);
	if (!ret)
		ret = snap_r_done(r);
	if (!ret && apply && (d->status & STATUS_DRIVER_OK) && d->ops->notify)
		for (uint16_t q = 0; q < d->ops->num_queues; q++)
			d->ops->notify(d, q);
	pthread_mutex_unlock(&d->lock);
	return ret;
}
