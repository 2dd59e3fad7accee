/* The arm64 machine description: the layout's defaults and the checks. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vmm/arch/arm64/machine.h"

#define SZ_4K  0x1000ULL
#define SZ_64K 0x10000ULL
#define SZ_2M  0x200000ULL
#define MPIDR_AFF_MASK 0xff00ffffffULL	/* Aff3 (39:32), Aff2, Aff1, Aff0 */

/* layout.h's regions, in address order, do not overlap and lie below RAM. */
_Static_assert(ARM64_GIC_DIST_BASE + ARM64_GICV3_DIST_SIZE <= ARM64_GICV3_REDIST_BASE &&
	       ARM64_GIC_DIST_BASE + ARM64_GICV2_DIST_SIZE <= ARM64_GICV2_CPU_BASE &&
	       ARM64_GICV2_CPU_BASE + ARM64_GICV2_CPU_SIZE <= ARM64_GICV3_REDIST_BASE &&
	       ARM64_GICV3_REDIST_BASE + ARM64_GICV3_REDIST_SIZE * ARM64_GICV3_MAX_CPUS <=
	       ARM64_UART_BASE &&
	       ARM64_UART_BASE + ARM64_UART_SIZE <= ARM64_VIRTIO_BASE &&
	       ARM64_VIRTIO_BASE + ARM64_VIRTIO_SIZE * ARM64_VIRTIO_SLOTS <= ARM64_MMIO_END &&
	       ARM64_MMIO_END <= ARM64_RAM_BASE, "layout.h: regions overlap");
_Static_assert(ARM64_SPI_UART < ARM64_SPI_VIRTIO_BASE &&
	       ARM64_SPI_VIRTIO_BASE + ARM64_VIRTIO_SLOTS - 1 <= ARM64_SPI_MAX,
	       "layout.h: SPIs overlap or exceed the vGIC's");

void arm64_machine_init(struct arm64_machine *m, uint64_t ram_size, int ncpus,
			enum arm64_gic_version gic)
{
	memset(m, 0, sizeof(*m));
	m->ram = (struct arm64_region){ ARM64_RAM_BASE, ram_size };
	m->ncpus = ncpus;
	m->gic = gic;
	if (gic == ARM64_GIC_V2) {
		m->gic_dist = (struct arm64_region){ ARM64_GIC_DIST_BASE, ARM64_GICV2_DIST_SIZE };
		m->gic_cpu = (struct arm64_region){ ARM64_GICV2_CPU_BASE, ARM64_GICV2_CPU_SIZE };
	} else {
		m->gic_dist = (struct arm64_region){ ARM64_GIC_DIST_BASE, ARM64_GICV3_DIST_SIZE };
		/* A negative count is refused by the check; size it as zero. */
		m->gic_cpu = (struct arm64_region){ ARM64_GICV3_REDIST_BASE,
			ARM64_GICV3_REDIST_SIZE * (uint64_t)(ncpus > 0 ? ncpus : 0) };
	}
	m->psci = ARM64_PSCI_1_0;
	m->uart = (struct arm64_mmio_dev){ ARM64_UART_BASE, ARM64_UART_SIZE, ARM64_SPI_UART };
}

struct arm64_mmio_dev arm64_virtio_slot(int slot)
{
	return (struct arm64_mmio_dev){
		.base = ARM64_VIRTIO_BASE + (uint64_t)slot * ARM64_VIRTIO_SIZE,
		.size = ARM64_VIRTIO_SIZE,
		.spi = ARM64_SPI_VIRTIO_BASE + (uint32_t)slot,
	};
}

uint64_t arm64_mpidr_default(int id)
{
	uint64_t u = (uint64_t)id;

	/* Bit 31 is RES1; the affinity split follows the GICv3 redistributor
	 * grouping of 16 CPUs per cluster (KVM's reset_mpidr). */
	return (1ULL << 31) | ((u >> 12) & 0xff) << 16 | ((u >> 4) & 0xff) << 8 | (u & 0xf);
}

struct named_region {
	char name[32];
	uint64_t base, size;
};

static int region_ok(const struct named_region *r, uint64_t align, uint64_t below,
		     char *err, size_t errlen)
{
	if (!r->size || r->base % align || r->size % SZ_4K || r->base + r->size < r->base ||
	    r->base + r->size > below) {
		snprintf(err, errlen, "arm64: %s region 0x%llx+0x%llx is empty, unaligned"
			 " or not below RAM (0x%llx)", r->name,
			 (unsigned long long)r->base, (unsigned long long)r->size,
			 (unsigned long long)below);
		return -EINVAL;
	}
	return 0;
}

