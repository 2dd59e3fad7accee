/*
 * The arm64 kernel `Image` (Linux Documentation/arch/arm64/booting.rst):
 * its 64-byte header parsed and checked, and where the kernel, the initrd
 * and the device tree go in RAM. Pure: no KVM, no file I/O; every header
 * field is checked against the file size and the RAM before anything is
 * placed. Errors come back as text.
 */
#ifndef MVM_ARM64_IMAGE_H
#define MVM_ARM64_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/machine.h"

#define ARM64_IMAGE_HDR_SIZE 64
#define ARM64_IMAGE_MAX_SIZE (512ULL << 20)	/* as x86's kernel file limit */

struct arm64_image {
	uint64_t text_offset;	/* load offset from a 2 MiB aligned base */
	uint64_t image_size;	/* bytes the kernel needs from its load address (bss too) */
	uint64_t copy_size;	/* bytes of the file to copy: min(file, image_size) */
	unsigned page_kib;	/* the kernel's page size: 4, 16, 64; 0 unspecified */
};

/*
 * Check the header of the @len-byte file @buf: the "ARM\x64" magic, a
 * little-endian kernel, a non-zero image_size (kernels since 3.17) not
 * over ARM64_IMAGE_MAX_SIZE, a text_offset below 2 MiB. A compressed file
 * (gzip: Debian's vmlinuz) is named as such. 0 or -EINVAL (or -E2BIG).
 */
int arm64_image_parse(const uint8_t *buf, size_t len, struct arm64_image *out,
		      char *err, size_t errlen);

struct arm64_boot_place {
	uint64_t kernel;	/* the Image's first byte, and the entry point */
	uint64_t kernel_end;	/* kernel + image_size */
	uint64_t initrd;	/* 0 when there is none */
	uint64_t fdt;		/* arm64_fdt_addr(ram) */
};

/*
 * Place @img in @ram: the kernel at the first 2 MiB boundary of RAM plus
 * text_offset, the device tree in RAM's last 2 MiB block, the initrd of
 * @initrd_size bytes (0: none) page-aligned as high as it fits below the
 * tree and above the kernel. 0, or -ENOMEM when they do not all fit.
 */
int arm64_boot_place(const struct arm64_region *ram, const struct arm64_image *img,
		     uint64_t initrd_size, struct arm64_boot_place *out,
		     char *err, size_t errlen);

#endif
