/*
 * The arm64 device tree (vmm/arch/arm64/fdt.c): built for a 2-vCPU sandbox
 * with every device, checked by libfdt's own checker, walked node by node
 * with libfdt, and decompiled by dtc to the documented layout
 * (tests/unit/data/arm64-2cpu.dts). Refusals: bad machines and small buffers.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/arch/arm64/fdt.h"

#define MiB (1ULL << 20)
#define NR_DEVS 6	/* hvc0, hvc1, vda, rng, vsock, net: x86's order */
#define CAP (64 * 1024)
#define EXPECTED_DTS "tests/unit/data/arm64-2cpu.dts"

static const char BOOTARGS[] = "console=ttyS0 reboot=k panic=1 quiet";
static struct arm64_mmio_dev devs[ARM64_MAX_VIRTIO + 1];
static uint8_t blob[CAP];
static char err[256];

/* The sandbox the documented layout shows: 512 MiB, 2 vCPUs, every device. */
static void sandbox(struct arm64_machine *m, enum arm64_gic_version gic)
{
	arm64_machine_init(m, 512 * MiB, 2, gic);
	for (int i = 0; i < NR_DEVS; i++)
		devs[i] = arm64_virtio_slot(i);
	m->virtio = devs;
	m->nr_virtio = NR_DEVS;
	m->bootargs = BOOTARGS;
	m->initrd_start = ARM64_RAM_BASE + 64 * MiB;
	m->initrd_size = 0x123000;
}

static int build(const struct arm64_machine *m)
{
	int n;

	err[0] = 0;
	n = arm64_fdt_build(m, blob, sizeof(blob), err, sizeof(err));
	if (n > 0)
		cr_assert_eq(fdt_check_full(blob, (size_t)n), 0, "fdt_check_full");
	return n;
}

static int node(const char *path)
{
	int off = fdt_path_offset(blob, path);

	cr_assert_geq(off, 0, "%s: %s", path, fdt_strerror(off));
	return off;
}

/* Property @name of @off as host-order cells; asserts it has @n of them. */
static void cells(int off, const char *name, uint32_t *out, int n)
{
	int len;
	const fdt32_t *p = fdt_getprop(blob, off, name, &len);

	cr_assert_not_null(p, "property %s missing", name);
	cr_assert_eq(len, n * 4, "%s: %d bytes, want %d", name, len, n * 4);
	for (int i = 0; i < n; i++)
		out[i] = fdt32_to_cpu(p[i]);
}

static uint64_t u64_at(const uint32_t *c)
{
	return (uint64_t)c[0] << 32 | c[1];
}

static const char *str(int off, const char *name)
{
	const char *s = fdt_getprop(blob, off, name, NULL);

	cr_assert_not_null(s, "property %s missing", name);
	return s;
}

Test(arm64_fdt, sandbox_tree_passes_libfdt_checker)
{
	struct arm64_machine m;
	int n;

	sandbox(&m, ARM64_GIC_V3);
	n = build(&m);
	cr_assert_gt(n, 0, "%s", err);
	cr_assert_leq((size_t)n, ARM64_FDT_MAX_SIZE);
	cr_assert_eq(fdt_totalsize(blob), (uint32_t)n);
}

Test(arm64_fdt, root_memory_and_chosen)
{
	struct arm64_machine m;
	uint32_t c[4];
	int root, gic, chosen;

	sandbox(&m, ARM64_GIC_V3);
	cr_assert_gt(build(&m), 0, "%s", err);
	root = node("/");
	cells(root, "#address-cells", c, 1);
	cr_assert_eq(c[0], 2);
	cells(root, "#size-cells", c, 1);
	cr_assert_eq(c[0], 2);
	gic = node("/intc@8000000");
	cells(root, "interrupt-parent", c, 1);
	cr_assert_eq(c[0], fdt_get_phandle(blob, gic), "interrupt-parent is not the GIC");

	cells(node("/memory@80000000"), "reg", c, 4);
	cr_assert_eq(u64_at(c), ARM64_RAM_BASE);
	cr_assert_eq(u64_at(c + 2), 512 * MiB);
	cr_assert_str_eq(str(node("/memory@80000000"), "device_type"), "memory");

	chosen = node("/chosen");
	cr_assert_str_eq(str(chosen, "bootargs"), BOOTARGS);
	cells(chosen, "linux,initrd-start", c, 2);
	cr_assert_eq(u64_at(c), ARM64_RAM_BASE + 64 * MiB);
	cells(chosen, "linux,initrd-end", c, 2);
	cr_assert_eq(u64_at(c), ARM64_RAM_BASE + 64 * MiB + 0x123000);
	/* stdout-path names the UART node itself. */
	cr_assert_eq(fdt_path_offset(blob, str(chosen, "stdout-path")), node("/uart@9000000"));
}

