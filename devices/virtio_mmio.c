/* virtio-mmio transport, version 2 (virtio 1.2 §4.2.2). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devices/virtio_mmio.h"
#include "vmm/boot_layout.h"
#include "common/log.h"
#include "vmm/vm.h"

#define REG_MAGIC          0x000
#define REG_VERSION        0x004
#define REG_DEVICE_ID      0x008
#define REG_VENDOR_ID      0x00c
#define REG_DEV_FEAT       0x010
#define REG_DEV_FEAT_SEL   0x014
#define REG_DRV_FEAT       0x020
#define REG_DRV_FEAT_SEL   0x024
#define REG_QUEUE_SEL      0x030
#define REG_QUEUE_NUM_MAX  0x034
#define REG_QUEUE_NUM      0x038
#define REG_QUEUE_READY    0x044
#define REG_QUEUE_NOTIFY   0x050
#define REG_INT_STATUS     0x060
#define REG_INT_ACK        0x064
#define REG_STATUS         0x070
#define REG_QUEUE_DESC_LO  0x080
#define REG_QUEUE_DESC_HI  0x084
#define REG_QUEUE_AVAIL_LO 0x090
#define REG_QUEUE_AVAIL_HI 0x094
#define REG_QUEUE_USED_LO  0x0a0
#define REG_QUEUE_USED_HI  0x0a4
#define REG_CONFIG_GEN     0x0fc
#define REG_CONFIG         0x100

#define STATUS_DRIVER_OK   4
#define STATUS_FEATURES_OK 8
#define STATUS_NEEDS_RESET 0x40
#define STATUS_FAILED      0x80
#define INT_VRING          1

#define MVM_VENDOR_ID      0x004d564d	/* "MVM" */

static uint64_t offered(const struct virtio_dev *d)
{
	return d->ops->features | (1ULL << VIRTIO_F_VERSION_1);
}

bool virtio_has_feature(const struct virtio_dev *d, unsigned bit)
{
	return bit < 64 && (d->driver_features >> bit) & 1;
}

void virtio_notify_used(struct virtio_dev *d, uint16_t q)
{
	uint64_t one = 1;

	if (q >= d->ops->num_queues || !vq_needs_interrupt(&d->vq[q]))
		return;
	__atomic_or_fetch(&d->isr, INT_VRING, __ATOMIC_SEQ_CST);
	if (write(d->irq_fd, &one, sizeof(one)) < 0)
		log_debug("%s: irqfd write failed", d->ops->name);
}

static struct virtqueue *cur_vq(struct virtio_dev *d)
{
	return d->queue_sel < d->ops->num_queues ? &d->vq[d->queue_sel] : NULL;
}

static void device_reset(struct virtio_dev *d)
{
	if (d->ops->reset)
		d->ops->reset(d);
	for (int i = 0; i < VIRTIO_MAX_QUEUES; i++)
		vq_reset(&d->vq[i]);
	d->status = 0;
	d->driver_features = 0;
	d->isr = 0;
	d->dev_feat_sel = d->drv_feat_sel = d->queue_sel = 0;
}

static uint32_t read_reg(struct virtio_dev *d, uint64_t off)
{
	struct virtqueue *vq = cur_vq(d);

	switch (off) {
	case REG_MAGIC: return 0x74726976;	/* "virt" */
	case REG_VERSION: return 2;
	case REG_DEVICE_ID: return d->ops->device_id;
	case REG_VENDOR_ID: return MVM_VENDOR_ID;
	case REG_DEV_FEAT:
		return d->dev_feat_sel < 2 ? (uint32_t)(offered(d) >> (32 * d->dev_feat_sel)) : 0;
	case REG_QUEUE_NUM_MAX: return vq ? d->ops->queue_max : 0;
	case REG_QUEUE_READY: return vq ? vq->ready : 0;
	case REG_INT_STATUS: return __atomic_load_n(&d->isr, __ATOMIC_SEQ_CST);
	case REG_STATUS: return d->status;
	case REG_CONFIG_GEN: return d->config_generation;
	default: return 0;
	}
}

static void set_addr(uint64_t *a, uint32_t v, bool hi)
{
	*a = hi ? (*a & 0xffffffffULL) | ((uint64_t)v << 32) : (*a & ~0xffffffffULL) | v;
}

