/* Split virtqueues over a malloc'd guest memory: normal chains and hostile rings. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtqueue.h"
#include "vmm/guest_mem.h"

#define F_NEXT 1
#define F_WRITE 2
#define F_INDIRECT 4

/* Guest RAM is [G, G + MEM): a non-zero base catches gpa/offset mix-ups. */
#define G 0x100000ULL
#define MEM 0x40000ULL
#define DESC (G + 0x0000)
#define AVAIL (G + 0x1000)
#define USED (G + 0x2000)
#define BUFS (G + 0x4000)
#define QSZ 8

static uint8_t *ram;
static struct guest_mem mem;
static struct virtqueue vq;
static struct vq_chain *ch;
static uint16_t avail_idx;

static void *gpa(uint64_t a)
{
	return ram + (a - G);
}

static void set_desc(uint16_t i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	uint8_t *d = gpa(DESC + 16ULL * i);

	memcpy(d, &addr, 8);
	memcpy(d + 8, &len, 4);
	memcpy(d + 12, &flags, 2);
	memcpy(d + 14, &next, 2);
}

static void set_avail_idx(uint16_t idx)
{
	memcpy(gpa(AVAIL + 2), &idx, 2);
}

static void offer(uint16_t head)
{
	memcpy(gpa(AVAIL + 4 + 2ULL * (avail_idx % vq.size)), &head, 2);
	avail_idx++;
	set_avail_idx(avail_idx);
}

static uint16_t used_idx(void)
{
	uint16_t v;

	memcpy(&v, gpa(USED + 2), 2);
	return v;
}

static void used_elem(uint16_t slot, uint32_t *id, uint32_t *len)
{
	memcpy(id, gpa(USED + 4 + 8ULL * slot), 4);
	memcpy(len, gpa(USED + 8 + 8ULL * slot), 4);
}

static void setup_size(uint16_t size)
{
	memset(&vq, 0, sizeof(vq));
	vq.size = size;
	vq.desc_gpa = DESC;
	vq.avail_gpa = AVAIL;
	vq.used_gpa = USED;
	avail_idx = 0;
	cr_assert_eq(vq_activate(&vq, &mem), 0);
	cr_assert(vq.ready);
}

static void setup(void)
{
	ram = calloc(1, MEM);
	ch = calloc(1, sizeof(*ch));
	gm_wrap(&mem, ram, G, MEM);
	setup_size(QSZ);
}

static void teardown(void)
{
	free(ram);
	free(ch);
}

TestSuite(vmm_virtqueue, .init = setup, .fini = teardown);

/* 16 + 10 readable bytes, then 100 writable. */
static void three_chain(uint16_t a, uint16_t b, uint16_t c)
{
	set_desc(a, BUFS, 16, F_NEXT, b);
	set_desc(b, BUFS + 0x100, 10, F_NEXT, c);
	set_desc(c, BUFS + 0x200, 100, F_WRITE, 0);
}

Test(vmm_virtqueue, three_descriptor_chain)
{
	three_chain(2, 5, 1);
	offer(2);
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_eq(ch->head, 2);
	cr_assert_eq(ch->nr, 3);
	cr_assert_eq(ch->readable, 26);
	cr_assert_eq(ch->writable, 100);
	cr_assert_eq(ch->buf[0].host, gpa(BUFS));
	cr_assert_eq(ch->buf[0].len, 16);
	cr_assert_not(ch->buf[0].writable);
	cr_assert_eq(ch->buf[1].host, gpa(BUFS + 0x100));
	cr_assert_eq(ch->buf[2].host, gpa(BUFS + 0x200));
	cr_assert(ch->buf[2].writable);
	cr_assert_eq(vq_pop(&vq, ch), 0, "queue is now empty");
	cr_assert_not(vq.broken);
}

