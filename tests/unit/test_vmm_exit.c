/* Exit decoding from struct kvm_run and dispatch to the PIO/MMIO buses. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/bus.h"
#include "vmm/exit.h"

#define MAX_ACC 8192

struct access {
	bool write;
	uint64_t off;
	uint32_t len;
	uint8_t data[8];
};

struct recorder {
	int n;
	struct access acc[MAX_ACC];
	uint8_t next;		/* reads return next, next+1, ... */
};

static void rec_read(void *opaque, uint64_t off, uint8_t *data, uint32_t len)
{
	struct recorder *r = opaque;

	cr_assert(len >= 1 && len <= 8);
	for (uint32_t i = 0; i < len; i++)
		data[i] = r->next++;
	if (r->n < MAX_ACC) {
		r->acc[r->n] = (struct access){ false, off, len, { 0 } };
		memcpy(r->acc[r->n].data, data, len);
	}
	r->n++;
}

static void rec_write(void *opaque, uint64_t off, const uint8_t *data, uint32_t len)
{
	struct recorder *r = opaque;

	cr_assert(len >= 1 && len <= 8);
	if (r->n < MAX_ACC) {
		r->acc[r->n] = (struct access){ true, off, len, { 0 } };
		memcpy(r->acc[r->n].data, data, len);
	}
	r->n++;
}

static const struct bus_dev_ops rec_ops = { .read = rec_read, .write = rec_write };
static const struct bus_dev_ops write_only_ops = { .write = rec_write };

static struct bus pio, mmio;
static struct recorder *prec, *mrec;

#define PIO_BASE 0x3f8
#define MMIO_BASE 0xd0000000ULL

static void setup(void)
{
	memset(&pio, 0, sizeof(pio));
	memset(&mmio, 0, sizeof(mmio));
	prec = calloc(1, sizeof(*prec));
	mrec = calloc(1, sizeof(*mrec));
	prec->next = 0x10;
	mrec->next = 0x80;
	cr_assert_eq(bus_add(&pio, PIO_BASE, 8, &rec_ops, prec), 0);
	cr_assert_eq(bus_add(&mmio, MMIO_BASE, 0x1000, &rec_ops, mrec), 0);
}

static void teardown(void)
{
	free(prec);
	free(mrec);
}

TestSuite(vmm_exit, .init = setup, .fini = teardown);

static struct vm_exit pio_exit(uint16_t port, uint32_t len, uint32_t count, bool write, uint8_t *data)
{
	return (struct vm_exit){ .kind = EXIT_PIO, .addr = port, .len = len, .count = count,
				 .is_write = write, .data = data };
}

static struct vm_exit mmio_exit(uint64_t addr, uint32_t len, bool write, uint8_t *data)
{
	return (struct vm_exit){ .kind = EXIT_MMIO, .addr = addr, .len = len, .count = 1,
				 .is_write = write, .data = data };
}

Test(vmm_exit, pio_write_reaches_device_at_offset)
{
	uint8_t data[4] = { 'A' };
	struct vm_exit e = pio_exit(PIO_BASE + 3, 1, 1, true, data);

	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(prec->n, 1);
	cr_assert(prec->acc[0].write);
	cr_assert_eq(prec->acc[0].off, 3);
	cr_assert_eq(prec->acc[0].len, 1);
	cr_assert_eq(prec->acc[0].data[0], 'A');
	cr_assert_eq(mrec->n, 0, "PIO must not reach the MMIO bus");
}

Test(vmm_exit, pio_read_fills_data)
{
	uint8_t data[4] = { 0xee, 0xee, 0xee, 0xee };
	struct vm_exit e = pio_exit(PIO_BASE + 4, 4, 1, false, data);

	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(prec->n, 1);
	cr_assert_not(prec->acc[0].write);
	cr_assert_eq(prec->acc[0].off, 4);
	cr_assert_eq(prec->acc[0].len, 4);
	cr_assert_eq(data[0], 0x10);
	cr_assert_eq(data[3], 0x13);
}

Test(vmm_exit, pio_read_of_unclaimed_port_is_all_ones)
{
	uint8_t data[2] = { 0 };
	struct vm_exit e = pio_exit(0x80, 2, 1, false, data);

	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(data[0], 0xff);
	cr_assert_eq(data[1], 0xff);
	cr_assert_eq(prec->n, 0);
}

