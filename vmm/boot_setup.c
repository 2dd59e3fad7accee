/* Boot data written into guest memory before the first vCPU runs. */
#include <asm/bootparam.h>
#include <errno.h>
#include <string.h>

#include "vmm/boot_layout.h"
#include "vmm/boot_setup.h"
#include "vmm/e820.h"

/* Xen's hvm_start_info (xen/include/public/arch-x86/hvm/start_info.h), v1. */
#define PVH_MAGIC 0x336ec578
struct pvh_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
struct pvh_mod {
	uint64_t paddr, size, cmdline_paddr, reserved;
};
struct pvh_memmap {
	uint64_t addr, size;
	uint32_t type, reserved;
};

uint32_t boot_cmdline_cap(const struct kernel_image *k)
{
	if (k->kind == KIMG_BZIMAGE && k->cmdline_size + 1 < BOOT_CMDLINE_MAX)
		return k->cmdline_size + 1;
	return BOOT_CMDLINE_MAX;
}

uint64_t boot_initrd_addr(const struct guest_mem *m, const struct kernel_image *k,
			  uint64_t size)
{
	uint64_t top = gm_low_end(m), kend = 0, addr;

	if (k->kind == KIMG_BZIMAGE && k->initrd_addr_max && top > (uint64_t)k->initrd_addr_max + 1)
		top = (uint64_t)k->initrd_addr_max + 1;
	for (int i = 0; i < k->nr_segments; i++) {
		uint64_t end = k->seg[i].paddr + k->seg[i].memsz;

		if (k->kind == KIMG_BZIMAGE && k->init_size > k->seg[i].memsz)
			end = k->seg[i].paddr + k->init_size;
		if (end > kend)
			kend = end;
	}
	if (size > top)
		return 0;
	addr = (top - size) & ~(GM_PAGE_SIZE - 1);
	return addr >= kend ? addr : 0;
}

static int write_cmdline(struct guest_mem *m, const char *cmdline)
{
	size_t n = strlen(cmdline) + 1;

	if (n > BOOT_CMDLINE_MAX)
		return -E2BIG;
	return gm_write(m, BOOT_CMDLINE_ADDR, cmdline, n);
}

int boot_write_pvh(struct guest_mem *m, const struct boot_info *bi)
{
	struct e820_entry e[E820_MAX];
	struct pvh_start_info si = { .magic = PVH_MAGIC, .version = 1 };
	struct pvh_memmap mm[E820_MAX];
	struct pvh_mod mod = { .paddr = bi->initrd_gpa, .size = bi->initrd_size };
	uint64_t mod_gpa = BOOT_PVH_INFO_ADDR + sizeof(si);
	uint64_t mm_gpa = mod_gpa + sizeof(mod);
	int n = e820_build(m, e), ret;

	for (int i = 0; i < n; i++)
		mm[i] = (struct pvh_memmap){ e[i].addr, e[i].size, e[i].type, 0 };
	si.cmdline_paddr = BOOT_CMDLINE_ADDR;
	si.memmap_paddr = mm_gpa;
	si.memmap_entries = (uint32_t)n;
	if (bi->initrd_size) {
		si.nr_modules = 1;
		si.modlist_paddr = mod_gpa;
	}
	ret = write_cmdline(m, bi->cmdline);
	if (!ret)
		ret = gm_write(m, BOOT_PVH_INFO_ADDR, &si, sizeof(si));
	if (!ret)
		ret = gm_write(m, mod_gpa, &mod, sizeof(mod));
	if (!ret)
		ret = gm_write(m, mm_gpa, mm, sizeof(mm[0]) * (uint64_t)n);
	return ret;
}

int boot_write_zero_page(struct guest_mem *m, const struct kernel_image *k,
			 const uint8_t *kernel, size_t kernel_len, const struct boot_info *bi)
{
	struct boot_params *bp = gm_ptr_w(m, BOOT_ZERO_PAGE_ADDR, sizeof(*bp));
	struct e820_entry e[E820_MAX];
	int n = e820_build(m, e);

	if (!bp || k->kind != KIMG_BZIMAGE || kernel_len < 0x1f1 + k->hdr_len)
		return -EINVAL;
	memset(bp, 0, sizeof(*bp));
	memcpy(&bp->hdr, kernel + 0x1f1, k->hdr_len);
	bp->hdr.type_of_loader = 0xff;
	bp->hdr.loadflags |= CAN_USE_HEAP;
	bp->hdr.heap_end_ptr = 0xfe00;
	bp->hdr.vid_mode = 0xffff;
	bp->hdr.cmd_line_ptr = (uint32_t)BOOT_CMDLINE_ADDR;
	bp->hdr.code32_start = (uint32_t)k->seg[0].paddr;
	bp->hdr.ramdisk_image = (uint32_t)bi->initrd_gpa;
	bp->hdr.ramdisk_size = (uint32_t)bi->initrd_size;
	for (int i = 0; i < n; i++) {
		bp->e820_table[i].addr = e[i].addr;
		bp->e820_table[i].size = e[i].size;
		bp->e820_table[i].type = e[i].type;
	}
	bp->e820_entries = (uint8_t)n;
	return write_cmdline(m, bi->cmdline);
}

int boot_write_page_tables(struct guest_mem *m)
{
	uint64_t *pml4 = gm_ptr_w(m, BOOT_PML4_ADDR, 4096);
	uint64_t *pdpt = gm_ptr_w(m, BOOT_PDPT_ADDR, 4096);
	uint64_t *pd = gm_ptr_w(m, BOOT_PD_ADDR, 4 * 4096);

	if (!pml4 || !pdpt || !pd)
		return -EFAULT;
	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = BOOT_PDPT_ADDR | 0x3;		/* present, writable */
	for (int i = 0; i < 4; i++)
		pdpt[i] = (BOOT_PD_ADDR + (uint64_t)i * 4096) | 0x3;
	for (uint64_t i = 0; i < 4 * 512; i++)
		pd[i] = (i << 21) | 0x83;	/* present, writable, 2 MiB page */
	return 0;
}

int boot_write_gdt(struct guest_mem *m, bool long_mode)
{
	uint64_t *gdt = gm_ptr_w(m, BOOT_GDT_ADDR, 4 * sizeof(uint64_t));

	if (!gdt)
		return -EFAULT;
	/* null, code (0x08), data (0x10), tss (0x18): the selectors vcpu_regs uses. */
	gdt[0] = 0;
	gdt[1] = long_mode ? 0x00af9b000000ffffULL : 0x00cf9b000000ffffULL;
	gdt[2] = 0x00cf93000000ffffULL;
	gdt[3] = 0x008f8b000000ffffULL;
	return 0;
}
