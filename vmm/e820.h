/* The guest's physical memory map, shared by the zero page and PVH start info. */
#ifndef MVM_E820_H
#define MVM_E820_H

#include <stdint.h>

#include "vmm/guest_mem.h"

#define E820_RAM      1
#define E820_RESERVED 2
#define E820_MAX      8

struct e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
};

/* Fill @out (E820_MAX entries) for @m; returns the entry count. */
int e820_build(const struct guest_mem *m, struct e820_entry *out);

#endif
