/*
 * What an arm64 guest's machine is made of, as plain data: RAM, vCPUs, the
 * GIC, PSCI, the UART, the virtio-mmio devices, the boot inputs. The device
 * tree (fdt.h) is written from it; later the vGIC and vCPU set-up will read
 * the same struct. Pure: no KVM, no allocation.
 */
#ifndef MVM_ARM64_MACHINE_H
#define MVM_ARM64_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/layout.h"

#define ARM64_MAX_CPUS   ARM64_GICV3_MAX_CPUS
#define ARM64_MAX_VIRTIO ARM64_VIRTIO_SLOTS

enum arm64_gic_version { ARM64_GIC_V3 = 3, ARM64_GIC_V2 = 2 };
enum arm64_psci_version { ARM64_PSCI_0_2, ARM64_PSCI_1_0 };

struct arm64_region {
	uint64_t base;
	uint64_t size;
};

struct arm64_mmio_dev {
	uint64_t base;
	uint64_t size;
	uint32_t spi;		/* device-tree SPI number (INTID - 32) */
};

struct arm64_machine {
	struct arm64_region ram;
	int ncpus;
	/* @ncpus MPIDR_EL1 values as KVM reports them; NULL: KVM's reset
	 * values (arm64_mpidr_default). Only the affinity fields are used. */
	const uint64_t *mpidr;
	enum arm64_gic_version gic;
	struct arm64_region gic_dist;
	/* GICv3: the redistributor region (128 KiB per vCPU);
	 * GICv2: the CPU interface. */
	struct arm64_region gic_cpu;
	enum arm64_psci_version psci;
	struct arm64_mmio_dev uart;
	const struct arm64_mmio_dev *virtio;	/* @nr_virtio devices, in slot order */
	int nr_virtio;
	const char *bootargs;			/* NULL: an empty command line */
	uint64_t initrd_start, initrd_size;	/* size 0: no initrd */
};

/*
 * The machine of layout.h: @ram_size bytes of RAM at ARM64_RAM_BASE, @ncpus
 * vCPUs, GIC @gic with its regions, PSCI 1.0, the UART. No virtio device,
 * command line or initrd: the caller adds them. Nothing is checked here;
 * arm64_machine_check() does that.
 */
void arm64_machine_init(struct arm64_machine *m, uint64_t ram_size, int ncpus,
			enum arm64_gic_version gic);
/* Virtio-mmio slot @slot (0 .. ARM64_MAX_VIRTIO-1) of layout.h. */
struct arm64_mmio_dev arm64_virtio_slot(int slot);
/* MPIDR_EL1 that KVM gives vCPU @id at reset (Aff0 = id & 15, Aff1 = id >> 4). */
uint64_t arm64_mpidr_default(int id);

/*
 * Check @m before anything is built from it: 1..ARM64_MAX_CPUS vCPUs
 * (GICv2: at most 8), RAM inside the layout's RAM window, every MMIO
 * region non-empty, below RAM and overlapping no other, every SPI in range
 * and used once, at most ARM64_MAX_VIRTIO devices, the command line shorter
 * than ARM64_CMDLINE_MAX, the initrd inside RAM. 0, or -EINVAL / -E2BIG
 * with the reason in @err.
 */
int arm64_machine_check(const struct arm64_machine *m, char *err, size_t errlen);

#endif