Test(vmm_exit, string_pio_write_repeats_over_consecutive_data)
{
	uint8_t data[6] = { 1, 2, 3, 4, 5, 6 };
	struct vm_exit e = pio_exit(PIO_BASE, 2, 3, true, data);

	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(prec->n, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert(prec->acc[i].write);
		cr_assert_eq(prec->acc[i].off, 0, "string I/O hits the same port");
		cr_assert_eq(prec->acc[i].len, 2);
		cr_assert_eq(prec->acc[i].data[0], 1 + 2 * i);
		cr_assert_eq(prec->acc[i].data[1], 2 + 2 * i);
	}
}

Test(vmm_exit, string_pio_read_fills_each_element)
{
	uint8_t data[16];
	struct vm_exit e = pio_exit(PIO_BASE + 2, 4, 4, false, data);

	memset(data, 0, sizeof(data));
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(prec->n, 4);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(data[i], 0x10 + i);
}

Test(vmm_exit, string_pio_up_to_one_page)
{
	uint8_t *data = calloc(1, 4096);
	struct vm_exit e = pio_exit(PIO_BASE, 1, 4096, true, data);

	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(prec->n, 4096);
	e = pio_exit(PIO_BASE, 4, 1024, false, data);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(prec->n, 4096 + 1024);
	free(data);
}

Test(vmm_exit, pio_bad_width_or_count_is_an_error)
{
	uint8_t data[8] = { 0 };
	static const struct { uint32_t len, count; } bad[] = {
		{ 0, 1 }, { 3, 1 }, { 8, 1 }, { 16, 1 }, { 1, 0 },
		{ 1, 4097 }, { 2, 2049 }, { 4, 1025 },
		{ 4, 0x40000001 },	/* count * len wraps 32 bits */
		{ 4, 0xffffffff },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vm_exit e = pio_exit(PIO_BASE, bad[i].len, bad[i].count, true, data);

		cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR,
			     "len %u count %u", bad[i].len, bad[i].count);
		e.is_write = false;
		cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR);
	}
	cr_assert_eq(prec->n, 0, "a rejected exit must not reach the device");
}

Test(vmm_exit, mmio_hit_write_and_read)
{
	uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct vm_exit e = mmio_exit(MMIO_BASE + 0x70, 4, true, data);

	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(mrec->n, 1);
	cr_assert(mrec->acc[0].write);
	cr_assert_eq(mrec->acc[0].off, 0x70);
	cr_assert_eq(mrec->acc[0].len, 4);
	cr_assert_eq(memcmp(mrec->acc[0].data, data, 4), 0);

	memset(data, 0, sizeof(data));
	e = mmio_exit(MMIO_BASE + 0xff8, 8, false, data);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(mrec->n, 2);
	cr_assert_eq(mrec->acc[1].off, 0xff8);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(data[i], 0x80 + i);
	cr_assert_eq(prec->n, 0, "MMIO must not reach the PIO bus");
}

Test(vmm_exit, mmio_miss_reads_all_ones_and_drops_writes)
{
	uint8_t data[8] = { 0 };
	struct vm_exit e = mmio_exit(0xfebf0000ULL, 8, false, data);

	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(data[i], 0xff);
	e = mmio_exit(MMIO_BASE + 0x1000, 4, true, data);	/* just past the device */
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(mrec->n, 0);
}

Test(vmm_exit, mmio_bad_width_is_an_error)
{
	uint8_t data[16] = { 0 };
	static const uint32_t bad[] = { 0, 3, 5, 6, 7, 9, 16, 0xffffffff };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vm_exit e = mmio_exit(MMIO_BASE, bad[i], false, data);

		cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR, "len %u", bad[i]);
		e.is_write = true;
		cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR, "len %u", bad[i]);
	}
	cr_assert_eq(mrec->n, 0);
}

Test(vmm_exit, non_io_exit_actions)
{
	struct vm_exit e = { 0 };

	e.kind = EXIT_SHUTDOWN;
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_SHUTDOWN);
	e.kind = EXIT_SYSTEM_EVENT;
	e.detail = KVM_SYSTEM_EVENT_SHUTDOWN;
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_SHUTDOWN);
	e.detail = KVM_SYSTEM_EVENT_RESET;
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_SHUTDOWN);
	e.kind = EXIT_FAIL;
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR);
	e.kind = EXIT_UNKNOWN;
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR);
	e.kind = (enum exit_kind)1234;
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR);
	e.kind = EXIT_NONE;
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(prec->n + mrec->n, 0);
}

Test(vmm_exit, kind_names)
{
	cr_assert_str_eq(exit_kind_name(EXIT_PIO), "pio");
	cr_assert_str_eq(exit_kind_name(EXIT_MMIO), "mmio");
	cr_assert_str_eq(exit_kind_name((enum exit_kind)999), "?");
	cr_assert_str_eq(exit_kind_name((enum exit_kind)-1), "?");
}

