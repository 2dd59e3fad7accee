/* The arm64 Image header and the placement of kernel, initrd and tree. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/le_bytes.h"
#include "vmm/arch/arm64/fdt.h"
#include "vmm/arch/arm64/image.h"

/* Header fields, little-endian (booting.rst, "Call the kernel image"). */
#define HDR_TEXT_OFFSET 8
#define HDR_IMAGE_SIZE  16
#define HDR_FLAGS       24
#define HDR_MAGIC       56
#define FLAG_BE         0x1ULL
#define FLAG_PAGE_SHIFT 1
#define PAGE_4K         0x1000ULL

int arm64_image_parse(const uint8_t *buf, size_t len, struct arm64_image *out,
		      char *err, size_t errlen)
{
	static const unsigned page_kib[4] = { 0, 4, 16, 64 };
	uint64_t flags;

	memset(out, 0, sizeof(*out));
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		snprintf(err, errlen, "a gzip-compressed kernel (vmlinuz, Image.gz): decompress"
			 " it to an arm64 Image first");
		return -EINVAL;
	}
	if (len < ARM64_IMAGE_HDR_SIZE || memcmp(buf + HDR_MAGIC, "ARM\x64", 4) != 0) {
		snprintf(err, errlen, "not an arm64 Image (no \"ARM\\x64\" magic at byte 56)");
		return -EINVAL;
	}
	out->text_offset = le_get64(buf + HDR_TEXT_OFFSET);
	out->image_size = le_get64(buf + HDR_IMAGE_SIZE);
	flags = le_get64(buf + HDR_FLAGS);
	if (flags & FLAG_BE) {
		snprintf(err, errlen, "a big-endian arm64 kernel: mvm runs little-endian guests");
		return -EINVAL;
	}
	if (!out->image_size) {
		/* Before 3.17 the header's fields had no fixed endianness. */
		snprintf(err, errlen, "arm64 Image without image_size (a kernel before 3.17)");
		return -EINVAL;
	}
	if (out->image_size > ARM64_IMAGE_MAX_SIZE || len > ARM64_IMAGE_MAX_SIZE) {
		snprintf(err, errlen, "arm64 Image of %llu bytes (file %zu): over %llu MiB",
			 (unsigned long long)out->image_size, len, ARM64_IMAGE_MAX_SIZE >> 20);
		return -E2BIG;
	}
	if (out->text_offset >= ARM64_KERNEL_ALIGN || out->text_offset % PAGE_4K) {
		snprintf(err, errlen, "arm64 Image text_offset 0x%llx: not a page below 2 MiB",
			 (unsigned long long)out->text_offset);
		return -EINVAL;
	}
	/* Past image_size a file may carry what the kernel never reads (a
	 * signature): only the kernel's own bytes are copied. */
	out->copy_size = len < out->image_size ? len : out->image_size;
	out->page_kib = page_kib[(flags >> FLAG_PAGE_SHIFT) & 3];
	return 0;
}

int arm64_boot_place(const struct arm64_region *ram, const struct arm64_image *img,
		     uint64_t initrd_size, struct arm64_boot_place *out,
		     char *err, size_t errlen)
{
	uint64_t base = (ram->base + ARM64_KERNEL_ALIGN - 1) & ~(ARM64_KERNEL_ALIGN - 1);
	uint64_t room;

	memset(out, 0, sizeof(*out));
	out->fdt = arm64_fdt_addr(ram);
	out->kernel = base + img->text_offset;
	out->kernel_end = out->kernel + img->image_size;
	/* fdt == 0: RAM has no 2 MiB block (or wraps). The other two catch a
	 * base or kernel end that wrapped past 2^64. */
	if (!out->fdt || base < ram->base || out->kernel_end < base ||
	    out->kernel_end > out->fdt) {
		snprintf(err, errlen, "a kernel of %llu MiB and the device tree do not fit in"
			 " %llu MiB of RAM", (unsigned long long)(img->image_size >> 20),
			 (unsigned long long)(ram->size >> 20));
		return -ENOMEM;
	}
	if (!initrd_size)
		return 0;
	room = out->fdt - out->kernel_end;
	if (initrd_size > room || ((out->fdt - initrd_size) & ~(PAGE_4K - 1)) < out->kernel_end) {
		snprintf(err, errlen, "initrd (%llu bytes) does not fit in guest memory beside the"
			 " kernel", (unsigned long long)initrd_size);
		return -ENOMEM;
	}
	out->initrd = (out->fdt - initrd_size) & ~(PAGE_4K - 1);
	return 0;
}
