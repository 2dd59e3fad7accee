/*
 * The arm64 guest's physical memory map: one table, no magic numbers
 * elsewhere (the arm64 twin of vmm/boot_layout.h). Every guest-visible MMIO
 * region lies in the first GiB, below RAM, which starts at 2 GiB as on
 * kvmtool and Firecracker (Arm's DEN0001 memory-map guidance: DRAM at 2 GiB
 * in a 32-bit map, growing upwards in a 40-bit one).
 *
 *   0x0000_0000 - 0x07ff_ffff  nothing (a guest access is an MMIO exit the
 *                              VMM refuses; a NULL dereference stays a fault)
 *   0x0800_0000 - 0x0800_ffff  GIC distributor (GICv3 and GICv2)
 *   0x0801_0000 - 0x0801_1fff  GICv2 CPU interface (GICv2 only)
 *   0x080a_0000 - 0x088a_0000  GICv3 redistributors, 128 KiB per vCPU (64)
 *   0x0900_0000 - 0x0900_0fff  UART: a 16550 on MMIO ("ns16550a")
 *   0x0a00_0000 - 0x0a01_ffff  virtio-mmio, 32 slots of 4 KiB
 *   0x4000_0000 - 0x7fff_ffff  reserved (a PCI window, if ever)
 *   0x8000_0000 -              RAM (up to 1 TiB: KVM's default 40-bit IPA)
 *
 * Inside RAM (arm64_boot_place() in image.h; nothing loads it yet): the
 * kernel Image at the RAM base (2 MiB aligned, plus the Image header's
 * text_offset), the initrd as high as it fits below the device tree, the
 * device tree in the last 2 MiB of RAM (ARM64_FDT_MAX_SIZE).
 *
 * Interrupts: SPI numbers here are what the device tree says (INTID - 32;
 * KVM_IRQ_LINE takes the INTID). The timer's PPIs are the architected ones.
 */
#ifndef MVM_ARM64_LAYOUT_H
#define MVM_ARM64_LAYOUT_H

#define ARM64_MMIO_START       0x08000000ULL	/* lowest guest-visible device */

/* GIC. Sizes are KVM's (KVM_VGIC_V3_DIST_SIZE, KVM_VGIC_V3_REDIST_SIZE per
 * vCPU: RD_base + SGI_base frames; KVM_VGIC_V2_DIST_SIZE, _CPU_SIZE); the
 * cross-build check (make arm64-check) compares them with <asm/kvm.h>. */
#define ARM64_GIC_DIST_BASE    0x08000000ULL
#define ARM64_GICV3_DIST_SIZE  0x10000ULL
#define ARM64_GICV2_DIST_SIZE  0x1000ULL
#define ARM64_GICV2_CPU_BASE   0x08010000ULL
#define ARM64_GICV2_CPU_SIZE   0x2000ULL
#define ARM64_GICV3_REDIST_BASE 0x080a0000ULL
#define ARM64_GICV3_REDIST_SIZE 0x20000ULL	/* per vCPU */
#define ARM64_GICV3_MAX_CPUS   64	/* VM_MAX_CPUS; the region ends below the UART */
#define ARM64_GICV2_MAX_CPUS   8	/* GICv2 addresses at most 8 CPU interfaces */

#define ARM64_UART_BASE        0x09000000ULL
#define ARM64_UART_SIZE        0x1000ULL
#define ARM64_UART_CLOCK_HZ    1843200	/* the 16550's classic crystal */

#define ARM64_VIRTIO_BASE      0x0a000000ULL
#define ARM64_VIRTIO_SIZE      0x1000ULL	/* one page per device, as on x86 */
#define ARM64_VIRTIO_SLOTS     32	/* VM_MAX_DEVICES */

#define ARM64_MMIO_END         0x40000000ULL	/* first byte past the device area */

#define ARM64_RAM_BASE         0x80000000ULL
#define ARM64_RAM_END_MAX      (1ULL << 40)	/* KVM's default IPA size (40 bits) */
#define ARM64_RAM_MAX          (ARM64_RAM_END_MAX - ARM64_RAM_BASE)

/* The arm64 boot protocol (Linux Documentation/arch/arm64/booting.rst,
 * arch/arm64/include/asm/boot.h): the Image at a 2 MiB aligned base, the
 * DTB 8-byte aligned and at most 2 MiB. */
#define ARM64_KERNEL_ALIGN     0x200000ULL
#define ARM64_FDT_MAX_SIZE     0x200000ULL
#define ARM64_FDT_ALIGN        8
#define ARM64_CMDLINE_MAX      2048	/* COMMAND_LINE_SIZE of arm64 Linux 6.1 */

/* SPIs (device-tree numbering, INTID - 32). The vGIC KVM creates without
 * KVM_DEV_ARM_VGIC_GRP_NR_IRQS has 256 interrupts: SPIs 0..223. */
#define ARM64_SPI_UART         1
#define ARM64_SPI_VIRTIO_BASE  16	/* slot i: SPI 16 + i */
#define ARM64_SPI_MAX          223
#define ARM64_SPI_INTID(spi)   ((spi) + 32)

/* PPIs of the architected timer (device-tree numbering, INTID - 16): secure
 * physical, non-secure physical, virtual, hypervisor; and the GIC's
 * maintenance interrupt. Fixed by the Arm Base System Architecture. */
#define ARM64_PPI_TIMER_SEC    13
#define ARM64_PPI_TIMER_PHYS   14
#define ARM64_PPI_TIMER_VIRT   11
#define ARM64_PPI_TIMER_HYP    10
#define ARM64_PPI_GIC_MAINT    9

#endif
