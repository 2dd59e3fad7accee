/*
 * The arm64 device tree, written with libfdt's sequential writer. Every
 * libfdt call goes through one sticky-error writer: the first failure is
 * kept with the node it happened in, and nothing after it is written.
 * Bindings: Linux Documentation/devicetree/bindings (arm/cpus, arm/psci,
 * interrupt-controller/arm,gic-v3 and arm,gic, timer/arm,arch_timer,
 * serial/8250, virtio/mmio).
 */
#include <errno.h>
#include <libfdt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vmm/arch/arm64/fdt.h"

#define GIC_PHANDLE 1
/* The GIC bindings' three interrupt cells: type, number, flags. */
#define GIC_SPI 0
#define GIC_PPI 1
/* Virtio kicks arrive through irqfds (a pulse): edge. The UART drives its
 * line up and down like a 16550 (devices/serial.c): level. */
#define IRQ_EDGE_RISING 1
#define IRQ_LEVEL_HIGH  4
#define MPIDR_AFF_MASK  0xff00ffffffULL
#define MAX_CELLS 16

struct fdt_w {
	void *fdt;
	int err;		/* first libfdt error (negative), 0 while none */
	char node[48];		/* the node being written, for the message */
};

static void w_ret(struct fdt_w *w, int ret)
{
	if (ret < 0 && !w->err)
		w->err = ret;
}

__attribute__((format(printf, 2, 3)))
static void begin(struct fdt_w *w, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return;
	va_start(ap, fmt);
	vsnprintf(w->node, sizeof(w->node), fmt, ap);
	va_end(ap);
	w_ret(w, fdt_begin_node(w->fdt, w->node));
}

static void end(struct fdt_w *w)
{
	if (!w->err)
		w_ret(w, fdt_end_node(w->fdt));
}

static void prop(struct fdt_w *w, const char *name, const void *val, int len)
{
	if (!w->err)
		w_ret(w, fdt_property(w->fdt, name, val, len));
}

static void prop_u32(struct fdt_w *w, const char *name, uint32_t v)
{
	fdt32_t be = cpu_to_fdt32(v);

	prop(w, name, &be, sizeof(be));
}

static void prop_u64(struct fdt_w *w, const char *name, uint64_t v)
{
	fdt64_t be = cpu_to_fdt64(v);

	prop(w, name, &be, sizeof(be));
}

static void prop_str(struct fdt_w *w, const char *name, const char *s)
{
	prop(w, name, s, (int)strlen(s) + 1);
}

/* @n host-order cells (n <= MAX_CELLS) as one big-endian property. */
static void prop_cells(struct fdt_w *w, const char *name, const uint32_t *cells, int n)
{
	fdt32_t be[MAX_CELLS];

	if (n > MAX_CELLS) {	/* a caller's bug: say so rather than overrun */
		w_ret(w, -FDT_ERR_INTERNAL);
		return;
	}
	for (int i = 0; i < n; i++)
		be[i] = cpu_to_fdt32(cells[i]);
	prop(w, name, be, n * (int)sizeof(be[0]));
}

/* reg with #address-cells = #size-cells = 2 for @n regions (n <= 2). */
static void prop_reg(struct fdt_w *w, const struct arm64_region *r, int n)
{
	uint32_t c[8];

	for (int i = 0; i < n; i++) {
		c[4 * i] = (uint32_t)(r[i].base >> 32);
		c[4 * i + 1] = (uint32_t)r[i].base;
		c[4 * i + 2] = (uint32_t)(r[i].size >> 32);
		c[4 * i + 3] = (uint32_t)r[i].size;
	}
	prop_cells(w, "reg", c, 4 * n);
}

static void write_chosen(struct fdt_w *w, const struct arm64_machine *m)
{
	char uart[48];

	snprintf(uart, sizeof(uart), "/uart@%llx", (unsigned long long)m->uart.base);
	begin(w, "chosen");
	prop_str(w, "bootargs", m->bootargs ? m->bootargs : "");
	if (m->initrd_size) {
		prop_u64(w, "linux,initrd-start", m->initrd_start);
		prop_u64(w, "linux,initrd-end", m->initrd_start + m->initrd_size);
	}
	prop_str(w, "stdout-path", uart);
	end(w);
}

static void write_cpus(struct fdt_w *w, const struct arm64_machine *m)
{
	begin(w, "cpus");
	prop_u32(w, "#address-cells", 2);
	prop_u32(w, "#size-cells", 0);
	for (int i = 0; i < m->ncpus; i++) {
		uint64_t aff = (m->mpidr ? m->mpidr[i] : arm64_mpidr_default(i)) & MPIDR_AFF_MASK;
		uint32_t reg[2] = { (uint32_t)(aff >> 32), (uint32_t)aff };

		begin(w, "cpu@%llx", (unsigned long long)aff);
		prop_str(w, "device_type", "cpu");
		prop_str(w, "compatible", "arm,arm-v8");
		prop_str(w, "enable-method", "psci");
		prop_cells(w, "reg", reg, 2);
		end(w);
	}
	end(w);
}

static void write_psci(struct fdt_w *w, const struct arm64_machine *m)
{
	/* A 1.0 firmware is also 0.2-compatible; Linux takes the first match. */
	static const char v1[] = "arm,psci-1.0\0arm,psci-0.2";
	static const char v02[] = "arm,psci-0.2";
	bool one = m->psci == ARM64_PSCI_1_0;

	begin(w, "psci");
	prop(w, "compatible", one ? v1 : v02, one ? (int)sizeof(v1) : (int)sizeof(v02));
	prop_str(w, "method", "hvc");	/* KVM answers PSCI calls at EL2 */
	end(w);
}

