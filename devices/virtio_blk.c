/* virtio-blk (virtio 1.2 §5.2) over a block back-end: raw or qcow2. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
};

/* Data buffers: every descriptor between the header and the status byte. */
static uint8_t do_rw(struct vblk *b, struct vq_chain *c, const struct blk_req_hdr *h,
		     uint32_t *written)
{
	bool in = h->type == VIRTIO_BLK_T_IN;
	uint64_t off = h->sector * SECTOR, total = 0;

	if (h->sector > b->backend->size / SECTOR)
		return VIRTIO_BLK_S_IOERR;
	for (int i = 1; i < c->nr - 1; i++) {
		struct vq_buf *d = &c->buf[i];
		int ret;

		/* Reads fill writable buffers; writes take readable ones. */
		if (d->writable != in || d->len % SECTOR)
			return VIRTIO_BLK_S_IOERR;
		if (d->len > b->backend->size - off)
			return VIRTIO_BLK_S_IOERR;
		ret = in ? b->backend->ops->read(b->backend, d->host, off, d->len) :
			   b->backend->ops->write(b->backend, d->host, off, d->len);
		if (ret)
			return VIRTIO_BLK_S_IOERR;
		off += d->len;
		total += d->len;
	}
	if (in)
		*written = (uint32_t)total;
	return VIRTIO_BLK_S_OK;
}

static uint8_t handle(struct vblk *b, struct vq_chain *c, uint32_t *written)
{
	struct blk_req_hdr h;

	*written = 0;
	if (c->nr < 2 || vq_chain_read(c, 0, &h, sizeof(h)) != sizeof(h) ||
	    c->buf[0].writable || c->buf[0].len != sizeof(h))
		return VIRTIO_BLK_S_IOERR;
	switch (h.type) {
	case VIRTIO_BLK_T_IN:
		return do_rw(b, c, &h, written);
	case VIRTIO_BLK_T_OUT:
		if (b->backend->read_only)
			return VIRTIO_BLK_S_IOERR;
		return do_rw(b, c, &h, written);
	case VIRTIO_BLK_T_FLUSH:
		return b->backend->ops->flush(b->backend) ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_GET_ID:
		if (c->nr != 3 || !c->buf[1].writable)
			return VIRTIO_BLK_S_IOERR;
		*written = (uint32_t)vq_chain_write(c, 0, b->id, ID_BYTES);
		return VIRTIO_BLK_S_OK;
	default:
		return VIRTIO_BLK_S_UNSUPP;
	}
}

static void blk_notify(struct virtio_dev *d, uint16_t q)
{
	struct vblk *b = d->priv;
	struct vq_chain *c = malloc(sizeof(*c));
	int n = 0;

	if (!c)
		return;
	while (vq_pop(&d->vq[q], c) == 1) {
		struct vq_buf *st = &c->buf[c->nr - 1];
		uint32_t written;
		uint8_t status;

		/* The last descriptor must be a writable status byte. */
		if (!st->writable || st->len < 1) {
			vq_push(&d->vq[q], c->head, 0);
			n++;
			continue;
		}
		status = handle(b, c, &written);
		st->host[0] = status;
		vq_push(&d->vq[q], c->head, written + 1);
		n++;
	}
	if (d->vq[q].broken)
		log_warn("virtio-blk: guest sent a malformed request; queue stopped");
	if (n)
		virtio_notify_used(d, q);
	free(c);
}

static void blk_read_config(struct virtio_dev *d, uint32_t off, uint8_t *data, uint32_t len)
{
	struct vblk *b = d->priv;

	memcpy(data, (uint8_t *)&b->config + off, len);
}

static void blk_destroy(struct virtio_dev *d)
{
	struct vblk *b = d->priv;

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
	.destroy = blk_destroy,
	.save = blk_save,
	.load = blk_load,
};

int virtio_blk_create(struct vm *vm, struct blk_backend *backend, const char *id)
{
	struct virtio_dev *d;
	struct vblk *b = calloc(1, sizeof(*b));
	int ret;

	if (!b) {
		blk_close(backend);
		return -ENOMEM;
	}
	b->backend = backend;
	b->config.capacity = backend->size / SECTOR;
	b->config.seg_max = QUEUE_SIZE - 2;
	/* The id is a fixed 20-byte field, NUL-padded, not NUL-terminated. */
	if (id)
		memcpy(b->id, id, strnlen(id, ID_BYTES));
	b->ops = blk_ops_template;
	b->ops.features = (1ULL << VIRTIO_BLK_F_FLUSH) | (1ULL << VIRTIO_BLK_F_SEG_MAX) |
			  (backend->read_only ? 1ULL << VIRTIO_BLK_F_RO : 0);
	ret = virtio_mmio_create(vm, &b->ops, b, &d);
	if (ret) {
		/* virtio_mmio_create called blk_destroy only if it got that far. */
		return ret;
	}
	return 0;
}
