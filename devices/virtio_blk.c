/* virtio-blk (virtio 1.2 §5.2) over a block back-end: raw or qcow2. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/epoll.h>

#include "devices/blk_io.h"
#include "devices/virtio_devices.h"
#include "devices/virtio_mmio.h"
#include "images/blk_backend.h"
#include "common/snap_buf.h"
#include "common/log.h"
#include "vmm/vm.h"

#define VIRTIO_BLK_F_SEG_MAX 2
#define VIRTIO_BLK_F_RO      5
#define VIRTIO_BLK_F_FLUSH   9

#define VIRTIO_BLK_T_IN     0
#define VIRTIO_BLK_T_OUT    1
#define VIRTIO_BLK_T_FLUSH  4
#define VIRTIO_BLK_T_GET_ID 8

#define VIRTIO_BLK_S_OK     0
#define VIRTIO_BLK_S_IOERR  1
#define VIRTIO_BLK_S_UNSUPP 2

#define SECTOR 512
#define ID_BYTES 20
#define QUEUE_SIZE 256

struct blk_req_hdr {
	uint32_t type;
	uint32_t reserved;
	uint64_t sector;
};

struct blk_config {
	uint64_t capacity;
	uint32_t size_max;
	uint32_t seg_max;
} __attribute__((packed));

struct vblk {
	struct blk_backend *backend;
	struct blk_config config;
	char id[ID_BYTES];
	struct virtio_dev_ops ops;	/* per device: features depend on read-only */
	struct virtio_dev *dev;
	struct blk_io io;
	bool io_ready;
};

/* Data buffers: every descriptor between the header and the status byte.
 * Runs on a worker thread (blk_io.c), without the device lock: it touches
 * only the request and the back-end, which serialises what must be. */
static uint8_t do_rw(struct blk_req *r)
{
	struct blk_backend *be = r->backend;
	struct vq_chain *c = &r->c;
	bool in = r->type == VIRTIO_BLK_T_IN;
	uint64_t off = r->sector * SECTOR, total = 0;

	if (r->sector > be->size / SECTOR)
		return VIRTIO_BLK_S_IOERR;
	for (int i = 1; i < c->nr - 1; i++) {
		struct vq_buf *d = &c->buf[i];
		int ret;

		/* Reads fill writable buffers; writes take readable ones. */
		if (d->writable != in || d->len % SECTOR)
			return VIRTIO_BLK_S_IOERR;
		if (d->len > be->size - off)
			return VIRTIO_BLK_S_IOERR;
		ret = in ? be->ops->read(be, d->host, off, d->len) :
			   be->ops->write(be, d->host, off, d->len);
		if (ret)
			return VIRTIO_BLK_S_IOERR;
		off += d->len;
		total += d->len;
	}
	if (in)
		r->written = (uint32_t)total;
	return VIRTIO_BLK_S_OK;
}

static void blk_exec(struct blk_req *r)
{
	r->written = 0;
	if (r->type == VIRTIO_BLK_T_FLUSH)
		r->status = r->backend->ops->flush(r->backend) ? VIRTIO_BLK_S_IOERR
							       : VIRTIO_BLK_S_OK;
	else
		r->status = do_rw(r);
}

/*
 * On the event loop: answer what needs no disk at once (1: @status and
 * @written set), or leave the request to the workers (0).
 */
static int classify(struct vblk *b, struct blk_req *r, uint8_t *status, uint32_t *written)
{
	struct vq_chain *c = &r->c;
	struct blk_req_hdr h;

	*written = 0;
	*status = VIRTIO_BLK_S_IOERR;
	if (c->nr < 2 || vq_chain_read(c, 0, &h, sizeof(h)) != sizeof(h) ||
	    c->buf[0].writable || c->buf[0].len != sizeof(h))
		return 1;
	r->type = h.type;
	r->sector = h.sector;
	r->backend = b->backend;
	r->barrier = h.type == VIRTIO_BLK_T_FLUSH;
	switch (h.type) {
	case VIRTIO_BLK_T_OUT:
		return b->backend->read_only ? 1 : 0;
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_FLUSH:
		return 0;
	case VIRTIO_BLK_T_GET_ID:
		if (c->nr != 3 || !c->buf[1].writable)
			return 1;
		*written = (uint32_t)vq_chain_write(c, 0, b->id, ID_BYTES);
		*status = VIRTIO_BLK_S_OK;
		return 1;
	default:
		*status = VIRTIO_BLK_S_UNSUPP;
		return 1;
	}
}

