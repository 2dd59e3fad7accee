/* The vGICv3 state plan and its record: writer, and the checks of hostile ones. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/le_bytes.h"
#include "vmm/arch/arm64/gic_state.h"

uint64_t arm64_gic_mpidr_attr(uint64_t mpidr)
{
	uint64_t aff = (mpidr & 0xffffffULL) | (mpidr >> 32 & 0xff) << 24;

	return aff << ARM64_VGIC_MPIDR_SHIFT;
}

uint64_t arm64_gic_sysreg_attr(unsigned op0, unsigned op1, unsigned crn, unsigned crm,
			       unsigned op2)
{
	return (uint64_t)(op0 & 3) << 14 | (uint64_t)(op1 & 7) << 11 | (uint64_t)(crn & 15) << 7 |
	       (uint64_t)(crm & 15) << 3 | (op2 & 7);
}

uint64_t arm64_gic_icc_ctlr_attr(void)
{
	return arm64_gic_sysreg_attr(3, 0, 12, 12, 4);
}

uint8_t arm64_gic_pribits(uint64_t icc_ctlr)
{
	return (uint8_t)((icc_ctlr >> 8 & 7) + 1);
}

struct plan {
	struct arm64_gic_reg *out;
	size_t cap, n;
};

static void add(struct plan *p, uint32_t group, enum arm64_gic_kind kind, uint64_t attr)
{
	if (p->n < p->cap)
		p->out[p->n] = (struct arm64_gic_reg){ group, kind, attr };
	p->n++;
}

/* Every 32-bit word of a register array with @bits per interrupt, for
 * INTIDs @from..@to-1, at @base in @group (vCPU field @cpu). */
static void words(struct plan *p, uint32_t group, enum arm64_gic_kind kind, uint64_t cpu,
		  uint64_t base, unsigned bits, uint32_t from, uint32_t to)
{
	for (uint32_t w = from * bits / 32; w < to * bits / 32; w++)
		add(p, group, kind, cpu | (base + 4ULL * w));
}

static void level_info(struct plan *p, uint64_t cpu, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i += 32)
		add(p, ARM64_VGIC_GRP_LEVEL_INFO, ARM64_GIC_REG32, cpu | i);
}

static void distributor(struct plan *p, uint32_t nr, uint64_t cpu0)
{
	const uint32_t g = ARM64_VGIC_GRP_DIST_REGS;

	add(p, g, ARM64_GIC_REG32, ARM64_GICD_IIDR);	/* first: arm-vgic-v3.rst */
	add(p, g, ARM64_GIC_REG32, ARM64_GICD_CTLR);
	words(p, g, ARM64_GIC_REG32, 0, ARM64_GICD_IGROUPR, 1, 32, nr);
	/* IROUTER is 64 bits an interrupt, accessed as two 32-bit halves. */
	words(p, g, ARM64_GIC_REG32, 0, ARM64_GICD_IROUTER, 64, 32, nr);
	words(p, g, ARM64_GIC_REG32, 0, ARM64_GICD_ICFGR, 2, 32, nr);
	words(p, g, ARM64_GIC_REG32, 0, ARM64_GICD_IPRIORITYR, 8, 32, nr);
	/* SPI levels are the same through any vCPU; KVM wants a real one. */
	level_info(p, cpu0, 32, nr);
	words(p, g, ARM64_GIC_REG32, 0, ARM64_GICD_ISPENDR, 1, 32, nr);
	words(p, g, ARM64_GIC_SETCLR32, 0, ARM64_GICD_ISACTIVER, 1, 32, nr);
	words(p, g, ARM64_GIC_SETCLR32, 0, ARM64_GICD_ISENABLER, 1, 32, nr);
}

static void redistributor(struct plan *p, uint64_t cpu)
{
	const uint32_t g = ARM64_VGIC_GRP_REDIST_REGS;
	const uint64_t sgi = ARM64_GICR_SGI;

	add(p, g, ARM64_GIC_REG32, cpu | ARM64_GICR_CTLR);
	add(p, g, ARM64_GIC_REG32, cpu | ARM64_GICR_WAKER);
	words(p, g, ARM64_GIC_REG32, cpu, ARM64_GICR_PROPBASER, 64, 0, 1);
	words(p, g, ARM64_GIC_REG32, cpu, ARM64_GICR_PENDBASER, 64, 0, 1);
	/* The SGI frame holds INTIDs 0..31 at the distributor's offsets. */
	words(p, g, ARM64_GIC_REG32, cpu, sgi + ARM64_GICD_IGROUPR, 1, 0, 32);
	words(p, g, ARM64_GIC_REG32, cpu, sgi + ARM64_GICD_ICFGR, 2, 0, 32);
	words(p, g, ARM64_GIC_REG32, cpu, sgi + ARM64_GICD_IPRIORITYR, 8, 0, 32);
	level_info(p, cpu, 0, 32);
	words(p, g, ARM64_GIC_REG32, cpu, sgi + ARM64_GICD_ISPENDR, 1, 0, 32);
	words(p, g, ARM64_GIC_SETCLR32, cpu, sgi + ARM64_GICD_ISACTIVER, 1, 0, 32);
	words(p, g, ARM64_GIC_SETCLR32, cpu, sgi + ARM64_GICD_ISENABLER, 1, 0, 32);
}

