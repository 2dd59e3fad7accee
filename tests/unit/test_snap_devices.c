/* Each device's snapshot section round trip, hostile sections, memory deltas. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/serial.h"
#include "devices/virtio_mmio.h"
#include "snapshots/mem_delta.h"
#include "common/snap_buf.h"
#include "vmm/vm.h"

/* ---- serial ---- */

static int save_dev(struct vm *vm, int i, struct snap_w *w)
{
	return vm->devices[i].ops->save(vm->devices[i].dev, w);
}

static int load_dev(struct vm *vm, int i, const struct snap_w *w, bool apply)
{
	struct snap_r r;

	snap_r_init(&r, w->p, w->len);
	return vm->devices[i].ops->load(vm->devices[i].dev, &r, vm->devices[i].ops->snap_version, apply);
}

static void outb(struct vm *vm, uint16_t port, uint8_t v)
{
	bus_write(&vm->pio, port, &v, 1);
}

static uint8_t inb(struct vm *vm, uint16_t port)
{
	uint8_t v = 0;

	bus_read(&vm->pio, port, &v, 1);
	return v;
}

Test(snap_devices, serial_round_trip)
{
	struct vm *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct serial *sa, *sb;
	struct snap_w w = { 0 }, w2 = { 0 };

	a->kvm.vm_fd = b->kvm.vm_fd = -1;
	cr_assert_eq(serial_create(a, 0x3f8, 4, -1, NULL, &sa), 0);
	cr_assert_eq(serial_create(b, 0x3f8, 4, -1, NULL, &sb), 0);
	outb(a, 0x3fb, 0x83);	/* DLAB, 8N1 */
	outb(a, 0x3f8, 0x01);	/* divisor 1 */
	outb(a, 0x3f9, 0x00);
	outb(a, 0x3fb, 0x03);
	outb(a, 0x3fc, 0x0b);	/* DTR RTS OUT2 */
	outb(a, 0x3ff, 0x5a);	/* scratch */
	outb(a, 0x3f9, 0x02);	/* THRE interrupts */
	cr_assert_eq(save_dev(a, 0, &w), 0);
	cr_assert_eq(load_dev(b, 0, &w, false), 0);
	cr_assert_eq(inb(b, 0x3ff), 0, "a check pass must not change the device");
	cr_assert_eq(load_dev(b, 0, &w, true), 0);
	cr_assert_eq(save_dev(b, 0, &w2), 0);
	cr_assert_eq(w.len, w2.len);
	cr_assert_eq(memcmp(w.p, w2.p, w.len), 0);
	cr_assert_eq(inb(b, 0x3ff), 0x5a);
	cr_assert_eq(inb(b, 0x3fc), 0x0b);
	cr_assert_eq(inb(b, 0x3f9), 0x02);
	/* Hostile: an IER with reserved bits, and a short section. */
	w.p[0] = 0xff;
	cr_assert_eq(load_dev(b, 0, &w, false), -EBADMSG);
	w.p[0] = 0x02;
	w.len--;
	cr_assert_eq(load_dev(b, 0, &w, false), -EBADMSG);
	snap_w_free(&w);
	snap_w_free(&w2);
	a->devices[0].ops->destroy(a->devices[0].dev);
	b->devices[0].ops->destroy(b->devices[0].dev);
	free(a);
	free(b);
}

/* ---- virtio-mmio transport and queues ---- */

#define G 0x100000ULL
#define MEM 0x20000ULL

struct dummy {
	int notifies;
	uint8_t extra;
};

static void d_notify(struct virtio_dev *d, uint16_t q)
{
	((struct dummy *)d->priv)->notifies++;
}

static int d_save(struct virtio_dev *d, struct snap_w *w)
{
	snap_w_u8(w, ((struct dummy *)d->priv)->extra);
	return 0;
}

static int d_load(struct virtio_dev *d, struct snap_r *r, bool apply)
{
	uint8_t v = snap_r_u8(r);

	if (r->err)
		return -EBADMSG;
	if (apply)
		((struct dummy *)d->priv)->extra = v;
	return 0;
}

static const struct virtio_dev_ops dummy_ops = {
	.name = "dummy", .device_id = VIRTIO_ID_RNG, .features = 1ULL << 3 | 1ULL << VIRTIO_F_EVENT_IDX,
	.num_queues = 2, .queue_max = 64, .notify = d_notify, .save = d_save, .load = d_load,
};

struct vdev {
	struct vm vm;
	uint8_t *ram;
	struct dummy st;
	struct virtio_dev dev;
};

static struct vdev *vdev_new(void)
{
	struct vdev *v = calloc(1, sizeof(*v));

	v->ram = calloc(1, MEM);
	gm_wrap(&v->vm.mem, v->ram, G, MEM);
	v->dev.ops = &dummy_ops;
	v->dev.priv = &v->st;
	v->dev.vm = &v->vm;
	v->dev.irq_fd = -1;
	pthread_mutex_init(&v->dev.lock, NULL);
	return v;
}