/* PPI flags: GICv2 also names the CPUs the PPI is wired to (bits 8-15). */
static uint32_t ppi_flags(const struct arm64_machine *m)
{
	uint32_t cpus = m->gic == ARM64_GIC_V2 ? ((1u << m->ncpus) - 1) << 8 : 0;

	return cpus | IRQ_LEVEL_HIGH;
}

static void write_gic(struct fdt_w *w, const struct arm64_machine *m)
{
	static const char v2[] = "arm,cortex-a15-gic";
	static const char v3[] = "arm,gic-v3";
	struct arm64_region reg[2] = { m->gic_dist, m->gic_cpu };
	uint32_t maint[3] = { GIC_PPI, ARM64_PPI_GIC_MAINT, ppi_flags(m) };

	begin(w, "intc@%llx", (unsigned long long)m->gic_dist.base);
	prop_str(w, "compatible", m->gic == ARM64_GIC_V3 ? v3 : v2);
	prop_u32(w, "#interrupt-cells", 3);
	/* No child nodes (no ITS): an interrupt-map naming the GIC would carry
	 * no unit address. dtc wants it said. */
	prop_u32(w, "#address-cells", 0);
	prop(w, "interrupt-controller", NULL, 0);
	prop_reg(w, reg, 2);
	prop_cells(w, "interrupts", maint, 3);
	prop_u32(w, "phandle", GIC_PHANDLE);
	end(w);
}

static void write_timer(struct fdt_w *w, const struct arm64_machine *m)
{
	static const uint32_t ppis[4] = { ARM64_PPI_TIMER_SEC, ARM64_PPI_TIMER_PHYS,
					  ARM64_PPI_TIMER_VIRT, ARM64_PPI_TIMER_HYP };
	uint32_t cells[12];

	for (int i = 0; i < 4; i++) {
		cells[3 * i] = GIC_PPI;
		cells[3 * i + 1] = ppis[i];
		cells[3 * i + 2] = ppi_flags(m);
	}
	begin(w, "timer");
	prop_str(w, "compatible", "arm,armv8-timer");
	prop_cells(w, "interrupts", cells, 12);
	prop(w, "always-on", NULL, 0);
	end(w);
}

/* Opens the node NAME@BASE: the caller adds its own properties and ends it. */
static void write_mmio_dev(struct fdt_w *w, const char *name, const char *compatible,
			   const struct arm64_mmio_dev *d, uint32_t irq_flags)
{
	struct arm64_region reg = { d->base, d->size };
	uint32_t irq[3] = { GIC_SPI, d->spi, irq_flags };

	begin(w, "%s@%llx", name, (unsigned long long)d->base);
	prop_str(w, "compatible", compatible);
	prop_reg(w, &reg, 1);
	prop_cells(w, "interrupts", irq, 3);
}

static void write_devices(struct fdt_w *w, const struct arm64_machine *m)
{
	/* 8-bit registers at consecutive addresses: reg-shift and
	 * reg-io-width keep their defaults (0 and 1). */
	write_mmio_dev(w, "uart", "ns16550a", &m->uart, IRQ_LEVEL_HIGH);
	prop_u32(w, "clock-frequency", ARM64_UART_CLOCK_HZ);
	end(w);
	for (int i = 0; i < m->nr_virtio; i++) {
		write_mmio_dev(w, "virtio_mmio", "virtio,mmio", &m->virtio[i],
			       IRQ_EDGE_RISING);
		prop(w, "dma-coherent", NULL, 0);	/* KVM guest RAM is coherent */
		end(w);
	}
}

static void write_tree(struct fdt_w *w, const struct arm64_machine *m)
{
	begin(w, "%s", "");
	prop_str(w, "compatible", "linux,dummy-virt");
	prop_str(w, "model", "mvm");
	prop_u32(w, "#address-cells", 2);
	prop_u32(w, "#size-cells", 2);
	prop_u32(w, "interrupt-parent", GIC_PHANDLE);
	write_chosen(w, m);
	begin(w, "memory@%llx", (unsigned long long)m->ram.base);
	prop_str(w, "device_type", "memory");
	prop_reg(w, &m->ram, 1);
	end(w);
	write_cpus(w, m);
	write_psci(w, m);
	write_gic(w, m);
	write_timer(w, m);
	write_devices(w, m);
	end(w);
}

int arm64_fdt_build(const struct arm64_machine *m, void *buf, size_t cap,
		    char *err, size_t errlen)
{
	size_t room = cap < ARM64_FDT_MAX_SIZE ? cap : ARM64_FDT_MAX_SIZE;
	struct fdt_w w = { .fdt = buf, .node = "(header)" };
	int ret = arm64_machine_check(m, err, errlen);

	if (ret)
		return ret;
	w_ret(&w, fdt_create(buf, (int)room));
	if (!w.err)
		w_ret(&w, fdt_finish_reservemap(buf));
	write_tree(&w, m);
	if (!w.err) {
		snprintf(w.node, sizeof(w.node), "(finish)");
		w_ret(&w, fdt_finish(buf));
	}
	if (w.err == -FDT_ERR_NOSPACE) {
		snprintf(err, errlen, "arm64: the device tree needs more than %zu bytes", room);
		return -ENOSPC;
	}
	if (w.err) {
		snprintf(err, errlen, "arm64: libfdt: %s (node '%s')", fdt_strerror(w.err), w.node);
		return -EIO;
	}
	return (int)fdt_totalsize(buf);
}

uint64_t arm64_fdt_addr(const struct arm64_region *ram)
{
	uint64_t end = ram->base + ram->size;
	uint64_t at = (end & ~(ARM64_FDT_MAX_SIZE - 1));

	if (end < ram->base || at < ARM64_FDT_MAX_SIZE)
		return 0;
	at -= ARM64_FDT_MAX_SIZE;
	return at >= ram->base ? at : 0;
}
