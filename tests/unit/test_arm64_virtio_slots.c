/*
 * The arm64 virtio-mmio slot table (vmm/arch/arm64/virtio_slots.h): each
 * device gets the next 4 KiB slot and an SPI, its irqfd GSI names that
 * SPI the way KVM's default vGIC routing reads it, and the device tree
 * written from the same table tells the guest that address and SPI.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <libfdt.h>
#include <string.h>

#include "vmm/arch/arm64/fdt.h"
#include "vmm/arch/arm64/regs.h"
#include "vmm/arch/arm64/virtio_slots.h"

static uint8_t blob[64 * 1024];
static char err[256];

static uint64_t be64_at(const fdt32_t *c)
{
	return (uint64_t)fdt32_to_cpu(c[0]) << 32 | fdt32_to_cpu(c[1]);
}

Test(arm64_virtio_slots, slots_in_order_then_enospc)
{
	struct arm64_virtio_slots s = { .n = 0 };
	uint64_t base;
	uint32_t gsi;

	for (int i = 0; i < ARM64_MAX_VIRTIO; i++) {
		cr_assert_eq(arm64_virtio_slot_alloc(&s, &base, &gsi), 0, "slot %d", i);
		cr_assert_eq(base, ARM64_VIRTIO_BASE + 0x1000ULL * (uint64_t)i);
		cr_assert_eq(gsi, (uint32_t)(ARM64_SPI_VIRTIO_BASE + i));
		cr_assert_eq(s.dev[i].base, base);
		cr_assert_eq(s.dev[i].size, 0x1000);
	}
	base = 1;
	gsi = 2;
	cr_assert_eq(arm64_virtio_slot_alloc(&s, &base, &gsi), -ENOSPC);
	cr_assert_eq(s.n, ARM64_MAX_VIRTIO, "a refused slot changes nothing");
	cr_assert_eq(base, 1);
	cr_assert_eq(gsi, 2);
	s.n = -1;	/* a corrupted count is refused, not indexed */
	cr_assert_eq(arm64_virtio_slot_alloc(&s, &base, &gsi), -ENOSPC);
}

/* One SPI, three encodings: the GSI an irqfd takes is the device tree's
 * SPI number; KVM_IRQ_LINE takes type SPI (1) << 24 and the INTID. */
Test(arm64_virtio_slots, spi_encodings_agree)
{
	for (uint32_t spi = 0; spi <= ARM64_SPI_MAX; spi++) {
		cr_assert_eq(arm64_spi_gsi(spi), spi);
		cr_assert_eq(arm64_irq_line_spi(spi), (1u << 24) | (spi + 32));
	}
	/* The last slot's SPI still fits the vGIC KVM makes (256 INTIDs). */
	cr_assert_leq(ARM64_SPI_VIRTIO_BASE + ARM64_MAX_VIRTIO - 1 + 32, 255);
}

/* What the VMM serves is what the guest is told: every allocated slot is a
 * virtio,mmio node with that reg and that SPI, and nothing else is. */
Test(arm64_virtio_slots, device_tree_describes_every_slot)
{
	struct arm64_virtio_slots s = { .n = 0 };
	struct arm64_machine m;
	uint64_t base[3];
	uint32_t gsi[3];
	int off, i = 0, len;

	for (int k = 0; k < 3; k++)
		cr_assert_eq(arm64_virtio_slot_alloc(&s, &base[k], &gsi[k]), 0);
	arm64_machine_init(&m, 256ULL << 20, 2, ARM64_GIC_V3);
	arm64_virtio_slots_describe(&s, &m);
	cr_assert_eq(m.nr_virtio, 3);
	cr_assert_gt(arm64_fdt_build(&m, blob, sizeof(blob), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fdt_check_full(blob, fdt_totalsize(blob)), 0);
	for (off = fdt_node_offset_by_compatible(blob, -1, "virtio,mmio"); off >= 0;
	     off = fdt_node_offset_by_compatible(blob, off, "virtio,mmio"), i++) {
		const fdt32_t *reg = fdt_getprop(blob, off, "reg", &len);
		const fdt32_t *irq;

		cr_assert(i < 3, "more virtio nodes than devices");
		cr_assert_eq(len, 16);
		cr_assert_eq(be64_at(reg), base[i]);
		cr_assert_eq(be64_at(reg + 2), 0x1000);
		irq = fdt_getprop(blob, off, "interrupts", &len);
		cr_assert_eq(len, 12);
		cr_assert_eq(fdt32_to_cpu(irq[0]), 0, "an SPI");
		cr_assert_eq(arm64_spi_gsi(fdt32_to_cpu(irq[1])), gsi[i],
			     "the irqfd raises the SPI the guest listens on");
	}
	cr_assert_eq(i, 3);
}

Test(arm64_virtio_slots, no_devices_no_nodes)
{
	struct arm64_virtio_slots s = { .n = 0 };
	struct arm64_machine m;

	arm64_machine_init(&m, 256ULL << 20, 1, ARM64_GIC_V3);
	arm64_virtio_slots_describe(&s, &m);
	cr_assert_null(m.virtio);
	cr_assert_eq(m.nr_virtio, 0);
	cr_assert_gt(arm64_fdt_build(&m, blob, sizeof(blob), err, sizeof(err)), 0, "%s", err);
	cr_assert_lt(fdt_node_offset_by_compatible(blob, -1, "virtio,mmio"), 0);
}
