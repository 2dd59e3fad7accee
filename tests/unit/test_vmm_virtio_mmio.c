/* virtio-mmio transport registers (virtio 1.2 §4.2.2) driven without KVM. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio_mmio.h"
#include "vmm/vm.h"

#define G 0x100000ULL
#define MEM 0x20000ULL

#define STATUS_ACK 1
#define STATUS_DRIVER 2
#define STATUS_DRIVER_OK 4
#define STATUS_FEATURES_OK 8
#define STATUS_NEEDS_RESET 0x40
#define STATUS_FAILED 0x80

#define FEAT_LOW 3	/* offered, in the low word */
#define FEAT_HIGH 40	/* offered, in the high word */

struct dummy {
	uint8_t config[8];
	int config_reads, config_writes, activates, resets, notifies;
	int activate_ret;
	uint16_t last_notify;
	uint32_t last_off, last_len;
};

static void d_read_config(struct virtio_dev *d, uint32_t off, uint8_t *data, uint32_t len)
{
	struct dummy *s = d->priv;

	cr_assert(off + len <= sizeof(s->config), "transport let %u+%u through", off, len);
	memcpy(data, s->config + off, len);
	s->config_reads++;
	s->last_off = off;
	s->last_len = len;
}

static void d_write_config(struct virtio_dev *d, uint32_t off, const uint8_t *data, uint32_t len)
{
	struct dummy *s = d->priv;

	cr_assert(off + len <= sizeof(s->config));
	memcpy(s->config + off, data, len);
	s->config_writes++;
}

static int d_activate(struct virtio_dev *d)
{
	struct dummy *s = d->priv;

	s->activates++;
	return s->activate_ret;
}

static void d_reset(struct virtio_dev *d)
{
	((struct dummy *)d->priv)->resets++;
}

static void d_notify(struct virtio_dev *d, uint16_t q)
{
	struct dummy *s = d->priv;

	s->notifies++;
	s->last_notify = q;
}

static const struct virtio_dev_ops dummy_ops = {
	.name = "dummy",
	.device_id = VIRTIO_ID_RNG,
	.features = (1ULL << FEAT_LOW) | (1ULL << FEAT_HIGH),
	.num_queues = 2,
	.queue_max = 64,
	.config_size = 8,
	.read_config = d_read_config,
	.write_config = d_write_config,
	.activate = d_activate,
	.notify = d_notify,
	.reset = d_reset,
};

static struct vm *vm;
static struct virtio_dev *dev;
static struct dummy *st;
static uint8_t *ram;