/* The CPU interface: ICC_SRE_EL1 first (it says how the rest is reached),
 * then control, group enables, priority mask, binary points, and the
 * active-priority registers this interface has, as KVM counts them
 * (vgic_v3_max_apr_idx): 4 of each kind for 7 priority bits, 2 for 6,
 * else 1. */
static void cpu_interface(struct plan *p, uint64_t cpu, uint8_t pribits)
{
	static const uint8_t main_regs[][5] = {
		{ 3, 0, 12, 12, 5 },	/* ICC_SRE_EL1 */
		{ 3, 0, 12, 12, 4 },	/* ICC_CTLR_EL1 */
		{ 3, 0, 12, 12, 6 },	/* ICC_IGRPEN0_EL1 */
		{ 3, 0, 12, 12, 7 },	/* ICC_IGRPEN1_EL1 */
		{ 3, 0, 4, 6, 0 },	/* ICC_PMR_EL1 */
		{ 3, 0, 12, 8, 3 },	/* ICC_BPR0_EL1 */
		{ 3, 0, 12, 12, 3 },	/* ICC_BPR1_EL1 */
	};
	unsigned napr = pribits == 7 ? 4 : pribits == 6 ? 2 : 1;

	for (size_t i = 0; i < sizeof(main_regs) / sizeof(main_regs[0]); i++) {
		const uint8_t *r = main_regs[i];

		add(p, ARM64_VGIC_GRP_CPU_SYSREGS, ARM64_GIC_REG64,
		    cpu | arm64_gic_sysreg_attr(r[0], r[1], r[2], r[3], r[4]));
	}
	for (unsigned n = 0; n < napr; n++)	/* ICC_AP0R<n>_EL1 */
		add(p, ARM64_VGIC_GRP_CPU_SYSREGS, ARM64_GIC_REG64,
		    cpu | arm64_gic_sysreg_attr(3, 0, 12, 8, 4 | n));
	for (unsigned n = 0; n < napr; n++)	/* ICC_AP1R<n>_EL1 */
		add(p, ARM64_VGIC_GRP_CPU_SYSREGS, ARM64_GIC_REG64,
		    cpu | arm64_gic_sysreg_attr(3, 0, 12, 9, n));
}

static int check_host(const struct arm64_gic_host *h, char *err, size_t errlen)
{
	if (h->nr_irqs < ARM64_GIC_MIN_IRQS || h->nr_irqs > ARM64_GIC_MAX_IRQS || h->nr_irqs % 32) {
		snprintf(err, errlen, "vGIC: %u interrupts (64 to 1024, by 32)", h->nr_irqs);
		return -EINVAL;
	}
	if (h->ncpus < 1 || h->ncpus > ARM64_MAX_CPUS) {
		snprintf(err, errlen, "vGIC: %d vCPUs (1 to %d)", h->ncpus, ARM64_MAX_CPUS);
		return -EINVAL;
	}
	for (int i = 0; i < h->ncpus; i++) {
		if (h->pribits[i] < 5 || h->pribits[i] > 8) {
			snprintf(err, errlen, "vGIC: vCPU %d's CPU interface has %u priority bits"
				 " (5 to 8)", i, h->pribits[i]);
			return -EINVAL;
		}
		uint64_t cpu = arm64_gic_mpidr_attr(h->mpidr[i]);

		for (int j = 0; j < i; j++)
			if (cpu == arm64_gic_mpidr_attr(h->mpidr[j])) {
				snprintf(err, errlen, "vGIC: vCPUs %d and %d have one MPIDR", j, i);
				return -EINVAL;
			}
	}
	return 0;
}

int arm64_gic_plan(const struct arm64_gic_host *h, struct arm64_gic_reg *out, size_t cap,
		   char *err, size_t errlen)
{
	struct plan p = { .out = out, .cap = cap };
	int ret = check_host(h, err, errlen);

	if (ret)
		return ret;
	distributor(&p, h->nr_irqs, arm64_gic_mpidr_attr(h->mpidr[0]));
	for (int i = 0; i < h->ncpus; i++)
		redistributor(&p, arm64_gic_mpidr_attr(h->mpidr[i]));
	for (int i = 0; i < h->ncpus; i++)
		cpu_interface(&p, arm64_gic_mpidr_attr(h->mpidr[i]), h->pribits[i]);
	if (p.n > cap || p.n > ARM64_GIC_RECORD_MAX) {
		snprintf(err, errlen, "vGIC: %zu attributes, room for %zu", p.n, cap);
		return -E2BIG;
	}
	return (int)p.n;
}