/* Pop and dispatch; at most QUEUE_SIZE requests are with the workers, so
 * a guest re-posting descriptors cannot make us allocate without bound
 * (completions resume popping). Device lock held. */
static void blk_pop_all(struct virtio_dev *d, uint16_t q)
{
	struct vblk *b = d->priv;
	int n = 0;

	while (blk_io_pending(&b->io) < QUEUE_SIZE) {
		struct blk_req *r = blk_io_alloc(&b->io);
		struct vq_buf *st;
		uint32_t written;
		uint8_t status;

		if (!r || vq_pop(&d->vq[q], &r->c) != 1) {
			if (r)
				blk_io_free(&b->io, r);
			break;
		}
		/* The last descriptor must be a writable status byte. */
		st = &r->c.buf[r->c.nr - 1];
		if (!st->writable || st->len < 1) {
			vq_push(&d->vq[q], r->c.head, 0);
		} else if (classify(b, r, &status, &written)) {
			st->host[0] = status;
			vq_push(&d->vq[q], r->c.head, written + 1);
		} else {
			r->q = q;
			blk_io_submit(&b->io, r);
			continue;
		}
		blk_io_free(&b->io, r);
		n++;
	}
	if (d->vq[q].broken)
		log_warn("virtio-blk: guest sent a malformed request; queue stopped");
	if (n)
		virtio_notify_used(d, q);
}

static void blk_notify(struct virtio_dev *d, uint16_t q)
{
	blk_pop_all(d, q);
}

/* Return finished requests to the guest (device lock held); with @more,
 * pop what waited for room. */
static void blk_complete(struct virtio_dev *d, bool more)
{
	struct vblk *b = d->priv;
	struct blk_req *r = blk_io_collect(&b->io);
	bool used = r != NULL;

	while (r) {
		struct blk_req *next = r->next;

		r->c.buf[r->c.nr - 1].host[0] = r->status;
		vq_push(&d->vq[r->q], r->c.head, r->written + 1);
		blk_io_free(&b->io, r);
		r = next;
	}
	if (used)
		virtio_notify_used(d, 0);
	if (more && used)
		blk_pop_all(d, 0);
}

/* The workers' eventfd fired (event-loop thread). */
static void on_done(void *opaque, uint32_t events)
{
	struct virtio_dev *d = opaque;

	pthread_mutex_lock(&d->lock);
	blk_complete(d, true);
	pthread_mutex_unlock(&d->lock);
}

/* Driver reset (vCPU thread, device lock held): the guest's buffers are
 * about to be reused, so nothing may be in flight once we return. The
 * vCPU waits for the disk here, as the guest asked. */
static void blk_reset(struct virtio_dev *d)
{
	struct vblk *b = d->priv;
	struct blk_req *r;

	blk_io_wait_idle(&b->io);
	r = blk_io_collect(&b->io);
	while (r) {
		struct blk_req *next = r->next;

		blk_io_free(&b->io, r);
		r = next;
	}
}

/* Before a checkpoint, rollback or snapshot (VM paused, event-loop
 * thread): finish every request in flight and return it to the guest, so
 * the saved queue state has no request half done and the back-end may be
 * swapped. Requests still in the available ring stay there. */
static void blk_quiesce(struct virtio_dev *d)
{
	struct vblk *b = d->priv;

	blk_io_wait_idle(&b->io);
	blk_complete(d, false);
}

static int blk_start(struct virtio_dev *d)
{
	struct vblk *b = d->priv;

	return blk_io_start(&b->io);
}