static void setup(void)
{
	vm = calloc(1, sizeof(*vm));
	ram = calloc(1, MEM);
	gm_wrap(&vm->mem, ram, G, MEM);
	st = calloc(1, sizeof(*st));
	memcpy(st->config, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	dev = calloc(1, sizeof(*dev));
	dev->ops = &dummy_ops;
	dev->priv = st;
	dev->vm = vm;
	dev->irq_fd = -1;
	for (int q = 0; q < VIRTIO_MAX_QUEUES; q++)
		dev->kick_fd[q] = -1;
	pthread_mutex_init(&dev->lock, NULL);
}

static void teardown(void)
{
	pthread_mutex_destroy(&dev->lock);
	free(dev);
	free(st);
	free(ram);
	free(vm);
}

TestSuite(vmm_virtio_mmio, .init = setup, .fini = teardown);

static uint32_t rd(uint64_t off)
{
	uint8_t b[4];
	uint32_t v;

	virtio_mmio_read(dev, off, b, 4);
	memcpy(&v, b, 4);
	return v;
}

static void wr(uint64_t off, uint32_t v)
{
	uint8_t b[4];

	memcpy(b, &v, 4);
	virtio_mmio_write(dev, off, b, 4);
}

static void set_driver_features(uint64_t f)
{
	wr(0x024, 0);
	wr(0x020, (uint32_t)f);
	wr(0x024, 1);
	wr(0x020, (uint32_t)(f >> 32));
}

static uint32_t negotiate(uint64_t f)
{
	wr(0x070, 0);
	wr(0x070, STATUS_ACK);
	wr(0x070, STATUS_ACK | STATUS_DRIVER);
	set_driver_features(f);
	wr(0x070, STATUS_ACK | STATUS_DRIVER | STATUS_FEATURES_OK);
	return rd(0x070);
}

static void setup_queue(uint16_t q, uint32_t num, uint64_t desc, uint64_t avail, uint64_t used)
{
	wr(0x030, q);
	wr(0x038, num);
	wr(0x080, (uint32_t)desc);
	wr(0x084, (uint32_t)(desc >> 32));
	wr(0x090, (uint32_t)avail);
	wr(0x094, (uint32_t)(avail >> 32));
	wr(0x0a0, (uint32_t)used);
	wr(0x0a4, (uint32_t)(used >> 32));
	wr(0x044, 1);
}

Test(vmm_virtio_mmio, identification_registers)
{
	cr_assert_eq(rd(0x000), 0x74726976, "magic \"virt\"");
	cr_assert_eq(rd(0x004), 2, "modern (non-legacy) transport");
	cr_assert_eq(rd(0x008), VIRTIO_ID_RNG);
	cr_assert_eq(rd(0x0fc), 0, "config generation");
}

Test(vmm_virtio_mmio, registers_need_aligned_32_bit_access)
{
	uint8_t b[8];

	memset(b, 0xee, sizeof(b));
	virtio_mmio_read(dev, 0x000, b, 2);
	cr_assert_eq(b[0], 0);
	cr_assert_eq(b[1], 0);
	memset(b, 0xee, sizeof(b));
	virtio_mmio_read(dev, 0x001, b, 4);
	cr_assert_eq(b[0] | b[1] | b[2] | b[3], 0);
	memset(b, 0xee, sizeof(b));
	virtio_mmio_read(dev, 0x000, b, 8);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(b[i], 0);
	/* A misaligned status write is ignored. */
	uint32_t v = STATUS_ACK;
	virtio_mmio_write(dev, 0x071, (uint8_t *)&v, 4);
	virtio_mmio_write(dev, 0x070, (uint8_t *)&v, 2);
	cr_assert_eq(rd(0x070), 0);
}

Test(vmm_virtio_mmio, device_features_include_version_1)
{
	wr(0x014, 0);
	cr_assert_eq(rd(0x010), 1U << FEAT_LOW);
	wr(0x014, 1);
	cr_assert_eq(rd(0x010), (1U << (FEAT_HIGH - 32)) | (1U << (VIRTIO_F_VERSION_1 - 32)));
	wr(0x014, 2);
	cr_assert_eq(rd(0x010), 0);
	wr(0x014, 0xffffffff);
	cr_assert_eq(rd(0x010), 0);
}

Test(vmm_virtio_mmio, features_ok_accepted_for_an_offered_subset)
{
	uint64_t f = (1ULL << VIRTIO_F_VERSION_1) | (1ULL << FEAT_HIGH);

	cr_assert(negotiate(f) & STATUS_FEATURES_OK);
	cr_assert(virtio_has_feature(dev, VIRTIO_F_VERSION_1));
	cr_assert(virtio_has_feature(dev, FEAT_HIGH));
	cr_assert_not(virtio_has_feature(dev, FEAT_LOW));
	cr_assert_not(virtio_has_feature(dev, 200));
	/* Features are frozen once FEATURES_OK stuck. */
	set_driver_features(f | (1ULL << FEAT_LOW));
	cr_assert_not(virtio_has_feature(dev, FEAT_LOW));
}

Test(vmm_virtio_mmio, features_ok_refused_for_unoffered_feature)
{
	uint32_t s = negotiate((1ULL << VIRTIO_F_VERSION_1) | (1ULL << 5));

	cr_assert_not(s & STATUS_FEATURES_OK);
	cr_assert(s & STATUS_DRIVER, "the rest of the status is kept");
	/* The driver may retry with a good subset. */
	set_driver_features(1ULL << VIRTIO_F_VERSION_1);
	wr(0x070, STATUS_ACK | STATUS_DRIVER | STATUS_FEATURES_OK);
	cr_assert(rd(0x070) & STATUS_FEATURES_OK);
}

Test(vmm_virtio_mmio, features_ok_refused_for_unoffered_high_feature)
{
	cr_assert_not(negotiate((1ULL << VIRTIO_F_VERSION_1) | (1ULL << 63)) & STATUS_FEATURES_OK);
}

Test(vmm_virtio_mmio, features_ok_refused_without_version_1)
{
	cr_assert_not(negotiate(1ULL << FEAT_LOW) & STATUS_FEATURES_OK);
	cr_assert_not(negotiate(0) & STATUS_FEATURES_OK);
}

Test(vmm_virtio_mmio, queue_setup_and_ready)
{
	const uint64_t desc = G + 0x1000, avail = G + 0x2000, used = G + 0x3000;

	wr(0x030, 0);
	cr_assert_eq(rd(0x034), 64, "QueueNumMax");
	cr_assert_eq(rd(0x044), 0);
	setup_queue(1, 16, desc, avail, used);
	cr_assert_eq(rd(0x044), 1, "QueueReady");
	cr_assert_not(rd(0x070) & STATUS_NEEDS_RESET);
	cr_assert(dev->vq[1].ready);
	cr_assert_eq(dev->vq[1].size, 16);
	cr_assert_eq(dev->vq[1].desc_gpa, desc);
	cr_assert_eq(dev->vq[1].avail_gpa, avail);
	cr_assert_eq(dev->vq[1].used_gpa, used);
	cr_assert_not(dev->vq[0].ready, "queue 0 untouched");

	/* Ring addresses and size are frozen while the queue is live. */
	wr(0x080, 0x5000);
	wr(0x038, 32);
	cr_assert_eq(dev->vq[1].desc_gpa, desc);
	cr_assert_eq(dev->vq[1].size, 16);
	/* QueueReady = 0 stops it. */
	wr(0x044, 0);
	cr_assert_eq(rd(0x044), 0);
}

Test(vmm_virtio_mmio, nonexistent_queue)
{
	wr(0x030, 2);
	cr_assert_eq(rd(0x034), 0, "QueueNumMax 0: no such queue");
	wr(0x038, 8);
	wr(0x044, 1);
	cr_assert_eq(rd(0x044), 0);
	wr(0x030, 0xffffffff);
	cr_assert_eq(rd(0x034), 0);
	wr(0x044, 1);
	cr_assert_not(rd(0x070) & STATUS_NEEDS_RESET);
	for (int q = 0; q < VIRTIO_MAX_QUEUES; q++)
		cr_assert_not(dev->vq[q].ready);
}

static void expect_needs_reset(uint32_t num, uint64_t desc, uint64_t avail, uint64_t used)
{
	setup_queue(0, num, desc, avail, used);
	cr_assert(rd(0x070) & STATUS_NEEDS_RESET, "invalid ring accepted");
	cr_assert_eq(rd(0x044), 0, "invalid ring is live");
	cr_assert_not(dev->vq[0].ready);
}

Test(vmm_virtio_mmio, invalid_size_needs_reset) { expect_needs_reset(3, G, G + 0x1000, G + 0x2000); }
Test(vmm_virtio_mmio, zero_size_needs_reset) { expect_needs_reset(0, G, G + 0x1000, G + 0x2000); }
Test(vmm_virtio_mmio, huge_size_needs_reset) { expect_needs_reset(0x10000, G, G + 0x1000, G + 0x2000); }
Test(vmm_virtio_mmio, ring_outside_ram_needs_reset) { expect_needs_reset(8, G + MEM, G + 0x1000, G + 0x2000); }
Test(vmm_virtio_mmio, ring_above_4g_needs_reset) { expect_needs_reset(8, G + (1ULL << 32), G + 0x1000, G + 0x2000); }
Test(vmm_virtio_mmio, misaligned_used_needs_reset) { expect_needs_reset(8, G, G + 0x1000, G + 0x2002); }

Test(vmm_virtio_mmio, config_reads_bounded_by_config_size)
{
	uint8_t b[8];

	virtio_mmio_read(dev, 0x100, b, 4);
	cr_assert_eq(memcmp(b, "\x11\x22\x33\x44", 4), 0);
	virtio_mmio_read(dev, 0x104, b, 4);	/* ends exactly at config_size */
	cr_assert_eq(memcmp(b, "\x55\x66\x77\x88", 4), 0);
	virtio_mmio_read(dev, 0x107, b, 1);
	cr_assert_eq(b[0], 0x88);
	cr_assert_eq(st->config_reads, 3);

	static const struct { uint64_t off; uint32_t len; } bad[] = {
		{ 0x106, 4 }, { 0x108, 1 }, { 0x105, 8 }, { 0x1ff, 4 },
		{ 0xfffffffffffffff0ULL, 4 }, { UINT64_MAX, 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(b, 0xee, sizeof(b));
		virtio_mmio_read(dev, bad[i].off, b, bad[i].len);
		for (uint32_t j = 0; j < bad[i].len; j++)
			cr_assert_eq(b[j], 0, "out-of-range config read not zero");
	}
	cr_assert_eq(st->config_reads, 3, "device saw an out-of-range config read");
}

Test(vmm_virtio_mmio, config_writes_bounded_by_config_size)
{
	uint8_t b[4] = { 1, 2, 3, 4 };

	virtio_mmio_write(dev, 0x104, b, 4);
	cr_assert_eq(st->config_writes, 1);
	cr_assert_eq(memcmp(st->config + 4, b, 4), 0);
	virtio_mmio_write(dev, 0x106, b, 4);
	virtio_mmio_write(dev, 0x108, b, 1);
	virtio_mmio_write(dev, UINT64_MAX, b, 1);
	cr_assert_eq(st->config_writes, 1);
}

Test(vmm_virtio_mmio, driver_ok_activates_and_failure_sets_failed)
{
	cr_assert(negotiate(1ULL << VIRTIO_F_VERSION_1) & STATUS_FEATURES_OK);
	wr(0x070, STATUS_ACK | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK);
	cr_assert_eq(st->activates, 1);
	cr_assert(rd(0x070) & STATUS_DRIVER_OK);
	cr_assert_not(rd(0x070) & STATUS_FAILED);

	st->activate_ret = -22;
	negotiate(1ULL << VIRTIO_F_VERSION_1);
	wr(0x070, STATUS_ACK | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK);
	cr_assert_eq(st->activates, 2);
	cr_assert(rd(0x070) & STATUS_FAILED);
}

Test(vmm_virtio_mmio, notify_only_when_driver_ok_and_queue_exists)
{
	wr(0x050, 0);
	cr_assert_eq(st->notifies, 0, "notify before DRIVER_OK");
	negotiate(1ULL << VIRTIO_F_VERSION_1);
	wr(0x070, STATUS_ACK | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK);
	wr(0x050, 1);
	cr_assert_eq(st->notifies, 1);
	cr_assert_eq(st->last_notify, 1);
	wr(0x050, 2);
	wr(0x050, 0xffff);
	cr_assert_eq(st->notifies, 1, "notify for a queue the device does not have");
}

Test(vmm_virtio_mmio, interrupt_ack_clears_bits)
{
	dev->isr = 3;
	cr_assert_eq(rd(0x060), 3);
	wr(0x064, 1);
	cr_assert_eq(rd(0x060), 2);
	wr(0x064, 2);
	cr_assert_eq(rd(0x060), 0);
}

Test(vmm_virtio_mmio, status_zero_resets_everything)
{
	cr_assert(negotiate((1ULL << VIRTIO_F_VERSION_1) | (1ULL << FEAT_LOW)) & STATUS_FEATURES_OK);
	setup_queue(0, 8, G + 0x1000, G + 0x2000, G + 0x3000);
	cr_assert_eq(rd(0x044), 1);
	wr(0x070, STATUS_ACK | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK);
	dev->isr = 1;
	int resets = st->resets;

	wr(0x070, 0);
	cr_assert_eq(st->resets, resets + 1, "device reset hook not called");
	cr_assert_eq(rd(0x070), 0);
	cr_assert_eq(rd(0x060), 0, "ISR cleared");
	cr_assert_not(virtio_has_feature(dev, VIRTIO_F_VERSION_1));
	cr_assert_not(virtio_has_feature(dev, FEAT_LOW));
	wr(0x030, 0);
	cr_assert_eq(rd(0x044), 0, "queue still live after reset");
	cr_assert_eq(dev->vq[0].size, 0);
	cr_assert_eq(dev->vq[0].desc_gpa, 0);
	/* Features can be negotiated afresh. */
	cr_assert(negotiate(1ULL << VIRTIO_F_VERSION_1) & STATUS_FEATURES_OK);
}

Test(vmm_virtio_mmio, reset_clears_needs_reset)
{
	expect_needs_reset(3, G, G + 0x1000, G + 0x2000);
	wr(0x070, 0);
	cr_assert_eq(rd(0x070), 0);
	setup_queue(0, 8, G + 0x1000, G + 0x2000, G + 0x3000);
	cr_assert_eq(rd(0x044), 1);
	cr_assert_not(rd(0x070) & STATUS_NEEDS_RESET);
}