static int regions_check(const struct arm64_machine *m, char *err, size_t errlen)
{
	struct named_region r[3 + ARM64_MAX_VIRTIO];
	bool v3 = m->gic == ARM64_GIC_V3;
	uint64_t gic_align = v3 ? SZ_64K : SZ_4K;	/* KVM's vGIC base alignment */
	int n = 0, ret = 0;

	r[n++] = (struct named_region){ "GIC distributor", m->gic_dist.base, m->gic_dist.size };
	r[n++] = (struct named_region){ "", m->gic_cpu.base, m->gic_cpu.size };
	snprintf(r[1].name, sizeof(r[1].name), v3 ? "GIC redistributors" : "GIC CPU interface");
	r[n++] = (struct named_region){ "UART", m->uart.base, m->uart.size };
	for (int i = 0; i < m->nr_virtio; i++) {
		r[n] = (struct named_region){ "", m->virtio[i].base, m->virtio[i].size };
		snprintf(r[n++].name, sizeof(r[0].name), "virtio device %d", i);
	}
	for (int i = 0; i < n && !ret; i++)
		ret = region_ok(&r[i], i < 2 ? gic_align : SZ_4K, m->ram.base, err, errlen);
	for (int i = 0; i < n && !ret; i++)
		for (int j = i + 1; j < n && !ret; j++)
			if (r[i].base < r[j].base + r[j].size && r[j].base < r[i].base + r[i].size) {
				snprintf(err, errlen, "arm64: %s and %s overlap", r[i].name,
					 r[j].name);
				ret = -EINVAL;
			}
	if (!ret && v3 && m->gic_cpu.size < ARM64_GICV3_REDIST_SIZE * (uint64_t)m->ncpus) {
		snprintf(err, errlen, "arm64: redistributor region too small for %d vCPUs",
			 m->ncpus);
		ret = -EINVAL;
	}
	return ret;
}

static int spis_check(const struct arm64_machine *m, char *err, size_t errlen)
{
	uint32_t used[(ARM64_SPI_MAX + 32) / 32] = { 0 };

	for (int i = -1; i < m->nr_virtio; i++) {
		uint32_t spi = i < 0 ? m->uart.spi : m->virtio[i].spi;

		if (spi > ARM64_SPI_MAX || used[spi / 32] & (1u << spi % 32)) {
			snprintf(err, errlen, "arm64: SPI %u (%s) out of range (0-%d) or used twice",
				 spi, i < 0 ? "UART" : "virtio", ARM64_SPI_MAX);
			return -EINVAL;
		}
		used[spi / 32] |= 1u << spi % 32;
	}
	return 0;
}

static int cpus_check(const struct arm64_machine *m, char *err, size_t errlen)
{
	int max = m->gic == ARM64_GIC_V2 ? ARM64_GICV2_MAX_CPUS : ARM64_MAX_CPUS;

	if (m->gic != ARM64_GIC_V2 && m->gic != ARM64_GIC_V3) {
		snprintf(err, errlen, "arm64: unknown GIC version %d", (int)m->gic);
		return -EINVAL;
	}
	if (m->ncpus < 1 || m->ncpus > max) {
		snprintf(err, errlen, "arm64: %d vCPUs (GICv%d: 1 to %d)", m->ncpus, (int)m->gic, max);
		return m->ncpus < 1 ? -EINVAL : -E2BIG;
	}
	for (int i = 0; m->mpidr && i < m->ncpus; i++)
		for (int j = 0; j < i; j++)
			if (((m->mpidr[i] ^ m->mpidr[j]) & MPIDR_AFF_MASK) == 0) {
				snprintf(err, errlen, "arm64: vCPUs %d and %d have one MPIDR", j, i);
				return -EINVAL;
			}
	return 0;
}

static int boot_check(const struct arm64_machine *m, char *err, size_t errlen)
{
	uint64_t ram_end = m->ram.base + m->ram.size;

	if (m->bootargs && strnlen(m->bootargs, ARM64_CMDLINE_MAX) >= ARM64_CMDLINE_MAX) {
		snprintf(err, errlen, "arm64: kernel command line longer than %d bytes",
			 ARM64_CMDLINE_MAX - 1);
		return -E2BIG;
	}
	if (m->initrd_size && (m->initrd_start < m->ram.base ||
			       m->initrd_start + m->initrd_size < m->initrd_start ||
			       m->initrd_start + m->initrd_size > ram_end)) {
		snprintf(err, errlen, "arm64: initrd 0x%llx+0x%llx is not inside RAM",
			 (unsigned long long)m->initrd_start, (unsigned long long)m->initrd_size);
		return -EINVAL;
	}
	if (m->psci != ARM64_PSCI_0_2 && m->psci != ARM64_PSCI_1_0) {
		snprintf(err, errlen, "arm64: unknown PSCI version %d", (int)m->psci);
		return -EINVAL;
	}
	return 0;
}

int arm64_machine_check(const struct arm64_machine *m, char *err, size_t errlen)
{
	uint64_t ram_end = m->ram.base + m->ram.size;
	int ret = cpus_check(m, err, errlen);

	if (ret)
		return ret;
	if (!m->ram.size || m->ram.base % SZ_2M || m->ram.size % SZ_4K || ram_end < m->ram.base ||
	    ram_end > ARM64_RAM_END_MAX) {
		snprintf(err, errlen, "arm64: RAM 0x%llx+0x%llx must be 2 MiB aligned, whole pages"
			 " and end by 0x%llx", (unsigned long long)m->ram.base,
			 (unsigned long long)m->ram.size, (unsigned long long)ARM64_RAM_END_MAX);
		return -EINVAL;
	}
	if (m->nr_virtio < 0 || m->nr_virtio > ARM64_MAX_VIRTIO || (m->nr_virtio && !m->virtio)) {
		snprintf(err, errlen, "arm64: %d virtio devices (at most %d)", m->nr_virtio,
			 ARM64_MAX_VIRTIO);
		return m->nr_virtio > ARM64_MAX_VIRTIO ? -E2BIG : -EINVAL;
	}
	ret = regions_check(m, err, errlen);
	if (!ret)
		ret = spis_check(m, err, errlen);
	if (!ret)
		ret = boot_check(m, err, errlen);
	return ret;
}