static void vdev_free(struct vdev *v)
{
	pthread_mutex_destroy(&v->dev.lock);
	free(v->ram);
	free(v);
}

static void wr(struct vdev *v, uint64_t off, uint32_t val)
{
	virtio_mmio_write(&v->dev, off, (uint8_t *)&val, 4);
}

static void drive(struct vdev *v)
{
	wr(v, 0x070, 1);
	wr(v, 0x070, 3);
	wr(v, 0x024, 0); wr(v, 0x020, 1 << 3 | 1U << VIRTIO_F_EVENT_IDX);
	wr(v, 0x024, 1); wr(v, 0x020, 1);	/* VERSION_1 */
	wr(v, 0x070, 0xb);
	wr(v, 0x030, 1);
	wr(v, 0x038, 16);
	wr(v, 0x080, (uint32_t)(G + 0x1000)); wr(v, 0x084, 0);
	wr(v, 0x090, (uint32_t)(G + 0x2000)); wr(v, 0x094, 0);
	wr(v, 0x0a0, (uint32_t)(G + 0x3000)); wr(v, 0x0a4, 0);
	wr(v, 0x044, 1);
	wr(v, 0x070, 0xf);
	v->dev.vq[1].last_avail = 5;	/* as if the device had served some buffers */
	v->dev.vq[1].used_idx = 5;
	v->st.extra = 0x42;
}

static int vload(struct vdev *v, const struct snap_w *w, bool apply)
{
	struct snap_r r;

	snap_r_init(&r, w->p, w->len);
	return virtio_mmio_load(&v->dev, &r, VIRTIO_SNAP_VERSION, apply);
}

Test(snap_devices, virtio_round_trip)
{
	struct vdev *a = vdev_new(), *b = vdev_new();
	struct snap_w w = { 0 }, w2 = { 0 };

	drive(a);
	cr_assert_eq(virtio_mmio_save(&a->dev, &w), 0);
	cr_assert_eq(vload(b, &w, false), 0);
	cr_assert_eq(b->dev.status, 0, "check pass changed the device");
	cr_assert_eq(b->st.notifies, 0);
	cr_assert_eq(vload(b, &w, true), 0);
	cr_assert_eq(virtio_mmio_save(&b->dev, &w2), 0);
	cr_assert_eq(w.len, w2.len);
	cr_assert_eq(memcmp(w.p, w2.p, w.len), 0);
	cr_assert_eq(b->dev.vq[1].last_avail, 5);
	cr_assert(b->dev.vq[1].mem == &b->vm.mem, "queue must use the new VM's memory");
	/* The driver negotiated event indexes: a restored queue must keep
	 * publishing avail_event, or the driver stops kicking. */
	cr_assert(b->dev.vq[1].event_idx, "event_idx lost in a load");
	cr_assert(!b->dev.vq[1].signalled_valid);
	cr_assert_eq(b->st.extra, 0x42);
	cr_assert_eq(b->st.notifies, 2, "every queue is re-notified after a load");
	snap_w_free(&w);
	snap_w_free(&w2);
	vdev_free(a);
	vdev_free(b);
}

/* Patch one u64 at @off of a saved section and expect the check pass to refuse it. */
static void refused(struct vdev *a, size_t off, uint64_t val, int size, const char *what)
{
	struct vdev *b = vdev_new();
	struct snap_w w = { 0 };

	cr_assert_eq(virtio_mmio_save(&a->dev, &w), 0);
	memcpy(w.p + off, &val, (size_t)size);
	cr_assert_neq(vload(b, &w, false), 0, "%s accepted", what);
	cr_assert_neq(vload(b, &w, true), 0, "%s accepted", what);
	cr_assert_eq(b->dev.status, 0, "%s: a refused section changed the device", what);
	snap_w_free(&w);
	vdev_free(b);
}

Test(snap_devices, virtio_hostile_sections)
{
	struct vdev *a = vdev_new();
	/* Layout: id 0, features 4, status 12, sels 16..27, driver features 28,
	 * isr 36, generation 40, nq 44, queues from 46 (32 bytes each). */
	size_t q1 = 46 + 32;

	drive(a);
	refused(a, 0, VIRTIO_ID_BLOCK, 4, "another device type");
	refused(a, 28, 1ULL << 20, 8, "a feature never offered");
	refused(a, 4, 1ULL << 3 | 1ULL << 20 | 1ULL << VIRTIO_F_EVENT_IDX, 8,
		"an offered feature this device lacks");
	refused(a, 44, 3, 2, "a queue count that does not match");
	refused(a, q1, 512, 2, "a queue larger than the device allows");
	refused(a, q1, 12, 2, "a queue size that is not a power of two");
	refused(a, q1 + 4, G + MEM - 8, 8, "descriptors running out of RAM");
	refused(a, q1 + 4, 0x1000, 8, "descriptors below RAM");
	refused(a, q1 + 20, G + 0x3001, 8, "a misaligned used ring");
	refused(a, q1 + 2, 7, 1, "a ready flag that is not 0/1");
	vdev_free(a);
}

