/*
 * virtio-mmio transport (virtio 1.2, section 4.2, version 2 register layout).
 * A device is an ops table plus private state; the transport owns feature
 * negotiation, queue set-up, notifications (ioeventfd) and interrupts (irqfd).
 */
#ifndef MVM_VIRTIO_MMIO_H
#define MVM_VIRTIO_MMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/virtqueue.h"

#define VIRTIO_MAX_QUEUES 8
#define VIRTIO_F_VERSION_1 32
#define VIRTIO_F_EVENT_IDX 29	/* VIRTIO_RING_F_EVENT_IDX: used_event / avail_event (§2.7.7) */

#define VIRTIO_ID_NET     1
#define VIRTIO_ID_BLOCK   2
#define VIRTIO_ID_CONSOLE 3
#define VIRTIO_ID_RNG     4
#define VIRTIO_ID_VSOCK   19

struct vm;
struct virtio_dev;
struct snap_w;
struct snap_r;

/*
 * Device callbacks. All run with the device lock held, so a device never
 * sees two at once. notify() runs on the event-loop thread, config access
 * on a vCPU thread.
 */
struct virtio_dev_ops {
	const char *name;
	uint32_t device_id;
	uint64_t features;		/* offered; VERSION_1 is added by the transport */
	uint16_t num_queues;
	uint16_t queue_max;
	uint32_t config_size;
	/* @off + @len <= config_size is checked by the transport. */
	void (*read_config)(struct virtio_dev *d, uint32_t off, uint8_t *data, uint32_t len);
	void (*write_config)(struct virtio_dev *d, uint32_t off, const uint8_t *data, uint32_t len);
	/* DRIVER_OK: queues are validated and ready. 0, or -errno to fail the device. */
	int (*activate)(struct virtio_dev *d);
	/* The driver kicked queue @q. */
	void (*notify)(struct virtio_dev *d, uint16_t q);
	/* Driver reset: drop in-flight state (the transport resets the queues). */
	void (*reset)(struct virtio_dev *d);
	/* Optional: finish and return every request in flight (VM paused,
	 * event-loop thread), before its state is saved or replaced. */
	void (*quiesce)(struct virtio_dev *d);
	/* Optional: start the device's threads (vm_device_ops.start). */
	int (*start)(struct virtio_dev *d);
	void (*destroy)(struct virtio_dev *d);
	/* Snapshots (optional): the device's own state after the transport's,
	 * loaded in two passes as vm_device_ops.load (vmm/vm.h). */
	int (*save)(struct virtio_dev *d, struct snap_w *w);
	int (*load)(struct virtio_dev *d, struct snap_r *r, bool apply);
};

struct virtio_dev {
	const struct virtio_dev_ops *ops;
	void *priv;
	struct vm *vm;
	pthread_mutex_t lock;
	uint64_t base;
	uint32_t irq;
	int irq_fd;
	int kick_fd[VIRTIO_MAX_QUEUES];
	struct virtqueue vq[VIRTIO_MAX_QUEUES];
	/* transport registers */
	uint32_t status;
	uint32_t dev_feat_sel, drv_feat_sel, queue_sel;
	uint64_t driver_features;
	uint32_t isr;
	uint32_t config_generation;
};

/*
 * Create a device on the next virtio-mmio slot and announce it on the kernel
 * command line. @priv belongs to the device; ops->destroy frees it.
 */
int virtio_mmio_create(struct vm *vm, const struct virtio_dev_ops *ops, void *priv,
		       struct virtio_dev **out);
/* Tell the driver about used buffers (if it wants an interrupt for @q). */
void virtio_notify_used(struct virtio_dev *d, uint16_t q);
bool virtio_has_feature(const struct virtio_dev *d, unsigned bit);

/* Snapshot section of the transport, its queues and the device
 * (devices/virtio_mmio_snap.c); @dev is the struct virtio_dev. */
#define VIRTIO_SNAP_VERSION 1
int virtio_mmio_save(void *dev, struct snap_w *w);
int virtio_mmio_load(void *dev, struct snap_r *r, uint32_t version, bool apply);

/* Register-level access, exposed for unit tests and fuzzers. */
void virtio_mmio_read(void *opaque, uint64_t off, uint8_t *data, uint32_t len);
void virtio_mmio_write(void *opaque, uint64_t off, const uint8_t *data, uint32_t len);

#endif
