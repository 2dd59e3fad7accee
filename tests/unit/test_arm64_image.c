/*
 * The arm64 Image header (vmm/arch/arm64/image.c): what a kernel file must
 * say before anything of it is placed, and where kernel, initrd and device
 * tree go in RAM, at the edges.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "vmm/arch/arm64/image.h"

#define MiB (1ULL << 20)

static uint8_t file[8192];
static char err[256];

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A header as Linux writes it (booting.rst): little-endian fields. */
static void header(uint64_t text_offset, uint64_t image_size, uint64_t flags)
{
	memset(file, 0, sizeof(file));
	put64(file + 8, text_offset);
	put64(file + 16, image_size);
	put64(file + 24, flags);
	memcpy(file + 56, "ARM\x64", 4);
}

static void refused(size_t len, int want, const char *words)
{
	struct arm64_image img;
	int ret;

	err[0] = 0;
	ret = arm64_image_parse(file, len, &img, err, sizeof(err));
	cr_assert_eq(ret, want, "got %d (%s), want %d", ret, err, want);
	cr_assert(strstr(err, words), "message '%s' lacks '%s'", err, words);
}

Test(arm64_image, parses_a_linux_header)
{
	struct arm64_image img;

	header(0, 32 * MiB, 0xa);	/* little-endian, 4 KiB pages, anywhere */
	cr_assert_eq(arm64_image_parse(file, sizeof(file), &img, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(img.text_offset, 0);
	cr_assert_eq(img.image_size, 32 * MiB);
	cr_assert_eq(img.copy_size, sizeof(file), "the whole file is the kernel's");
	cr_assert_eq(img.page_kib, 4);

	header(0x80000, 4096, 0x6);	/* an older kernel's offset; 64 KiB pages */
	cr_assert_eq(arm64_image_parse(file, sizeof(file), &img, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(img.text_offset, 0x80000);
	cr_assert_eq(img.copy_size, 4096, "bytes past image_size are not the kernel's");
	cr_assert_eq(img.page_kib, 64);
}

Test(arm64_image, refuses_what_is_not_an_image)
{
	header(0, 32 * MiB, 0xa);
	refused(63, -EINVAL, "no \"ARM\\x64\" magic");
	file[59] = 0x65;
	refused(sizeof(file), -EINVAL, "not an arm64 Image");
	file[0] = 0x1f;
	file[1] = 0x8b;
	refused(sizeof(file), -EINVAL, "gzip-compressed");
}

Test(arm64_image, refuses_header_fields_out_of_range)
{
	header(0, 32 * MiB, 0x1);
	refused(sizeof(file), -EINVAL, "big-endian");
	header(0x80000, 0, 0);
	refused(sizeof(file), -EINVAL, "before 3.17");
	header(0, 512 * MiB + 1, 0xa);
	refused(sizeof(file), -E2BIG, "over 512 MiB");
	header(0, UINT64_MAX, 0xa);
	refused(sizeof(file), -E2BIG, "over 512 MiB");
	header(2 * MiB, 32 * MiB, 0xa);
	refused(sizeof(file), -EINVAL, "text_offset 0x200000");
	header(0x800, 32 * MiB, 0xa);
	refused(sizeof(file), -EINVAL, "not a page below 2 MiB");
}

Test(arm64_image, places_kernel_initrd_and_tree)
{
	struct arm64_region ram = { ARM64_RAM_BASE, 512 * MiB };
	struct arm64_image img = { .text_offset = 0x80000, .image_size = 32 * MiB };
	struct arm64_boot_place p;

	cr_assert_eq(arm64_boot_place(&ram, &img, 0x123456, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.kernel, ARM64_RAM_BASE + 0x80000);
	cr_assert_eq(p.kernel_end, p.kernel + 32 * MiB);
	cr_assert_eq(p.fdt, ARM64_RAM_BASE + 510 * MiB);
	cr_assert_eq(p.initrd % 4096, 0);
	cr_assert_leq(p.initrd + 0x123456, p.fdt, "initrd overlaps the tree");
	cr_assert_gt(p.initrd + 0x123456 + 4096, p.fdt, "initrd not as high as it fits");

	cr_assert_eq(arm64_boot_place(&ram, &img, 0, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.initrd, 0, "no initrd, no address");

	ram.base += 0x100000;	/* not 2 MiB aligned: the kernel's base moves up */
	cr_assert_eq(arm64_boot_place(&ram, &img, 0, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.kernel, ARM64_RAM_BASE + 2 * MiB + 0x80000);
}

Test(arm64_image, refuses_what_does_not_fit)
{
	struct arm64_region ram = { ARM64_RAM_BASE, 64 * MiB };
	struct arm64_image img = { .text_offset = 0, .image_size = 30 * MiB };
	struct arm64_boot_place p;
	uint64_t room;

	cr_assert_eq(arm64_boot_place(&ram, &img, 0, &p, err, sizeof(err)), 0, "%s", err);
	room = p.fdt - p.kernel_end;
	/* The largest initrd fits exactly; one byte more does not. */
	cr_assert_eq(arm64_boot_place(&ram, &img, room, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.initrd, p.kernel_end);
	cr_assert_eq(arm64_boot_place(&ram, &img, room + 1, &p, err, sizeof(err)), -ENOMEM);
	cr_assert(strstr(err, "initrd"), "%s", err);

	img.image_size = 63 * MiB;	/* the kernel runs into the tree's block */
	cr_assert_eq(arm64_boot_place(&ram, &img, 0, &p, err, sizeof(err)), -ENOMEM);
	cr_assert(strstr(err, "do not fit"), "%s", err);

	ram = (struct arm64_region){ UINT64_MAX - 4 * MiB + 1, 4 * MiB };	/* wraps */
	img.image_size = MiB;
	cr_assert_eq(arm64_boot_place(&ram, &img, 0, &p, err, sizeof(err)), -ENOMEM);
	ram = (struct arm64_region){ ARM64_RAM_BASE, MiB };	/* no 2 MiB block */
	cr_assert_eq(arm64_boot_place(&ram, &img, 0, &p, err, sizeof(err)), -ENOMEM);
}