/* ---- exit_decode ---- */

static struct kvm_run *new_run(void)
{
	/* kvm_run is the first page of the vCPU mapping; PIO data follows in it. */
	struct kvm_run *run = aligned_alloc(4096, 8192);

	memset(run, 0, 8192);
	return run;
}

static void garbage(struct vm_exit *e)
{
	memset(e, 0xa5, sizeof(*e));
}

Test(vmm_exit, decode_io_out_and_dispatch)
{
	struct kvm_run *run = new_run();
	struct vm_exit e;

	run->exit_reason = KVM_EXIT_IO;
	run->io.direction = KVM_EXIT_IO_OUT;
	run->io.size = 2;
	run->io.port = PIO_BASE + 6;
	run->io.count = 3;
	run->io.data_offset = 4096;
	memcpy((uint8_t *)run + 4096, "abcdef", 6);
	garbage(&e);
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_PIO);
	cr_assert_eq(e.raw_reason, KVM_EXIT_IO);
	cr_assert_eq(e.addr, PIO_BASE + 6);
	cr_assert_eq(e.len, 2);
	cr_assert_eq(e.count, 3);
	cr_assert(e.is_write);
	cr_assert_eq(e.data, (uint8_t *)run + 4096);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(prec->n, 3);
	cr_assert_eq(memcmp(prec->acc[2].data, "ef", 2), 0);
	free(run);
}

Test(vmm_exit, decode_io_in_fills_the_run_page)
{
	struct kvm_run *run = new_run();
	struct vm_exit e;

	run->exit_reason = KVM_EXIT_IO;
	run->io.direction = KVM_EXIT_IO_IN;
	run->io.size = 1;
	run->io.port = PIO_BASE;
	run->io.count = 1;
	run->io.data_offset = 0x1000;
	exit_decode(run, &e);
	cr_assert_not(e.is_write);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	/* KVM hands this byte to the guest on the next KVM_RUN. */
	cr_assert_eq(((uint8_t *)run)[0x1000], 0x10);
	free(run);
}

Test(vmm_exit, decode_mmio)
{
	struct kvm_run *run = new_run();
	struct vm_exit e;

	run->exit_reason = KVM_EXIT_MMIO;
	run->mmio.phys_addr = MMIO_BASE + 0x50;
	run->mmio.len = 4;
	run->mmio.is_write = 1;
	memcpy(run->mmio.data, "\x02\0\0\0", 4);
	garbage(&e);
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_MMIO);
	cr_assert_eq(e.addr, MMIO_BASE + 0x50);
	cr_assert_eq(e.len, 4);
	cr_assert_eq(e.count, 1);
	cr_assert(e.is_write);
	cr_assert_eq(e.data, run->mmio.data);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(mrec->n, 1);
	cr_assert_eq(mrec->acc[0].off, 0x50);
	cr_assert_eq(mrec->acc[0].data[0], 2);

	run->mmio.is_write = 0;
	run->mmio.len = 2;
	exit_decode(run, &e);
	cr_assert_not(e.is_write);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(run->mmio.data[0], 0x80);
	cr_assert_eq(run->mmio.data[1], 0x81);
	free(run);
}

Test(vmm_exit, decode_other_reasons)
{
	struct kvm_run *run = new_run();
	struct vm_exit e;

	run->exit_reason = KVM_EXIT_SHUTDOWN;
	garbage(&e);
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_SHUTDOWN);
	cr_assert_null(e.data);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_SHUTDOWN);

	run->exit_reason = KVM_EXIT_INTERNAL_ERROR;
	run->internal.suberror = KVM_INTERNAL_ERROR_EMULATION;
	garbage(&e);
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_FAIL);
	cr_assert_eq(e.detail, KVM_INTERNAL_ERROR_EMULATION);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR);

	run->exit_reason = KVM_EXIT_FAIL_ENTRY;
	run->fail_entry.hardware_entry_failure_reason = 0x80000021ULL;
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_FAIL);
	cr_assert_eq(e.detail, 0x80000021ULL);

	memset(run, 0, 8192);
	run->exit_reason = KVM_EXIT_SYSTEM_EVENT;
	run->system_event.type = KVM_SYSTEM_EVENT_RESET;
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_SYSTEM_EVENT);
	cr_assert_eq(e.detail, KVM_SYSTEM_EVENT_RESET);

	run->exit_reason = KVM_EXIT_HLT;
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_HLT);

	run->exit_reason = KVM_EXIT_INTR;
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_NONE);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);

	run->exit_reason = 0xdead;
	exit_decode(run, &e);
	cr_assert_eq(e.kind, EXIT_UNKNOWN);
	cr_assert_eq(e.raw_reason, 0xdead);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_ERROR);
	free(run);
}

