/*
 * What the arm64 device-tree builder refuses (vmm/arch/arm64/machine.c's
 * checks, fdt.c's buffer bounds) and where the tree goes in RAM. Every
 * refusal has a message and leaves the bytes past the buffer untouched.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <libfdt.h>
#include <string.h>

#include "vmm/arch/arm64/fdt.h"

#define MiB (1ULL << 20)
#define CAP (64 * 1024)

static struct arm64_mmio_dev devs[ARM64_MAX_VIRTIO + 1];
static uint8_t blob[CAP + 64];
static char err[256];

static void machine(struct arm64_machine *m, int ncpus, int nr_virtio,
		    enum arm64_gic_version gic)
{
	arm64_machine_init(m, 256 * MiB, ncpus, gic);
	for (int i = 0; i <= ARM64_MAX_VIRTIO; i++)
		devs[i] = arm64_virtio_slot(i);
	m->virtio = devs;
	m->nr_virtio = nr_virtio;
	m->bootargs = "console=ttyS0";
}

/* Build into @cap bytes of blob; the 64 bytes after @cap must stay 0xa5. */
static int build_cap(const struct arm64_machine *m, size_t cap)
{
	int n;

	memset(blob, 0xa5, sizeof(blob));
	err[0] = 0;
	n = arm64_fdt_build(m, blob, cap, err, sizeof(err));
	for (size_t i = cap; i < cap + 64; i++)
		cr_assert_eq(blob[i], 0xa5, "byte %zu past the buffer written", i - cap);
	return n;
}

static void refused(const struct arm64_machine *m, int want, const char *words)
{
	int n = build_cap(m, CAP);

	cr_assert_eq(n, want, "got %d (%s), want %d", n, err, want);
	cr_assert(strstr(err, words), "message '%s' lacks '%s'", err, words);
}

Test(arm64_machine, zero_vcpus)
{
	struct arm64_machine m;

	machine(&m, 0, 1, ARM64_GIC_V3);
	refused(&m, -EINVAL, "0 vCPUs");
}

Test(arm64_machine, too_many_vcpus)
{
	struct arm64_machine m;

	machine(&m, ARM64_MAX_CPUS + 1, 1, ARM64_GIC_V3);
	refused(&m, -E2BIG, "65 vCPUs");
	/* GICv2 reaches 8 CPU interfaces only. */
	machine(&m, 9, 1, ARM64_GIC_V2);
	refused(&m, -E2BIG, "9 vCPUs (GICv2: 1 to 8)");
	machine(&m, 8, 1, ARM64_GIC_V2);
	cr_assert_gt(build_cap(&m, CAP), 0, "%s", err);
	machine(&m, ARM64_MAX_CPUS, ARM64_MAX_VIRTIO, ARM64_GIC_V3);
	cr_assert_gt(build_cap(&m, CAP), 0, "the largest machine: %s", err);
}

Test(arm64_machine, too_many_devices)
{
	struct arm64_machine m;

	machine(&m, 2, ARM64_MAX_VIRTIO + 1, ARM64_GIC_V3);
	refused(&m, -E2BIG, "33 virtio devices (at most 32)");
	machine(&m, 2, -1, ARM64_GIC_V3);
	refused(&m, -EINVAL, "virtio devices");
}

Test(arm64_machine, buffer_too_small)
{
	struct arm64_machine m;
	int n;

	machine(&m, 2, 4, ARM64_GIC_V3);
	n = build_cap(&m, CAP);
	cr_assert_gt(n, 0, "%s", err);
	/* Exactly its size fits; one byte less, a small buffer or none do not. */
	cr_assert_eq(build_cap(&m, (size_t)n), n, "%s", err);
	cr_assert_eq(fdt_check_full(blob, (size_t)n), 0);
	for (size_t i = 0; i < 3; i++) {
		size_t cap = i == 0 ? (size_t)n - 1 : i == 1 ? 256 : 0;

		cr_assert_eq(build_cap(&m, cap), -ENOSPC, "cap %zu: %s", cap, err);
		cr_assert(strstr(err, "needs more than"), "%s", err);
	}
}

