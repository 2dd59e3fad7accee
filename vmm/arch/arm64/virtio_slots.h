/*
 * Where the arm64 machine puts its virtio-mmio devices and how their
 * interrupts reach the guest: the arm64 answer to vm_alloc_virtio_slot()
 * (vmm/vm.h), pure so it is unit-tested without KVM. Slot i of layout.h
 * (ARM64_VIRTIO_BASE + i * 4 KiB, SPI ARM64_SPI_VIRTIO_BASE + i) is the
 * i-th device made; the same table is what the device tree describes
 * (arm64_virtio_slots_describe), so the guest finds each device at the
 * address and SPI its transport serves.
 *
 * Interrupt numbers, one SPI in three encodings:
 *   device tree   <GIC_SPI spi flags>        (spi: INTID - 32)
 *   KVM_IRQFD     gsi = spi                  (KVM's default vGIC routing:
 *                                              GSI n is pin n, SPI INTID 32 + n)
 *   KVM_IRQ_LINE  arm64_irq_line_spi(spi)    (type SPI << 24 | INTID, regs.h)
 */
#ifndef MVM_ARM64_VIRTIO_SLOTS_H
#define MVM_ARM64_VIRTIO_SLOTS_H

#include <stdint.h>

#include "vmm/arch/arm64/machine.h"

struct arm64_virtio_slots {
	struct arm64_mmio_dev dev[ARM64_MAX_VIRTIO];
	int n;
};

/*
 * The next free slot: its MMIO base in *@base and, in *@gsi, the GSI whose
 * irqfd raises its SPI. 0, or -ENOSPC when all ARM64_MAX_VIRTIO are taken
 * (nothing changes then).
 */
int arm64_virtio_slot_alloc(struct arm64_virtio_slots *s, uint64_t *base, uint32_t *gsi);

/* The irqfd GSI of SPI @spi (device-tree numbering), per the table above. */
uint32_t arm64_spi_gsi(uint32_t spi);

/* Point @m's virtio devices at @s's (in slot order): the device tree then
 * carries one `virtio,mmio` node per device made. @s must outlive @m's use. */
void arm64_virtio_slots_describe(const struct arm64_virtio_slots *s, struct arm64_machine *m);

#endif