Test(vmm_virtqueue, push_publishes_used_element_and_index)
{
	uint32_t id, len;

	three_chain(0, 1, 2);
	offer(0);
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_eq(used_idx(), 0);
	vq_push(&vq, ch->head, 42);
	cr_assert_eq(used_idx(), 1);
	used_elem(0, &id, &len);
	cr_assert_eq(id, 0);
	cr_assert_eq(len, 42);

	/* Ring slots wrap modulo the size while the index keeps counting. */
	for (int i = 1; i <= QSZ; i++)
		vq_push(&vq, (uint16_t)(i % QSZ), 1000u + (uint32_t)i);
	cr_assert_eq(used_idx(), QSZ + 1);
	used_elem(0, &id, &len);
	cr_assert_eq(id, 0);
	cr_assert_eq(len, 1000 + QSZ);
	used_elem(3, &id, &len);
	cr_assert_eq(id, 3);
	cr_assert_eq(len, 1003);
}

Test(vmm_virtqueue, pops_in_avail_order_and_counts_wrap)
{
	/* Start near the 16-bit wrap of the free-running indices. */
	set_desc(3, BUFS, 4, 0, 0);
	set_desc(6, BUFS + 8, 4, F_WRITE, 0);
	vq.last_avail = 0xffff;
	avail_idx = 0xffff;
	offer(3);	/* ring[0xffff % 8 = 7], idx -> 0 */
	offer(6);	/* ring[0], idx -> 1 */
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_eq(ch->head, 3);
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_eq(ch->head, 6);
	cr_assert_eq(ch->writable, 4);
	cr_assert_eq(vq_pop(&vq, ch), 0);
}

Test(vmm_virtqueue, full_ring_and_full_length_chain)
{
	/* One chain using every descriptor is the longest legal chain. */
	for (uint16_t i = 0; i < QSZ; i++)
		set_desc(i, BUFS + 16ULL * i, 16, i + 1 < QSZ ? F_NEXT : 0, (uint16_t)(i + 1));
	/* The driver may be exactly a full ring ahead. */
	for (int i = 0; i < QSZ; i++)
		offer(0);
	for (int i = 0; i < QSZ; i++) {
		cr_assert_eq(vq_pop(&vq, ch), 1, "pop %d", i);
		cr_assert_eq(ch->nr, QSZ);
		cr_assert_eq(ch->readable, 16 * QSZ);
	}
	cr_assert_eq(vq_pop(&vq, ch), 0);
	cr_assert_not(vq.broken);
}

Test(vmm_virtqueue, chain_read_and_write_across_buffers)
{
	uint8_t out[64], in[64];

	for (int i = 0; i < 26; i++)
		((uint8_t *)gpa(i < 16 ? BUFS + i : BUFS + 0x100 + i - 16))[0] = (uint8_t)('a' + i);
	set_desc(0, BUFS, 16, F_NEXT, 1);
	set_desc(1, BUFS + 0x100, 10, F_NEXT, 2);
	set_desc(2, BUFS + 0x200, 5, F_WRITE | F_NEXT, 3);
	set_desc(3, BUFS + 0x300, 7, F_WRITE, 0);
	offer(0);
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_eq(ch->readable, 26);
	cr_assert_eq(ch->writable, 12);

	/* Read 8 bytes straddling the first two buffers. */
	memset(out, 0, sizeof(out));
	cr_assert_eq(vq_chain_read(ch, 12, out, 8), 8);
	cr_assert_eq(memcmp(out, "mnopqrst", 8), 0);
	/* Reads stop at the readable part: never the device-writable buffers. */
	cr_assert_eq(vq_chain_read(ch, 0, out, sizeof(out)), 26);
	cr_assert_eq(memcmp(out, "abcdefghijklmnopqrstuvwxyz", 26), 0);
	cr_assert_eq(vq_chain_read(ch, 26, out, 4), 0);
	cr_assert_eq(vq_chain_read(ch, 1000, out, 4), 0);

	/* Write 9 bytes from offset 2: 3 into the first writable buffer, 6 into the next. */
	memset(in, 0, sizeof(in));
	memcpy(in, "123456789", 9);
	cr_assert_eq(vq_chain_write(ch, 2, in, 9), 9);
	cr_assert_eq(memcmp(gpa(BUFS + 0x202), "123", 3), 0);
	cr_assert_eq(memcmp(gpa(BUFS + 0x300), "456789", 6), 0);
	/* Writes are capped by the writable space and leave readable buffers alone. */
	cr_assert_eq(vq_chain_write(ch, 0, in, sizeof(in)), 12);
	cr_assert_eq(*(uint8_t *)gpa(BUFS), 'a');
	cr_assert_eq(vq_chain_write(ch, 12, in, 1), 0);
}

