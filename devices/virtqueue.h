/*
 * Split virtqueues (virtio 1.2, section 2.7). Everything the guest wrote is
 * hostile: ring indices, descriptor addresses, lengths and chains are checked
 * here, through gm_ptr(), before a device sees a buffer. Pure: no KVM.
 */
#ifndef MVM_VIRTQUEUE_H
#define MVM_VIRTQUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/guest_mem.h"

#define VQ_MAX_SIZE 256

struct vq_buf {
	uint8_t *host;		/* checked: [host, host+len) is guest RAM */
	uint32_t len;
	bool writable;		/* device writes into it */
};

struct vq_chain {
	uint16_t head;
	int nr;
	struct vq_buf buf[VQ_MAX_SIZE];
	uint64_t readable;	/* total bytes the device may read */
	uint64_t writable;	/* total bytes the device may write */
};

struct virtqueue {
	struct guest_mem *mem;
	uint16_t size;		/* entries (power of two, <= VQ_MAX_SIZE) */
	bool ready;
	bool broken;		/* the guest broke the protocol: stop serving */
	uint64_t desc_gpa, avail_gpa, used_gpa;
	uint16_t last_avail;	/* next avail entry to pop */
	uint16_t used_idx;	/* next used entry to fill */
	/* VIRTIO_F_EVENT_IDX (§2.7.7, §2.7.10): set by the transport before
	 * vq_activate when the driver accepted it. */
	bool event_idx;
	bool signalled_valid;
	uint16_t signalled_used;	/* used_idx when we last interrupted */
};

/*
 * Validate the ring addresses and size the driver set; 0 or -EINVAL.
 * Called when the driver writes QueueReady = 1.
 */
int vq_activate(struct virtqueue *vq, struct guest_mem *mem);
void vq_reset(struct virtqueue *vq);

/*
 * Pop the next available chain. 1: @c filled; 0: queue empty;
 * -EINVAL: malformed chain or ring (the queue is marked broken).
 * With event_idx, finding the queue empty asks the driver to notify for the
 * next buffer (avail_event); while buffers remain it need not notify at all.
 */
int vq_pop(struct virtqueue *vq, struct vq_chain *c);
/* Return a chain to the driver with @written bytes written into it. */
void vq_push(struct virtqueue *vq, uint16_t head, uint32_t written);
/* Whether the driver wants an interrupt now (VRING_AVAIL_F_NO_INTERRUPT, or
 * with event_idx its used_event); call only when about to interrupt. */
bool vq_needs_interrupt(struct virtqueue *vq);

/* Copy across the readable / writable parts of a chain, starting at @off. */
uint64_t vq_chain_read(const struct vq_chain *c, uint64_t off, void *dst, uint64_t len);
uint64_t vq_chain_write(struct vq_chain *c, uint64_t off, const void *src, uint64_t len);

#endif