Test(arm64_fdt, two_cpus_with_psci)
{
	struct arm64_machine m;
	uint32_t c[2];
	int cpus, count = 0, off, psci;

	sandbox(&m, ARM64_GIC_V3);
	cr_assert_gt(build(&m), 0, "%s", err);
	cpus = node("/cpus");
	fdt_for_each_subnode(off, blob, cpus) {
		cr_assert_str_eq(str(off, "device_type"), "cpu");
		cr_assert_str_eq(str(off, "enable-method"), "psci");
		cr_assert_eq(fdt_node_check_compatible(blob, off, "arm,arm-v8"), 0);
		cells(off, "reg", c, 2);
		cr_assert_eq(u64_at(c), (uint64_t)count, "cpu %d: MPIDR affinity", count);
		count++;
	}
	cr_assert_eq(count, 2);
	psci = node("/psci");
	cr_assert_eq(fdt_node_check_compatible(blob, psci, "arm,psci-1.0"), 0);
	cr_assert_eq(fdt_node_check_compatible(blob, psci, "arm,psci-0.2"), 0);
	cr_assert_str_eq(str(psci, "method"), "hvc");

	m.psci = ARM64_PSCI_0_2;
	cr_assert_gt(build(&m), 0, "%s", err);
	psci = node("/psci");
	cr_assert_eq(fdt_node_check_compatible(blob, psci, "arm,psci-0.2"), 0);
	cr_assert_neq(fdt_node_check_compatible(blob, psci, "arm,psci-1.0"), 0);
}

Test(arm64_fdt, gicv3_and_timer)
{
	struct arm64_machine m;
	uint32_t c[12];
	static const uint32_t ppis[4] = { 13, 14, 11, 10 };
	int gic;

	sandbox(&m, ARM64_GIC_V3);
	cr_assert_gt(build(&m), 0, "%s", err);
	gic = node("/intc@8000000");
	cr_assert_eq(fdt_node_check_compatible(blob, gic, "arm,gic-v3"), 0);
	cr_assert_not_null(fdt_getprop(blob, gic, "interrupt-controller", NULL));
	cells(gic, "#interrupt-cells", c, 1);
	cr_assert_eq(c[0], 3);
	cells(gic, "reg", c, 8);
	cr_assert_eq(u64_at(c), ARM64_GIC_DIST_BASE);
	cr_assert_eq(u64_at(c + 2), 0x10000);
	cr_assert_eq(u64_at(c + 4), ARM64_GICV3_REDIST_BASE);
	cr_assert_eq(u64_at(c + 6), 2 * 0x20000, "one 128 KiB redistributor per vCPU");

	cells(node("/timer"), "interrupts", c, 12);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(c[3 * i], 1, "timer interrupt %d is not a PPI", i);
		cr_assert_eq(c[3 * i + 1], ppis[i]);
		cr_assert_eq(c[3 * i + 2], 4, "level-high, no CPU mask on GICv3");
	}
}

Test(arm64_fdt, gicv2_variant)
{
	struct arm64_machine m;
	uint32_t c[12];
	int gic;

	sandbox(&m, ARM64_GIC_V2);
	cr_assert_gt(build(&m), 0, "%s", err);
	gic = node("/intc@8000000");
	cr_assert_eq(fdt_node_check_compatible(blob, gic, "arm,cortex-a15-gic"), 0);
	cells(gic, "reg", c, 8);
	cr_assert_eq(u64_at(c), ARM64_GIC_DIST_BASE);
	cr_assert_eq(u64_at(c + 2), 0x1000);
	cr_assert_eq(u64_at(c + 4), ARM64_GICV2_CPU_BASE);
	cr_assert_eq(u64_at(c + 6), 0x2000);
	cells(node("/timer"), "interrupts", c, 12);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(c[3 * i + 2], 0x304, "GICv2 PPIs name both CPUs (mask 0x3 << 8)");
}

