/*
 * Where arm64 guest RAM sits (arch_mem_layout, vmm/arch/arch.h): gm_init
 * lays the mapping out for x86, around the 3-4 GiB hole; on arm64 it is one
 * region at ARM64_RAM_BASE (layout.h), devices below it. Pure; its own
 * file so the arm64 unit tests link it without the rest of the seam.
 */
#include "vmm/arch/arch.h"
#include "vmm/arch/arm64/layout.h"
#include "vmm/guest_mem.h"

void arch_mem_layout(struct guest_mem *m)
{
	m->regions[0] = (struct gm_region){ .gpa = ARM64_RAM_BASE, .size = m->ram_size,
					    .host = m->map };
	m->nr_regions = 1;
}