/* A snapshot from before the device offered a feature (a new offload)
 * restores: the driver keeps what it negotiated then. */
Test(snap_devices, virtio_snapshot_offering_less_restores)
{
	struct vdev *a = vdev_new(), *b = vdev_new();
	struct snap_w w = { 0 };
	uint64_t older = 1ULL << VIRTIO_F_EVENT_IDX;

	drive(a);
	cr_assert_eq(virtio_mmio_save(&a->dev, &w), 0);
	memcpy(w.p + 4, &older, 8);
	memcpy(w.p + 28, &older, 8);	/* what a driver could have acked of it */
	cr_assert_eq(vload(b, &w, true), 0);
	cr_assert_eq(b->dev.driver_features, older);
	cr_assert(b->dev.vq[1].event_idx);
	snap_w_free(&w);
	vdev_free(a);
	vdev_free(b);
}

/* ---- memory deltas ---- */

#define NP 300ULL

static void fill(uint8_t *ram, uint8_t seed)
{
	for (uint64_t p = 0; p < NP; p++)
		memset(ram + p * MEM_PAGE, p % 5 ? (uint8_t)(seed + p) : 0, MEM_PAGE);	/* some zero pages */
}

static int tmpfile_fd(void)
{
	char path[] = "/tmp/mvm-delta-XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
	return fd;
}

Test(snap_devices, mem_delta_chain)
{
	uint8_t *ram = aligned_alloc(MEM_PAGE, NP * MEM_PAGE);
	uint8_t *at0 = malloc(NP * MEM_PAGE), *at1 = malloc(NP * MEM_PAGE);
	uint64_t *all = calloc(mem_words(NP), 8), *dirty = calloc(mem_words(NP), 8);
	uint64_t *pages = calloc(mem_words(NP), 8);
	struct mem_delta d0, d1;
	struct mem_delta *chain[2];

	fill(ram, 1);
	memcpy(at0, ram, NP * MEM_PAGE);
	for (uint64_t p = 0; p < NP; p++)
		mem_set(all, p);
	cr_assert_eq(mem_delta_write(tmpfile_fd(), ram, NP, all, NULL, &d0), 0);
	cr_assert_eq(d0.ndata, NP - (NP + 4) / 5, "zero pages are not stored");
	/* Checkpoint 1: pages 3..9 and 200 changed (one of them to zero). */
	for (uint64_t p = 3; p < 10; p++) {
		memset(ram + p * MEM_PAGE, 0xee, MEM_PAGE);
		mem_set(dirty, p);
	}
	memset(ram + 200 * MEM_PAGE, 0, MEM_PAGE);
	mem_set(dirty, 200);
	memcpy(at1, ram, NP * MEM_PAGE);
	cr_assert_eq(mem_delta_write(tmpfile_fd(), ram, NP, dirty, NULL, &d1), 0);
	cr_assert_eq(d1.ndata, 7);
	/* Scribble over everything, then revert all pages to checkpoint 1, then 0. */
	memset(ram, 0x99, NP * MEM_PAGE);
	for (uint64_t p = 0; p < NP; p++)
		mem_set(pages, p);
	chain[0] = &d1;
	chain[1] = &d0;
	cr_assert_eq(mem_delta_revert(ram, NP, pages, chain, 2), 0);
	cr_assert_eq(memcmp(ram, at1, NP * MEM_PAGE), 0, "revert to checkpoint 1");
	cr_assert_eq(mem_delta_revert(ram, NP, pages, chain + 1, 1), 0);
	cr_assert_eq(memcmp(ram, at0, NP * MEM_PAGE), 0, "revert to checkpoint 0");
	/* Only the pages asked for are touched. */
	memset(ram + 50 * MEM_PAGE, 0x77, MEM_PAGE);
	memset(pages, 0, mem_words(NP) * 8);
	mem_set(pages, 4);
	cr_assert_eq(mem_delta_revert(ram, NP, pages, chain, 2), 0);
	cr_assert_eq(ram[4 * MEM_PAGE], 0xee);
	cr_assert_eq(ram[50 * MEM_PAGE], 0x77);
	/* A chain without a full root cannot decide every page. */
	mem_set(pages, 60);
	cr_assert_eq(mem_delta_revert(ram, NP, pages, chain, 1), -EINVAL);
	mem_delta_free(&d0);
	mem_delta_free(&d1);
	free(pages);
	free(at0);
	free(at1);
	free(ram);
}
