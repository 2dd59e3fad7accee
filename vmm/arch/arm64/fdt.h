/*
 * The flattened device tree that describes an arm64 machine to its guest,
 * written with libfdt's sequential writer. The layout of the tree it
 * writes is documented node by node in tests/unit/data/arm64-2cpu.dts
 * (what `dtc -I dtb -O dts` prints for a 2-vCPU sandbox with every device;
 * a unit test compares the two).
 */
#ifndef MVM_ARM64_FDT_H
#define MVM_ARM64_FDT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/machine.h"

/*
 * Check @m (arm64_machine_check) and write its device tree into @buf of
 * @cap bytes (at most ARM64_FDT_MAX_SIZE of it are used: the boot
 * protocol's limit). Returns the blob's size (> 0), or -EINVAL / -E2BIG
 * (@m refused), -ENOSPC (the tree needs more than @cap bytes) or -EIO (a
 * libfdt error), always with a message in @err. @buf holds no valid tree
 * after an error.
 */
int arm64_fdt_build(const struct arm64_machine *m, void *buf, size_t cap,
		    char *err, size_t errlen);

/*
 * Guest address for the tree: the start of the last 2 MiB-aligned 2 MiB
 * of @ram (the boot protocol maps the DTB with blocks of up to 2 MiB, so it
 * gets a block of its own). 0 when @ram has no such block.
 */
uint64_t arm64_fdt_addr(const struct arm64_region *ram);

#endif
