/*
 * Loading an arm64 guest into its RAM (vmm/arch/arm64/boot.c): the Image
 * where the boot protocol wants it (2 MiB aligned RAM base + text_offset),
 * its bss zeroed, the initrd below the device tree, and the tree itself
 * (read back with libfdt) naming the initrd's range, the command line and
 * the RAM. Refusals leave a clear reason.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/arch/arm64/boot.h"

#define MiB (1ULL << 20)
#define RAM (32 * MiB)
#define TEXT_OFFSET 0x80000ULL
#define IMAGE_SIZE  (3 * MiB)	/* more than the file: the rest is bss */
#define FILE_SIZE   (1 * MiB)

static uint8_t kernel[FILE_SIZE];
static uint8_t initrd[5000];
static char err[256];

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void images(void)
{
	for (size_t i = 0; i < sizeof(kernel); i++)
		kernel[i] = (uint8_t)(i * 7 + 1);
	memset(kernel, 0, 64);
	put64(kernel + 8, TEXT_OFFSET);
	put64(kernel + 16, IMAGE_SIZE);
	put64(kernel + 24, 0x2);	/* little-endian, 4 KiB pages */
	memcpy(kernel + 56, "ARM\x64", 4);
	for (size_t i = 0; i < sizeof(initrd); i++)
		initrd[i] = (uint8_t)(i * 13 + 5);
}

static uint8_t *guest_ram(struct arm64_machine *m)
{
	uint8_t *ram = malloc(RAM);

	cr_assert_not_null(ram);
	memset(ram, 0xee, RAM);	/* not zero: the bss must be cleared by the loader */
	arm64_machine_init(m, RAM, 1, ARM64_GIC_V3);
	m->bootargs = "console=ttyS0 earlycon";
	return ram;
}

static uint64_t prop64(const void *fdt, int off, const char *name)
{
	int len = 0;
	const void *p = fdt_getprop(fdt, off, name, &len);
	fdt64_t v;

	cr_assert_not_null(p, "%s missing", name);
	cr_assert_eq(len, 8, "%s: %d bytes", name, len);
	memcpy(&v, p, sizeof(v));	/* a property is only 4-byte aligned */
	return fdt64_to_cpu(v);
}

Test(arm64_boot, kernel_initrd_and_tree_land_where_the_protocol_says)
{
	struct arm64_machine m;
	struct arm64_boot_place p;
	uint8_t *ram;
	const void *fdt;
	const char *args;
	int off, len = 0, ret;

	images();
	ram = guest_ram(&m);
	ret = arm64_boot_load(&m, ram, kernel, sizeof(kernel), initrd, sizeof(initrd), &p, err,
			      sizeof(err));
	cr_assert_eq(ret, 0, "%s", err);
	cr_assert_eq(p.kernel, ARM64_RAM_BASE + TEXT_OFFSET, "entry at base + text_offset");
	cr_assert_eq(memcmp(ram + TEXT_OFFSET, kernel, sizeof(kernel)), 0, "the Image copied");
	for (uint64_t i = TEXT_OFFSET + FILE_SIZE; i < TEXT_OFFSET + IMAGE_SIZE; i += 4096)
		cr_assert_eq(ram[i], 0, "bss at +0x%llx not zeroed", (unsigned long long)i);
	cr_assert_eq(p.fdt, ARM64_RAM_BASE + RAM - 2 * MiB, "tree in the last 2 MiB");
	cr_assert_eq(p.initrd % 4096, 0);
	cr_assert_geq(p.initrd, p.kernel_end);
	cr_assert_leq(p.initrd + sizeof(initrd), p.fdt);
	cr_assert_eq(memcmp(ram + (p.initrd - ARM64_RAM_BASE), initrd, sizeof(initrd)), 0);

	fdt = ram + (p.fdt - ARM64_RAM_BASE);
	cr_assert_eq(fdt_check_full(fdt, fdt_totalsize(fdt)), 0, "a valid tree at X0");
	off = fdt_path_offset(fdt, "/chosen");
	cr_assert_geq(off, 0);
	cr_assert_eq(prop64(fdt, off, "linux,initrd-start"), p.initrd);
	cr_assert_eq(prop64(fdt, off, "linux,initrd-end"), p.initrd + sizeof(initrd));
	args = fdt_getprop(fdt, off, "bootargs", &len);
	cr_assert_not_null(args);
	cr_assert_str_eq(args, "console=ttyS0 earlycon");
	off = fdt_path_offset(fdt, "/memory@80000000");
	cr_assert_geq(off, 0, "memory node");
	free(ram);
}

Test(arm64_boot, without_initrd_the_tree_names_none)
{
	struct arm64_machine m;
	struct arm64_boot_place p;
	uint8_t *ram;
	const void *fdt;
	int off;

	images();
	ram = guest_ram(&m);
	cr_assert_eq(arm64_boot_load(&m, ram, kernel, sizeof(kernel), NULL, 0, &p, err,
				     sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.initrd, 0);
	fdt = ram + (p.fdt - ARM64_RAM_BASE);
	off = fdt_path_offset(fdt, "/chosen");
	cr_assert_geq(off, 0);
	cr_assert_null(fdt_getprop(fdt, off, "linux,initrd-start", NULL));
	free(ram);
}

Test(arm64_boot, refusals_say_why)
{
	struct arm64_machine m;
	struct arm64_boot_place p;
	uint8_t *ram;
	static uint8_t gz[64] = { 0x1f, 0x8b };

	images();
	ram = guest_ram(&m);
	err[0] = 0;
	cr_assert_eq(arm64_boot_load(&m, ram, gz, sizeof(gz), NULL, 0, &p, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "gzip"), "%s", err);
	/* An initrd larger than the RAM left between kernel and tree. */
	err[0] = 0;
	cr_assert_eq(arm64_boot_load(&m, ram, kernel, sizeof(kernel), initrd, RAM, &p, err,
				     sizeof(err)), -ENOMEM);
	cr_assert(strstr(err, "initrd"), "%s", err);
	err[0] = 0;
	cr_assert_eq(arm64_boot_load(&m, ram, kernel, sizeof(kernel), NULL, 10, &p, err,
				     sizeof(err)), -EINVAL);
	cr_assert_neq(err[0], 0);
	/* A command line the tree may not carry: refused before it is written. */
	m.bootargs = NULL;
	{
		static char longargs[ARM64_CMDLINE_MAX + 1];

		memset(longargs, 'a', ARM64_CMDLINE_MAX);
		m.bootargs = longargs;
		err[0] = 0;
		cr_assert_eq(arm64_boot_load(&m, ram, kernel, sizeof(kernel), NULL, 0, &p, err,
					     sizeof(err)), -E2BIG);
		cr_assert(strstr(err, "command line"), "%s", err);
	}
	free(ram);
}
