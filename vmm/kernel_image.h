/*
 * Kernel image parsing and loading: vmlinux ELF with a PVH entry note
 * (preferred: no self-decompression) or bzImage (64-bit boot protocol).
 * Parsing is pure: it validates every header field against the file size and
 * the guest's RAM before anything is copied. Errors come back as text.
 */
#ifndef MVM_KERNEL_IMAGE_H
#define MVM_KERNEL_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/guest_mem.h"

#define KIMG_MAX_SEGMENTS 16

enum kimg_kind { KIMG_PVH, KIMG_BZIMAGE };

struct kimg_segment {
	uint64_t file_off;
	uint64_t filesz;
	uint64_t paddr;
	uint64_t memsz;
};

struct kernel_image {
	enum kimg_kind kind;
	uint64_t entry;			/* PVH: 32-bit entry; bzImage: 64-bit entry */
	int nr_segments;
	struct kimg_segment seg[KIMG_MAX_SEGMENTS];
	/* bzImage only */
	uint32_t setup_size;		/* bytes of real-mode setup incl. boot sector */
	uint32_t hdr_len;		/* bytes of setup header at 0x1f1 */
	uint32_t cmdline_size;
	uint32_t initrd_addr_max;
	uint32_t init_size;
};

/* Validate @buf as a PVH vmlinux or a bzImage against RAM below @ram_end. */
int kimg_parse(const uint8_t *buf, size_t len, uint64_t ram_end,
	       struct kernel_image *k, char *err, size_t errlen);
int kimg_parse_pvh(const uint8_t *buf, size_t len, uint64_t ram_end,
		   struct kernel_image *k, char *err, size_t errlen);
int kimg_parse_bzimage(const uint8_t *buf, size_t len, uint64_t ram_end,
		       struct kernel_image *k, char *err, size_t errlen);

/* Copy the parsed segments into guest memory (zero-filling bss). */
int kimg_load(const struct kernel_image *k, const uint8_t *buf, size_t len,
	      struct guest_mem *m);
/*
 * The same from the kernel file @fd of @len bytes: segments are read straight
 * into guest RAM, so the file's pages never count twice in the VMM's RSS.
 */
int kimg_load_fd(const struct kernel_image *k, int fd, size_t len, struct guest_mem *m);

#endif