size_t arm64_gic_record_size(size_t n)
{
	return ARM64_GIC_RECORD_HDR + n * ARM64_GIC_ENTRY;
}

void arm64_gic_record_write(uint8_t *buf, const struct arm64_gic_reg *plan, const uint64_t *vals,
			    size_t n, uint32_t nr_irqs, uint32_t ncpus)
{
	memset(buf, 0, arm64_gic_record_size(n));
	le_put32(buf, ARM64_GIC_RECORD_MAGIC);
	le_put32(buf + 4, ARM64_GIC_RECORD_VERSION);
	le_put32(buf + 8, (uint32_t)n);
	le_put32(buf + 12, nr_irqs);
	le_put32(buf + 16, ncpus);
	for (size_t i = 0; i < n; i++) {
		uint8_t *e = buf + ARM64_GIC_RECORD_HDR + i * ARM64_GIC_ENTRY;

		le_put32(e, plan[i].group);
		le_put64(e + 8, plan[i].attr);
		le_put64(e + 16, vals[i]);
	}
}

static bool group_known(uint32_t g, bool *wide)
{
	*wide = g == ARM64_VGIC_GRP_CPU_SYSREGS;
	return g == ARM64_VGIC_GRP_DIST_REGS || g == ARM64_VGIC_GRP_REDIST_REGS ||
	       g == ARM64_VGIC_GRP_CPU_SYSREGS || g == ARM64_VGIC_GRP_LEVEL_INFO;
}

int arm64_gic_record_check(const uint8_t *p, size_t len, char *err, size_t errlen)
{
	uint32_t count;

	if (len < ARM64_GIC_RECORD_HDR || le_get32(p) != ARM64_GIC_RECORD_MAGIC) {
		snprintf(err, errlen, "vGIC record: no arm64 vGIC record header");
		return -EINVAL;
	}
	if (le_get32(p + 4) != ARM64_GIC_RECORD_VERSION) {
		snprintf(err, errlen, "vGIC record: version %u is not %u", le_get32(p + 4),
			 ARM64_GIC_RECORD_VERSION);
		return -EINVAL;
	}
	if (le_get32(p + 20)) {
		snprintf(err, errlen, "vGIC record: a reserved header field is not zero");
		return -EINVAL;
	}
	count = le_get32(p + 8);
	if (count > ARM64_GIC_RECORD_MAX) {
		snprintf(err, errlen, "vGIC record: %u attributes, at most %d", count,
			 ARM64_GIC_RECORD_MAX);
		return -E2BIG;
	}
	if (len != arm64_gic_record_size(count)) {
		snprintf(err, errlen, "vGIC record: %zu bytes for %u attributes", len, count);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = p + ARM64_GIC_RECORD_HDR + (size_t)i * ARM64_GIC_ENTRY;
		bool wide;

		if (!group_known(le_get32(e), &wide) || le_get32(e + 4)) {
			snprintf(err, errlen, "vGIC record: entry %u is in no vGIC state group", i);
			return -EINVAL;
		}
		if (!wide && le_get64(e + 16) >> 32) {
			snprintf(err, errlen, "vGIC record: entry %u's 32-bit value is wider", i);
			return -EINVAL;
		}
	}
	return 0;
}

int arm64_gic_record_match(const uint8_t *p, size_t len, const struct arm64_gic_reg *plan,
			   size_t n, uint32_t nr_irqs, uint32_t ncpus, uint64_t *vals,
			   char *err, size_t errlen)
{
	int ret = arm64_gic_record_check(p, len, err, errlen);

	if (ret)
		return ret;
	if (le_get32(p + 12) != nr_irqs || le_get32(p + 16) != ncpus) {
		snprintf(err, errlen, "vGIC record: %u interrupts and %u vCPUs; this VM's vGIC has"
			 " %u and %u", le_get32(p + 12), le_get32(p + 16), nr_irqs, ncpus);
		return -EINVAL;
	}
	if (le_get32(p + 8) != n) {
		snprintf(err, errlen, "vGIC record: %u attributes; this host's KVM has %zu",
			 le_get32(p + 8), n);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = p + ARM64_GIC_RECORD_HDR + i * ARM64_GIC_ENTRY;

		if (le_get32(e) != plan[i].group || le_get64(e + 8) != plan[i].attr) {
			snprintf(err, errlen, "vGIC record: entry %zu is group %u attribute 0x%llx;"
				 " this host's is group %u attribute 0x%llx", i, le_get32(e),
				 (unsigned long long)le_get64(e + 8), plan[i].group,
				 (unsigned long long)plan[i].attr);
			return -EINVAL;
		}
		vals[i] = le_get64(e + 16);
	}
	return 0;
}
