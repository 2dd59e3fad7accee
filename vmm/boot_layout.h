/* Where boot data lives in guest low memory (x86). One table, no magic numbers elsewhere. */
#ifndef MVM_BOOT_LAYOUT_H
#define MVM_BOOT_LAYOUT_H

#define BOOT_GDT_ADDR       0x0500ULL
#define BOOT_IDT_ADDR       0x0520ULL
#define BOOT_PVH_INFO_ADDR  0x6000ULL	/* hvm_start_info, modlist, memmap */
#define BOOT_ZERO_PAGE_ADDR 0x7000ULL	/* struct boot_params */
#define BOOT_STACK_ADDR     0x8ff0ULL
#define BOOT_PML4_ADDR      0x9000ULL
#define BOOT_PDPT_ADDR      0xa000ULL
#define BOOT_PD_ADDR        0xb000ULL	/* four pages: identity map of 4 GiB */
#define BOOT_CMDLINE_ADDR   0x20000ULL
#define BOOT_CMDLINE_MAX    2048	/* COMMAND_LINE_SIZE of x86 Linux 6.1 */
#define EBDA_START          0x9fc00ULL
#define BIOS_START          0xf0000ULL	/* MP tables live here */
#define HIMEM_START         0x100000ULL
#define IOAPIC_ADDR         0xfec00000ULL
#define LAPIC_ADDR          0xfee00000ULL
#define VIRTIO_MMIO_BASE    0xd0000000ULL
#define VIRTIO_MMIO_SIZE    0x1000ULL
#define VIRTIO_IRQ_BASE     5
#define VIRTIO_IRQ_MAX      23

#endif