static void queue_ready(struct virtio_dev *d, struct virtqueue *vq, uint32_t v)
{
	if (!v) {
		vq->ready = false;
		return;
	}
	if (vq->ready)
		return;		/* already live: keep its indices */
	vq->event_idx = virtio_has_feature(d, VIRTIO_F_EVENT_IDX);
	if (vq->size > d->ops->queue_max || vq_activate(vq, &d->vm->mem)) {
		log_warn("%s: driver set up an invalid queue", d->ops->name);
		d->status |= STATUS_NEEDS_RESET;
	}
}

static void write_status(struct virtio_dev *d, uint32_t v)
{
	if (v == 0) {
		device_reset(d);
		return;
	}
	/* §2.2.2: FEATURES_OK only sticks when we can live with the subset. */
	if ((v & STATUS_FEATURES_OK) && !(d->status & STATUS_FEATURES_OK) &&
	    (d->driver_features & ~offered(d) ||
	     !virtio_has_feature(d, VIRTIO_F_VERSION_1)))
		v &= ~(uint32_t)STATUS_FEATURES_OK;
	if ((v & STATUS_DRIVER_OK) && !(d->status & STATUS_DRIVER_OK)) {
		d->status = v;
		if (d->ops->activate && d->ops->activate(d))
			d->status |= STATUS_FAILED;
		return;
	}
	d->status = v;
}

static void write_reg(struct virtio_dev *d, uint64_t off, uint32_t v)
{
	struct virtqueue *vq = cur_vq(d);
	bool features_locked = d->status & STATUS_FEATURES_OK;

	switch (off) {
	case REG_DEV_FEAT_SEL: d->dev_feat_sel = v; break;
	case REG_DRV_FEAT_SEL: d->drv_feat_sel = v; break;
	case REG_DRV_FEAT:
		if (!features_locked && d->drv_feat_sel < 2)
			set_addr(&d->driver_features, v, d->drv_feat_sel == 1);
		break;
	case REG_QUEUE_SEL: d->queue_sel = v; break;
	case REG_QUEUE_NUM: if (vq && !vq->ready) vq->size = (uint16_t)(v > 0xffff ? 0 : v); break;
	case REG_QUEUE_READY: if (vq) queue_ready(d, vq, v); break;
	case REG_QUEUE_NOTIFY:
		/* Only reached without ioeventfd; ioeventfd is the normal path. */
		if (v < d->ops->num_queues && (d->status & STATUS_DRIVER_OK) && d->ops->notify)
			d->ops->notify(d, (uint16_t)v);
		break;
	case REG_INT_ACK: __atomic_and_fetch(&d->isr, ~v, __ATOMIC_SEQ_CST); break;
	case REG_STATUS: write_status(d, v); break;
	case REG_QUEUE_DESC_LO: case REG_QUEUE_DESC_HI:
		if (vq && !vq->ready) set_addr(&vq->desc_gpa, v, off == REG_QUEUE_DESC_HI);
		break;
	case REG_QUEUE_AVAIL_LO: case REG_QUEUE_AVAIL_HI:
		if (vq && !vq->ready) set_addr(&vq->avail_gpa, v, off == REG_QUEUE_AVAIL_HI);
		break;
	case REG_QUEUE_USED_LO: case REG_QUEUE_USED_HI:
		if (vq && !vq->ready) set_addr(&vq->used_gpa, v, off == REG_QUEUE_USED_HI);
		break;
	}
}

void virtio_mmio_read(void *opaque, uint64_t off, uint8_t *data, uint32_t len)
{
	struct virtio_dev *d = opaque;

	memset(data, 0, len);
	pthread_mutex_lock(&d->lock);
	if (off >= REG_CONFIG) {
		uint64_t c = off - REG_CONFIG;

		if (c <= d->ops->config_size && len <= d->ops->config_size - c && d->ops->read_config)
			d->ops->read_config(d, (uint32_t)c, data, len);
	} else if (len == 4 && !(off & 3)) {
		uint32_t v = read_reg(d, off);

		memcpy(data, &v, 4);
	}
	pthread_mutex_unlock(&d->lock);
}

void virtio_mmio_write(void *opaque, uint64_t off, const uint8_t *data, uint32_t len)
{
	struct virtio_dev *d = opaque;

	pthread_mutex_lock(&d->lock);
	if (off >= REG_CONFIG) {
		uint64_t c = off - REG_CONFIG;

		if (c <= d->ops->config_size && len <= d->ops->config_size - c && d->ops->write_config)
			d->ops->write_config(d, (uint32_t)c, data, len);
	} else if (len == 4 && !(off & 3)) {
		uint32_t v;

		memcpy(&v, data, 4);
		write_reg(d, off, v);
	}
	pthread_mutex_unlock(&d->lock);
}