Test(vmm_virtqueue, only_writable_buffers_are_dirtied)
{
	uint64_t bitmap[(MEM / 4096 + 63) / 64] = { 0 };

	mem.dirty = bitmap;
	set_desc(0, BUFS, 16, F_NEXT, 1);		/* page 4 of the region */
	set_desc(1, BUFS + 0x2000, 16, F_WRITE, 0);	/* page 6 */
	offer(0);
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_not(bitmap[0] & (1ULL << 4));
	cr_assert(bitmap[0] & (1ULL << 6));
	mem.dirty = NULL;
}

Test(vmm_virtqueue, interrupt_suppression_flag)
{
	uint16_t flags = 1;	/* VRING_AVAIL_F_NO_INTERRUPT */

	cr_assert(vq_needs_interrupt(&vq));
	memcpy(gpa(AVAIL), &flags, 2);
	cr_assert_not(vq_needs_interrupt(&vq));
}

/* VIRTIO_F_EVENT_IDX: the driver's used_event decides interrupts, and an
 * empty queue publishes avail_event so the driver kicks for the next buffer. */
static void event_idx_setup(void)
{
	vq.event_idx = true;
	vq.ready = false;
	cr_assert_eq(vq_activate(&vq, &mem), 0);
}

static void set_used_event(uint16_t v)
{
	memcpy(gpa(AVAIL + 4 + 2ULL * QSZ), &v, 2);
}

static uint16_t avail_event(void)
{
	uint16_t v;

	memcpy(&v, gpa(USED + 4 + 8ULL * QSZ), 2);
	return v;
}

Test(vmm_virtqueue, event_idx_interrupts_follow_used_event)
{
	event_idx_setup();
	set_desc(0, BUFS, 16, F_WRITE, 0);
	for (int i = 0; i < 4; i++)
		offer(0);
	set_used_event(2);	/* "interrupt me once entry 2 is used" */
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(vq_pop(&vq, ch), 1);
		vq_push(&vq, ch->head, 1);
	}
	cr_assert(vq_needs_interrupt(&vq), "first interrupt always goes");
	cr_assert_eq(vq_pop(&vq, ch), 1);
	vq_push(&vq, ch->head, 1);	/* used_idx 3: entry 2 is used */
	cr_assert(vq_needs_interrupt(&vq), "used_event 2 reached");
	cr_assert_eq(vq_pop(&vq, ch), 1);
	vq_push(&vq, ch->head, 1);	/* used_idx 4: past the event, already told */
	cr_assert_not(vq_needs_interrupt(&vq), "no new event asked for");
	set_used_event(4);
	vq_push(&vq, 0, 1);		/* used_idx 5: entry 4 is used */
	cr_assert(vq_needs_interrupt(&vq), "used_event 4 reached after the last interrupt");
}

Test(vmm_virtqueue, event_idx_empty_queue_asks_for_a_kick)
{
	event_idx_setup();
	set_desc(0, BUFS, 16, F_WRITE, 0);
	offer(0);
	offer(0);
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_eq(avail_event(), 0, "not empty yet: no kick needed, nothing written");
	cr_assert_eq(vq_pop(&vq, ch), 0);
	cr_assert_eq(avail_event(), 2, "empty at 2: kick when entry 2 is added");
}

Test(vmm_virtqueue, event_idx_rings_need_room_for_the_event_fields)
{
	memset(&vq, 0, sizeof(vq));
	vq.size = QSZ;
	vq.desc_gpa = DESC;
	vq.avail_gpa = G + MEM - (6 + 2 * QSZ);	/* avail fits, used_event does not */
	vq.used_gpa = USED;
	vq.event_idx = true;
	cr_assert_eq(vq_activate(&vq, &mem), -EINVAL);
	vq.event_idx = false;
	cr_assert_eq(vq_activate(&vq, &mem), 0);
}

/* ---- hostile chains: -EINVAL, broken, and silence afterwards ---- */