static void blk_read_config(struct virtio_dev *d, uint32_t off, uint8_t *data, uint32_t len)
{
	struct vblk *b = d->priv;

	memcpy(data, (uint8_t *)&b->config + off, len);
}

static void blk_destroy(struct virtio_dev *d)
{
	struct vblk *b = d->priv;

	if (b->io_ready)
		ev_del(&d->vm->loop, b->io.efd);
	blk_io_fini(&b->io);
	blk_close(b->backend);
	free(b);
}

/* The disk's contents are a snapshot's disk layer; here only its shape. */
static int blk_save(struct virtio_dev *d, struct snap_w *w)
{
	struct vblk *b = d->priv;

	snap_w_u64(w, b->config.capacity);
	snap_w_u8(w, b->backend->read_only);
	return 0;
}

static int blk_load(struct virtio_dev *d, struct snap_r *r, bool apply)
{
	struct vblk *b = d->priv;
	uint64_t cap = snap_r_u64(r);
	uint8_t ro = snap_r_u8(r);

	return r->err || cap != b->config.capacity || ro != b->backend->read_only ? -EBADMSG : 0;
}

struct blk_backend *virtio_blk_backend(struct virtio_dev *d)
{
	return ((struct vblk *)d->priv)->backend;
}

struct blk_backend *virtio_blk_swap_backend(struct virtio_dev *d, struct blk_backend *nb)
{
	struct vblk *b = d->priv;
	struct blk_backend *old;

	/* The old one may already be closed: compare with what the guest was told. */
	if (nb->size / SECTOR != b->config.capacity ||
	    nb->read_only != (bool)((b->ops.features >> VIRTIO_BLK_F_RO) & 1))
		return NULL;
	pthread_mutex_lock(&d->lock);
	old = b->backend;
	b->backend = nb;
	pthread_mutex_unlock(&d->lock);
	return old;
}

static const struct virtio_dev_ops blk_ops_template = {
	.name = "virtio-blk",
	.device_id = VIRTIO_ID_BLOCK,
	.num_queues = 1,
	.queue_max = QUEUE_SIZE,
	.config_size = sizeof(struct blk_config),
	.read_config = blk_read_config,
	.notify = blk_notify,
	.reset = blk_reset,
	.quiesce = blk_quiesce,
	.start = blk_start,
	.destroy = blk_destroy,
	.save = blk_save,
	.load = blk_load,
};

int virtio_blk_create(struct vm *vm, struct blk_backend *backend, const char *id)
{
	struct virtio_dev *d;
	struct vblk *b = calloc(1, sizeof(*b));
	int ret = b ? blk_io_init(&b->io, blk_exec) : -ENOMEM;

	if (ret) {
		free(b);
		blk_close(backend);
		return ret;
	}
	b->backend = backend;
	b->config.capacity = backend->size / SECTOR;
	b->config.seg_max = QUEUE_SIZE - 2;
	/* The id is a fixed 20-byte field, NUL-padded, not NUL-terminated. */
	if (id)
		memcpy(b->id, id, strnlen(id, ID_BYTES));
	b->ops = blk_ops_template;
	/* EVENT_IDX: with many requests in flight the driver kicks only when
	 * we asked (the queue was found empty) and we interrupt only past
	 * its used_event, not once per request: exits are what a disk-bound
	 * guest pays most for. A queue stopped at the in-flight cap is popped
	 * again by the completions, so no kick is needed for it. */
	b->ops.features = (1ULL << VIRTIO_BLK_F_FLUSH) | (1ULL << VIRTIO_BLK_F_SEG_MAX) |
			  (1ULL << VIRTIO_F_EVENT_IDX) |
			  (backend->read_only ? 1ULL << VIRTIO_BLK_F_RO : 0);
	ret = virtio_mmio_create(vm, &b->ops, b, &d);
	if (ret) {
		/* virtio_mmio_create called blk_destroy only if it got that far. */
		return ret;
	}
	b->dev = d;
	ret = ev_add(&vm->loop, b->io.efd, EPOLLIN, on_done, d);
	b->io_ready = ret == 0;
	return ret;
}
