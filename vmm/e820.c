/* Guest memory map: base RAM, the BIOS area holding MP tables, high RAM. */
#include "vmm/boot_layout.h"
#include "vmm/e820.h"

int e820_build(const struct guest_mem *m, struct e820_entry *out)
{
	uint64_t low_end = gm_low_end(m);
	int n = 0;

	out[n++] = (struct e820_entry){ 0, EBDA_START, E820_RAM };
	/* Keep Linux off the EBDA and the BIOS area where the MP table sits. */
	out[n++] = (struct e820_entry){ EBDA_START, 0xa0000 - EBDA_START, E820_RESERVED };
	out[n++] = (struct e820_entry){ BIOS_START, HIMEM_START - BIOS_START, E820_RESERVED };
	out[n++] = (struct e820_entry){ HIMEM_START, low_end - HIMEM_START, E820_RAM };
	if (m->nr_regions > 1)
		out[n++] = (struct e820_entry){ m->regions[1].gpa, m->regions[1].size, E820_RAM };
	return n;
}