Test(arm64_machine, command_line_too_long)
{
	struct arm64_machine m;
	static char line[ARM64_CMDLINE_MAX + 1];

	machine(&m, 2, 1, ARM64_GIC_V3);
	memset(line, 'x', ARM64_CMDLINE_MAX);
	m.bootargs = line;
	refused(&m, -E2BIG, "longer than 2047 bytes");
	line[ARM64_CMDLINE_MAX - 1] = 0;	/* 2047 characters: the longest */
	cr_assert_gt(build_cap(&m, CAP), 0, "%s", err);
}

Test(arm64_machine, initrd_outside_ram)
{
	struct arm64_machine m;

	machine(&m, 2, 1, ARM64_GIC_V3);
	m.initrd_start = ARM64_RAM_BASE - 0x1000;
	m.initrd_size = 0x2000;
	refused(&m, -EINVAL, "initrd");
	m.initrd_start = ARM64_RAM_BASE + 256 * MiB - 0x1000;
	refused(&m, -EINVAL, "not inside RAM");
	m.initrd_start = UINT64_MAX - 0xfff;	/* start + size wraps */
	refused(&m, -EINVAL, "not inside RAM");
}

Test(arm64_machine, overlapping_or_misplaced_regions)
{
	struct arm64_machine m;

	machine(&m, 2, 2, ARM64_GIC_V3);
	devs[1] = devs[0];
	devs[1].spi = 40;
	refused(&m, -EINVAL, "virtio device 0 and virtio device 1 overlap");

	machine(&m, 2, 1, ARM64_GIC_V3);
	m.uart.base = ARM64_GIC_DIST_BASE + 0x1000;
	refused(&m, -EINVAL, "GIC distributor and UART overlap");

	machine(&m, 2, 1, ARM64_GIC_V3);
	devs[0].base = ARM64_RAM_BASE;		/* inside RAM */
	refused(&m, -EINVAL, "virtio device 0 region");

	machine(&m, 2, 1, ARM64_GIC_V3);
	m.gic_dist.base += 0x1000;		/* GICv3 wants 64 KiB alignment */
	refused(&m, -EINVAL, "GIC distributor region");

	machine(&m, 4, 1, ARM64_GIC_V3);
	m.gic_cpu.size = 2 * ARM64_GICV3_REDIST_SIZE;
	refused(&m, -EINVAL, "too small for 4 vCPUs");
}

Test(arm64_machine, bad_interrupts_and_cpus)
{
	struct arm64_machine m;
	uint64_t mpidr[2] = { 0x80000000, 0x80000000 };

	machine(&m, 2, 2, ARM64_GIC_V3);
	devs[1].spi = devs[0].spi;
	refused(&m, -EINVAL, "used twice");

	machine(&m, 2, 1, ARM64_GIC_V3);
	m.uart.spi = ARM64_SPI_MAX + 1;
	refused(&m, -EINVAL, "out of range");

	machine(&m, 2, 1, ARM64_GIC_V3);
	m.mpidr = mpidr;
	refused(&m, -EINVAL, "one MPIDR");

	machine(&m, 2, 1, ARM64_GIC_V3);
	m.ram.size = ARM64_RAM_MAX + 0x200000;
	refused(&m, -EINVAL, "RAM");
	machine(&m, 2, 1, ARM64_GIC_V3);
	m.ram.base += 0x1000;
	refused(&m, -EINVAL, "2 MiB aligned");
}

Test(arm64_machine, mpidr_default_matches_kvm_reset)
{
	cr_assert_eq(arm64_mpidr_default(0), 0x80000000ULL);
	cr_assert_eq(arm64_mpidr_default(15), 0x8000000fULL);
	cr_assert_eq(arm64_mpidr_default(16), 0x80000100ULL, "16 vCPUs per Aff1 cluster");
	cr_assert_eq(arm64_mpidr_default(63), 0x8000030fULL);
}

Test(arm64_machine, tree_address_in_ram)
{
	struct arm64_region r = { ARM64_RAM_BASE, 512 * MiB };

	cr_assert_eq(arm64_fdt_addr(&r), ARM64_RAM_BASE + 510 * MiB);
	r.size = 3 * MiB;	/* the last whole 2 MiB block is the first */
	cr_assert_eq(arm64_fdt_addr(&r), ARM64_RAM_BASE);
	r.size = 1 * MiB;
	cr_assert_eq(arm64_fdt_addr(&r), 0, "no 2 MiB block in 1 MiB");
	r.base = UINT64_MAX - MiB;
	r.size = 4 * MiB;
	cr_assert_eq(arm64_fdt_addr(&r), 0, "wrapping RAM");
}