static void expect_broken(const char *what)
{
	cr_assert_eq(vq_pop(&vq, ch), -EINVAL, "%s: accepted", what);
	cr_assert(vq.broken, "%s: queue not marked broken", what);
	/* Even a good chain offered later is not served. */
	set_desc(7, BUFS, 4, 0, 0);
	offer(7);
	cr_assert_eq(vq_pop(&vq, ch), 0, "%s: broken queue still pops", what);
	cr_assert_eq(vq_pop(&vq, ch), 0);
}

Test(vmm_virtqueue, loop_two_descriptors)
{
	set_desc(0, BUFS, 16, F_NEXT, 1);
	set_desc(1, BUFS, 16, F_NEXT, 0);
	offer(0);
	expect_broken("loop");
}

Test(vmm_virtqueue, loop_self)
{
	set_desc(4, BUFS, 16, F_NEXT | F_WRITE, 4);
	offer(4);
	expect_broken("self loop");
}

Test(vmm_virtqueue, loop_back_to_middle)
{
	/* 0 -> 1 -> 2 -> 3 -> 1: longer than the queue once followed. */
	set_desc(0, BUFS, 1, F_NEXT, 1);
	set_desc(1, BUFS, 1, F_NEXT, 2);
	set_desc(2, BUFS, 1, F_NEXT, 3);
	set_desc(3, BUFS, 1, F_NEXT, 1);
	offer(0);
	expect_broken("chain longer than the queue");
}

Test(vmm_virtqueue, next_index_out_of_table)
{
	set_desc(0, BUFS, 16, F_NEXT, QSZ);
	offer(0);
	expect_broken("next >= size");
}

Test(vmm_virtqueue, next_index_huge)
{
	set_desc(0, BUFS, 16, F_NEXT, 0xffff);
	offer(0);
	expect_broken("next = 0xffff");
}

Test(vmm_virtqueue, address_outside_memory)
{
	set_desc(0, G + MEM, 16, 0, 0);
	offer(0);
	expect_broken("address past RAM");
}

Test(vmm_virtqueue, address_below_memory)
{
	set_desc(0, G - 8, 16, 0, 0);
	offer(0);
	expect_broken("address below RAM");
}

Test(vmm_virtqueue, buffer_running_off_the_end)
{
	set_desc(0, G + MEM - 8, 9, F_WRITE, 0);
	offer(0);
	expect_broken("buffer straddles the end of RAM");
}

Test(vmm_virtqueue, address_plus_length_wraps)
{
	set_desc(0, UINT64_MAX - 4, 16, 0, 0);
	offer(0);
	expect_broken("addr + len wraps");
}

Test(vmm_virtqueue, bad_address_later_in_chain)
{
	set_desc(0, BUFS, 16, F_NEXT, 1);
	set_desc(1, 0xdead0000000ULL, 16, F_WRITE, 0);
	offer(0);
	expect_broken("second descriptor outside RAM");
}

Test(vmm_virtqueue, readable_after_writable)
{
	set_desc(0, BUFS, 16, F_WRITE | F_NEXT, 1);
	set_desc(1, BUFS + 0x100, 16, 0, 0);
	offer(0);
	expect_broken("readable after writable");
}

Test(vmm_virtqueue, indirect_not_negotiated)
{
	set_desc(0, BUFS, 16, F_INDIRECT, 0);
	offer(0);
	expect_broken("indirect");
}

Test(vmm_virtqueue, indirect_later_in_chain)
{
	set_desc(0, BUFS, 16, F_NEXT, 1);
	set_desc(1, BUFS, 16, F_INDIRECT, 0);
	offer(0);
	expect_broken("indirect second");
}

Test(vmm_virtqueue, avail_idx_too_far_ahead)
{
	set_desc(0, BUFS, 16, 0, 0);
	for (int i = 0; i < QSZ; i++)
		offer(0);
	set_avail_idx(QSZ + 1);	/* one more than the ring can hold */
	expect_broken("avail idx size+1 ahead");
}

Test(vmm_virtqueue, avail_idx_behind)
{
	set_avail_idx(0xffff);	/* "behind" us: 65535 ahead modulo 2^16 */
	expect_broken("avail idx behind");
}