/* ---- bus ---- */

Test(vmm_exit, bus_add_overlaps_rejected)
{
	struct bus b = { 0 };
	struct recorder *r = prec;

	cr_assert_eq(bus_add(&b, 0x100, 0x10, &rec_ops, r), 0);
	cr_assert_eq(bus_add(&b, 0x100, 0x10, &rec_ops, r), -EBUSY, "identical");
	cr_assert_eq(bus_add(&b, 0xf8, 0x10, &rec_ops, r), -EBUSY, "overlaps the start");
	cr_assert_eq(bus_add(&b, 0x10f, 1, &rec_ops, r), -EBUSY, "last byte");
	cr_assert_eq(bus_add(&b, 0x104, 2, &rec_ops, r), -EBUSY, "inside");
	cr_assert_eq(bus_add(&b, 0x0, 0x1000, &rec_ops, r), -EBUSY, "contains");
	cr_assert_eq(b.nr, 1);
	cr_assert_eq(bus_add(&b, 0xf0, 0x10, &rec_ops, r), 0, "adjacent below");
	cr_assert_eq(bus_add(&b, 0x110, 0x10, &rec_ops, r), 0, "adjacent above");
	cr_assert_eq(bus_add(&b, 0x200, 0, &rec_ops, r), -EINVAL, "empty");
	cr_assert_eq(bus_add(&b, UINT64_MAX - 4, 0x10, &rec_ops, r), -EINVAL, "wraps");
	cr_assert_eq(b.nr, 3);
}

Test(vmm_exit, bus_full)
{
	struct bus b = { 0 };

	for (int i = 0; i < BUS_MAX_RANGES; i++)
		cr_assert_eq(bus_add(&b, 0x1000ULL * i, 0x10, &rec_ops, prec), 0);
	cr_assert_eq(bus_add(&b, 0x1000000, 0x10, &rec_ops, prec), -ENOSPC);
}

Test(vmm_exit, access_straddling_a_range_end_is_not_delivered)
{
	uint8_t data[8] = { 0 };

	/* PIO range is [0x3f8, 0x400): 4 bytes at 0x3fe cross its end. */
	cr_assert_not(bus_read(&pio, PIO_BASE + 6, data, 4));
	cr_assert_eq(data[0], 0xff);
	cr_assert_eq(data[3], 0xff);
	cr_assert_not(bus_write(&pio, PIO_BASE + 6, data, 4));
	cr_assert_not(bus_read(&pio, PIO_BASE - 1, data, 2), "straddles the start");
	cr_assert_eq(prec->n, 0);
	/* Through dispatch too. */
	struct vm_exit e = mmio_exit(MMIO_BASE + 0xffc, 8, true, data);
	cr_assert_eq(exit_dispatch(&pio, &mmio, &e), EXIT_ACT_CONTINUE);
	cr_assert_eq(mrec->n, 0);
	/* The last bytes themselves are fine. */
	cr_assert(bus_read(&pio, PIO_BASE + 4, data, 4));
	cr_assert_eq(prec->n, 1);
	cr_assert_eq(prec->acc[0].off, 4);
}

Test(vmm_exit, access_near_2_64_does_not_wrap)
{
	struct bus b = { 0 };
	uint8_t data[8];

	cr_assert_eq(bus_add(&b, UINT64_MAX - 0x1f, 0x10, &rec_ops, prec), 0);
	cr_assert(bus_read(&b, UINT64_MAX - 0x17, data, 8));
	cr_assert_not(bus_read(&b, UINT64_MAX - 0x13, data, 8));
	cr_assert_not(bus_read(&b, UINT64_MAX - 3, data, 8));	/* addr + len wraps */
	cr_assert_not(bus_read(&b, 0, data, 1));
	cr_assert_eq(prec->n, 1);
}

Test(vmm_exit, device_without_read_op_reads_all_ones)
{
	struct bus b = { 0 };
	uint8_t data[4] = { 0 };

	cr_assert_eq(bus_add(&b, 0x60, 4, &write_only_ops, prec), 0);
	cr_assert(bus_read(&b, 0x60, data, 4), "claimed, even without a read op");
	cr_assert_eq(data[0], 0xff);
	cr_assert_eq(prec->n, 0);
	cr_assert(bus_write(&b, 0x61, data, 1));
	cr_assert_eq(prec->n, 1);
	cr_assert_eq(prec->acc[0].off, 1);
}
