/*
 * Loading an arm64 guest into its RAM per the arm64 boot protocol
 * (Documentation/arch/arm64/booting.rst): the kernel Image at the 2 MiB
 * aligned RAM base plus its header's text_offset, the initrd high below
 * the device tree, the device tree (with the initrd's range in /chosen)
 * in RAM's last 2 MiB. Pure: @ram is the host mapping of the machine's
 * RAM, nothing here calls KVM. The entry point and the tree's address
 * come back for the boot vCPU's registers (arm64_boot_regs).
 */
#ifndef MVM_ARM64_BOOT_H
#define MVM_ARM64_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/image.h"
#include "vmm/arch/arm64/machine.h"

/*
 * Parse the @kernel_len-byte Image @kernel (arm64_image_parse), place it
 * and the @initrd_len-byte @initrd (0: none) in @m's RAM (arm64_boot_place),
 * copy both into @ram (@m->ram.size bytes, guest address @m->ram.base),
 * zero the kernel's bss up to image_size, set @m's initrd range and write
 * @m's device tree (arm64_fdt_build). 0 with the addresses in @out, or a
 * negative errno with the reason in @err; RAM may then hold part of it.
 */
int arm64_boot_load(struct arm64_machine *m, uint8_t *ram, const uint8_t *kernel,
		    size_t kernel_len, const uint8_t *initrd, size_t initrd_len,
		    struct arm64_boot_place *out, char *err, size_t errlen);

#endif