static const struct bus_dev_ops mmio_ops = {
	.read = virtio_mmio_read,
	.write = virtio_mmio_write,
};

/* ioeventfd fired: a kick for one queue, handled on the event-loop thread. */
static void on_kick(void *opaque, uint32_t events)
{
	struct virtio_dev *d = opaque;
	uint64_t cnt;

	for (uint16_t q = 0; q < d->ops->num_queues; q++) {
		if (read(d->kick_fd[q], &cnt, sizeof(cnt)) != sizeof(cnt))
			continue;
		pthread_mutex_lock(&d->lock);
		if ((d->status & STATUS_DRIVER_OK) && d->ops->notify)
			d->ops->notify(d, q);
		pthread_mutex_unlock(&d->lock);
	}
}

static void virtio_destroy(void *dev)
{
	struct virtio_dev *d = dev;

	if (d->ops->destroy)
		d->ops->destroy(d);
	for (int q = 0; q < d->ops->num_queues; q++)
		if (d->kick_fd[q] >= 0)
			close(d->kick_fd[q]);
	if (d->irq_fd >= 0)
		close(d->irq_fd);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static void virtio_quiesce(void *dev)
{
	struct virtio_dev *d = dev;

	if (!d->ops->quiesce)
		return;
	pthread_mutex_lock(&d->lock);
	d->ops->quiesce(d);
	pthread_mutex_unlock(&d->lock);
}

static int virtio_start(void *dev)
{
	struct virtio_dev *d = dev;

	return d->ops->start ? d->ops->start(d) : 0;
}

static const struct vm_device_ops virtio_vm_ops = {
	.name = "virtio-mmio",
	.destroy = virtio_destroy,
	.quiesce = virtio_quiesce,
	.start = virtio_start,
	.snap_version = VIRTIO_SNAP_VERSION,
	.save = virtio_mmio_save,
	.load = virtio_mmio_load,
};

static int wire_up(struct vm *vm, struct virtio_dev *d)
{
	int ret;

	d->irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->irq_fd < 0)
		return -errno;
	ret = kvm_irqfd(&vm->kvm, d->irq_fd, d->irq);
	if (ret)
		return ret;
	for (uint16_t q = 0; q < d->ops->num_queues; q++) {
		d->kick_fd[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (d->kick_fd[q] < 0)
			return -errno;
		ret = kvm_ioeventfd(&vm->kvm, d->kick_fd[q], d->base + REG_QUEUE_NOTIFY, q);
		if (!ret)
			ret = ev_add(&vm->loop, d->kick_fd[q], EPOLLIN, on_kick, d);
		if (ret)
			return ret;
	}
	ret = bus_add(&vm->mmio, d->base, VIRTIO_MMIO_SIZE, &mmio_ops, d);
	if (ret)
		return ret;
	/* On arm64 the device tree names it; announced there too, Debian's
	 * virtio_mmio module would register the same device twice. */
	if (!vm->virtio_in_fdt)
		cmdline_add(&vm->cmdline, "virtio_mmio.device=4K@0x%llx:%u",
			    (unsigned long long)d->base, d->irq);
	return 0;
}

int virtio_mmio_create(struct vm *vm, const struct virtio_dev_ops *ops, void *priv,
		       struct virtio_dev **out)
{
	struct virtio_dev *d;
	int ret;

	if (ops->num_queues > VIRTIO_MAX_QUEUES || ops->queue_max > VQ_MAX_SIZE)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->ops = ops;
	d->priv = priv;
	d->vm = vm;
	d->irq_fd = -1;
	for (int q = 0; q < VIRTIO_MAX_QUEUES; q++)
		d->kick_fd[q] = -1;
	pthread_mutex_init(&d->lock, NULL);
	ret = vm_alloc_virtio_slot(vm, &d->base, &d->irq);
	if (!ret)
		ret = wire_up(vm, d);
	if (!ret)
		ret = vm_add_device(vm, &virtio_vm_ops, d);
	if (ret) {
		virtio_destroy(d);
		return ret;
	}
	*out = d;
	return 0;
}
