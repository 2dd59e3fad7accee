/*
 * Boot data in guest memory: command line, initrd placement, PVH start info,
 * bzImage zero page, identity page tables and GDT. Pure writes into guest
 * memory through the checked accessor; no KVM.
 */
#ifndef MVM_BOOT_SETUP_H
#define MVM_BOOT_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/guest_mem.h"
#include "vmm/kernel_image.h"

struct boot_info {
	const char *cmdline;
	uint64_t initrd_gpa;	/* 0 when there is none */
	uint64_t initrd_size;
};

/*
 * Highest page-aligned address for an initrd of @size bytes: below the end
 * of low RAM and the kernel's initrd_addr_max, above the loaded kernel.
 * 0 when it does not fit.
 */
uint64_t boot_initrd_addr(const struct guest_mem *m, const struct kernel_image *k,
			  uint64_t size);
/* Largest command line (with NUL) the kernel accepts. */
uint32_t boot_cmdline_cap(const struct kernel_image *k);

int boot_write_pvh(struct guest_mem *m, const struct boot_info *bi);
int boot_write_zero_page(struct guest_mem *m, const struct kernel_image *k,
			 const uint8_t *kernel, size_t kernel_len, const struct boot_info *bi);
/* 4 GiB identity map with 2 MiB pages (bzImage entry runs paged). */
int boot_write_page_tables(struct guest_mem *m);
/* Flat GDT: 64-bit code segment for bzImage, 32-bit for PVH. */
int boot_write_gdt(struct guest_mem *m, bool long_mode);

#endif