Test(arm64_fdt, uart_and_virtio_devices)
{
	struct arm64_machine m;
	uint32_t c[4];
	int uart, off, i = 0;

	sandbox(&m, ARM64_GIC_V3);
	cr_assert_gt(build(&m), 0, "%s", err);
	uart = node("/uart@9000000");
	cr_assert_eq(fdt_node_check_compatible(blob, uart, "ns16550a"), 0);
	cells(uart, "reg", c, 4);
	cr_assert_eq(u64_at(c), ARM64_UART_BASE);
	cr_assert_eq(u64_at(c + 2), 0x1000);
	cells(uart, "interrupts", c, 3);
	cr_assert_eq(c[0], 0, "UART: SPI");
	cr_assert_eq(c[1], ARM64_SPI_UART);
	cr_assert_eq(c[2], 4, "UART: level-high");
	cells(uart, "clock-frequency", c, 1);
	cr_assert_eq(c[0], 1843200);

	for (off = fdt_node_offset_by_compatible(blob, -1, "virtio,mmio"); off >= 0;
	     off = fdt_node_offset_by_compatible(blob, off, "virtio,mmio"), i++) {
		cells(off, "reg", c, 4);
		cr_assert_eq(u64_at(c), 0x0a000000ULL + 0x1000ULL * (uint64_t)i, "slot %d", i);
		cr_assert_eq(u64_at(c + 2), 0x1000);
		cells(off, "interrupts", c, 3);
		cr_assert_eq(c[0], 0, "virtio %d: SPI", i);
		cr_assert_eq(c[1], 16u + (uint32_t)i);
		cr_assert_eq(c[2], 1, "virtio %d: edge-rising (irqfd)", i);
		cr_assert_not_null(fdt_getprop(blob, off, "dma-coherent", NULL));
	}
	cr_assert_eq(i, NR_DEVS);
}

/* Whole file (at most 64 KiB) or NULL. */
static char *slurp(const char *path)
{
	static char buf[64 * 1024];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strdup(buf);
}

/* @s without its lines that are //-comments (the documentation). */
static char *drop_comments(const char *s)
{
	char *out = calloc(1, strlen(s) + 1), *o = out;

	cr_assert_not_null(out);
	while (*s) {
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) + 1 : strlen(s);
		const char *t = s + strspn(s, " \t");

		if (strncmp(t, "//", 2) != 0) {
			memcpy(o, s, len);
			o += len;
		}
		s += len;
	}
	return out;
}

Test(arm64_fdt, dtc_decompiles_to_documented_layout)
{
	struct arm64_machine m;
	char dir[] = "/tmp/mvm-fdt-XXXXXX", cmd[512], dtb[128], dts[128], log[128];
	char *got, *want, *warnings, *raw;
	FILE *f;
	int n;

	sandbox(&m, ARM64_GIC_V3);
	n = build(&m);
	cr_assert_gt(n, 0, "%s", err);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(dtb, sizeof(dtb), "%s/t.dtb", dir);
	snprintf(dts, sizeof(dts), "%s/t.dts", dir);
	snprintf(log, sizeof(log), "%s/dtc.log", dir);
	f = fopen(dtb, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(blob, 1, (size_t)n, f), (size_t)n);
	cr_assert_eq(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "dtc -I dtb -O dts -o %s %s 2>%s", dts, dtb, log);
	cr_assert_eq(system(cmd), 0, "dtc failed (is device-tree-compiler installed?)");
	got = slurp(dts);
	warnings = slurp(log);
	raw = slurp(EXPECTED_DTS);
	cr_assert_not_null(raw, "%s missing (run from the checkout's root)", EXPECTED_DTS);
	want = drop_comments(raw);
	cr_assert_str_empty(warnings, "dtc warns: %s", warnings);
	cr_assert_str_eq(got, want, "dtc output differs from %s:\n%s", EXPECTED_DTS, got);
	unlink(dtb);
	unlink(dts);
	unlink(log);
	rmdir(dir);
	free(got);
	free(want);
	free(warnings);
	free(raw);
}