Test(vmm_virtqueue, head_out_of_table)
{
	offer(QSZ);
	expect_broken("head >= size");
}

Test(vmm_virtqueue, good_chains_before_the_bad_one_are_served)
{
	set_desc(0, BUFS, 16, 0, 0);
	offer(0);
	offer(QSZ + 3);
	cr_assert_eq(vq_pop(&vq, ch), 1);
	cr_assert_eq(vq_pop(&vq, ch), -EINVAL);
	cr_assert(vq.broken);
}

Test(vmm_virtqueue, reactivation_clears_broken)
{
	offer(QSZ);
	cr_assert_eq(vq_pop(&vq, ch), -EINVAL);
	cr_assert(vq.broken);
	vq_reset(&vq);
	memset(ram, 0, MEM);
	setup_size(QSZ);
	cr_assert_not(vq.broken);
	set_desc(0, BUFS, 16, 0, 0);
	offer(0);
	cr_assert_eq(vq_pop(&vq, ch), 1);
}

Test(vmm_virtqueue, not_ready_pops_nothing)
{
	set_desc(0, BUFS, 16, 0, 0);
	offer(0);
	vq.ready = false;
	cr_assert_eq(vq_pop(&vq, ch), 0);
	cr_assert_not(vq.broken);
}

/* ---- vq_activate ---- */

static int activate(uint16_t size, uint64_t d, uint64_t a, uint64_t u)
{
	struct virtqueue q = { .size = size, .desc_gpa = d, .avail_gpa = a, .used_gpa = u };
	int ret = vq_activate(&q, &mem);

	cr_assert_eq(q.ready, ret == 0);
	return ret;
}

Test(vmm_virtqueue, activate_sizes)
{
	static const uint16_t bad[] = { 0, 3, 6, 100, 255, 257, 512, 1024, 0x8000, 0xffff };
	static const uint16_t good[] = { 1, 2, 4, 64, 128, 256 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(activate(bad[i], DESC, AVAIL, USED), -EINVAL, "size %u", bad[i]);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_assert_eq(activate(good[i], DESC, AVAIL, USED), 0, "size %u", good[i]);
}

Test(vmm_virtqueue, activate_alignment)
{
	cr_assert_eq(activate(8, DESC + 8, AVAIL, USED), -EINVAL, "desc 16-byte alignment");
	cr_assert_eq(activate(8, DESC + 1, AVAIL, USED), -EINVAL);
	cr_assert_eq(activate(8, DESC, AVAIL + 1, USED), -EINVAL, "avail 2-byte alignment");
	cr_assert_eq(activate(8, DESC, AVAIL, USED + 2), -EINVAL, "used 4-byte alignment");
	cr_assert_eq(activate(8, DESC + 16, AVAIL + 2, USED + 4), 0, "minimum alignments suffice");
}

Test(vmm_virtqueue, activate_ring_outside_memory)
{
	/* Each ring must lie wholly inside RAM. */
	cr_assert_eq(activate(8, G + MEM - 16 * 8, AVAIL, USED), 0, "desc table ending at RAM end");
	cr_assert_eq(activate(8, G + MEM - 16 * 7, AVAIL, USED), -EINVAL);
	cr_assert_eq(activate(8, DESC, G + MEM - (6 + 2 * 8), USED), 0);
	cr_assert_eq(activate(8, DESC, G + MEM - (6 + 2 * 8) + 2, USED), -EINVAL);
	cr_assert_eq(activate(8, DESC, AVAIL, G + MEM - (6 + 8 * 8) - 2), 0);
	cr_assert_eq(activate(8, DESC, AVAIL, G + MEM - (6 + 8 * 8) + 2), -EINVAL);
	cr_assert_eq(activate(8, 0, AVAIL, USED), -EINVAL, "desc below RAM");
	cr_assert_eq(activate(8, DESC, 0, USED), -EINVAL);
	cr_assert_eq(activate(8, DESC, AVAIL, 0), -EINVAL);
	cr_assert_eq(activate(8, UINT64_MAX - 15, AVAIL, USED), -EINVAL, "desc wraps");
	cr_assert_eq(activate(8, DESC, AVAIL, UINT64_MAX - 3), -EINVAL, "used wraps");
}
