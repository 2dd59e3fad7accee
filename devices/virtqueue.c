/* Split virtqueue processing over checked guest memory (virtio 1.2 §2.7). */
#include <errno.h>
#include <string.h>

#include "devices/virtqueue.h"

#define VRING_DESC_F_NEXT     1
#define VRING_DESC_F_WRITE    2
#define VRING_DESC_F_INDIRECT 4
#define VRING_AVAIL_F_NO_INTERRUPT 1

struct vring_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

/* With event_idx each ring ends in one more u16: used_event / avail_event. */
static uint64_t avail_bytes(const struct virtqueue *vq)
{
	return 6 + 2ULL * vq->size + (vq->event_idx ? 2 : 0);
}

static uint64_t used_bytes(const struct virtqueue *vq)
{
	return 6 + 8ULL * vq->size + (vq->event_idx ? 2 : 0);
}

int vq_activate(struct virtqueue *vq, struct guest_mem *mem)
{
	uint16_t n = vq->size;

	vq->mem = mem;
	if (!n || n > VQ_MAX_SIZE || (n & (n - 1)))
		return -EINVAL;
	/* Alignment per §2.7: 16 for descriptors, 2 for avail, 4 for used. */
	if ((vq->desc_gpa & 15) || (vq->avail_gpa & 1) || (vq->used_gpa & 3))
		return -EINVAL;
	if (!gm_ptr(mem, vq->desc_gpa, 16ULL * n) ||
	    !gm_ptr(mem, vq->avail_gpa, avail_bytes(vq)) ||
	    !gm_ptr(mem, vq->used_gpa, used_bytes(vq)))
		return -EINVAL;
	vq->ready = true;
	vq->broken = false;
	vq->last_avail = vq->used_idx = 0;
	vq->signalled_valid = false;
	return 0;
}

void vq_reset(struct virtqueue *vq)
{
	memset(vq, 0, sizeof(*vq));
}

static uint16_t load16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* The used ring is 4-aligned (checked at activation): this u16 is aligned. */
static void store16(uint8_t *p, uint16_t v)
{
	__atomic_store_n((uint16_t *)p, v, __ATOMIC_RELEASE);
}

static int broken(struct virtqueue *vq)
{
	vq->broken = true;
	return -EINVAL;
}

/* Walk one chain from @head; every index, address and length checked. */
static int walk_chain(struct virtqueue *vq, uint16_t head, struct vq_chain *c)
{
	const uint8_t *table = gm_ptr(vq->mem, vq->desc_gpa, 16ULL * vq->size);
	uint16_t i = head;

	c->head = head;
	c->nr = 0;
	c->readable = c->writable = 0;
	for (;;) {
		struct vring_desc d;
		struct vq_buf *b;

		/* More descriptors than the table holds means a loop. */
		if (i >= vq->size || c->nr == vq->size || !table)
			return -EINVAL;
		memcpy(&d, table + 16ULL * i, sizeof(d));
		if (d.flags & VRING_DESC_F_INDIRECT)
			return -EINVAL;	/* not offered */
		b = &c->buf[c->nr++];
		b->writable = d.flags & VRING_DESC_F_WRITE;
		/* Only device-writable buffers count as pages the VMM dirties. */
		b->host = b->writable ? gm_ptr_w(vq->mem, d.addr, d.len) :
					gm_ptr(vq->mem, d.addr, d.len);
		b->len = d.len;
		if (!b->host)
			return -EINVAL;
		if (b->writable) {
			c->writable += d.len;
		} else {
			/* §2.7.4.2: readable descriptors come before writable ones. */
			if (c->writable)
				return -EINVAL;
			c->readable += d.len;
		}
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		i = d.next;
	}
}

int vq_pop(struct virtqueue *vq, struct vq_chain *c)
{
	const uint8_t *avail;
	uint16_t idx, head;

	if (!vq->ready || vq->broken)
		return 0;
	avail = gm_ptr(vq->mem, vq->avail_gpa, avail_bytes(vq));
	if (!avail)
		return broken(vq);
	idx = __atomic_load_n((const uint16_t *)(avail + 2), __ATOMIC_ACQUIRE);
	if (idx == vq->last_avail && vq->event_idx) {
		/* Empty: ask for a notification for the next buffer, then look
		 * again, or one added meanwhile would wait for the next kick. */
		uint8_t *used = gm_ptr_w(vq->mem, vq->used_gpa, used_bytes(vq));

		if (!used)
			return broken(vq);
		store16(used + 4 + 8ULL * vq->size, idx);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		idx = __atomic_load_n((const uint16_t *)(avail + 2), __ATOMIC_ACQUIRE);
	}
	if (idx == vq->last_avail)
		return 0;
	/* The driver can be at most a full ring ahead of us. */
	if ((uint16_t)(idx - vq->last_avail) > vq->size)
		return broken(vq);
	head = load16(avail + 4 + 2ULL * (vq->last_avail % vq->size));
	if (walk_chain(vq, head, c))
		return broken(vq);
	vq->last_avail++;
	return 1;
}

void vq_push(struct virtqueue *vq, uint16_t head, uint32_t written)
{
	uint8_t *used = gm_ptr_w(vq->mem, vq->used_gpa, used_bytes(vq));
	uint32_t elem[2] = { head, written };

	if (!used)
		return;
	memcpy(used + 4 + 8ULL * (vq->used_idx % vq->size), elem, sizeof(elem));
	vq->used_idx++;
	/* The element must be visible before the index that publishes it. */
	__atomic_store_n((uint16_t *)(used + 2), vq->used_idx, __ATOMIC_RELEASE);
}

bool vq_needs_interrupt(struct virtqueue *vq)
{
	const uint8_t *avail = gm_ptr(vq->mem, vq->avail_gpa, avail_bytes(vq));
	uint16_t old = vq->signalled_used, now = vq->used_idx, event;
	bool valid = vq->signalled_valid;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!avail)
		return true;
	if (!vq->event_idx)
		return !(load16(avail) & VRING_AVAIL_F_NO_INTERRUPT);
	/* §2.7.10: interrupt if used_event lies in (old, now], i.e. the driver
	 * asked to hear about an entry we published since the last interrupt. */
	event = load16(avail + 4 + 2ULL * vq->size);
	vq->signalled_used = now;
	vq->signalled_valid = true;
	return !valid || (uint16_t)(now - event - 1) < (uint16_t)(now - old);
}

uint64_t vq_chain_read(const struct vq_chain *c, uint64_t off, void *dst, uint64_t len)
{
	uint64_t done = 0;

	for (int i = 0; i < c->nr && done < len; i++) {
		const struct vq_buf *b = &c->buf[i];
		uint64_t n;

		if (b->writable)
			break;
		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		n = b->len - off;
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)dst + done, b->host + off, n);
		done += n;
		off = 0;
	}
	return done;
}

uint64_t vq_chain_write(struct vq_chain *c, uint64_t off, const void *src, uint64_t len)
{
	uint64_t done = 0;

	for (int i = 0; i < c->nr && done < len; i++) {
		struct vq_buf *b = &c->buf[i];
		uint64_t n;

		if (!b->writable)
			continue;
		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		n = b->len - off;
		if (n > len - done)
			n = len - done;
		memcpy(b->host + off, (const uint8_t *)src + done, n);
		done += n;
		off = 0;
	}
	return done;
}
