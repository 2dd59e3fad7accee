/*
 * The in-kernel vGICv3's saved state as plain data (issue 31): which
 * device attributes hold it (the plan), in the order they are restored,
 * and the record a snapshot carries. Pure: kvm/vgic_state.c reads and
 * writes the attributes; unit tests and a fuzz target run here on any host.
 *
 * The plan follows Documentation/virt/kvm/devices/arm-vgic-v3.rst: GICD_IIDR
 * before any other register (it selects the KVM behaviour userspace
 * expects), then the distributor, each vCPU's redistributor and its CPU
 * interface (KVM_DEV_ARM_VGIC_GRP_CPU_SYSREGS), the order QEMU and
 * Firecracker restore them in. Within a group of interrupts: group,
 * routing, trigger, priority, the input line levels (GRP_LEVEL_INFO),
 * the pending latch, active, and enable last, so nothing is delivered half
 * configured. Set/clear register pairs restore exactly: the clear register
 * is written with the complement first (a rollback in place starts from a
 * state that is not the reset one). Only SPIs on the distributor (with
 * affinity routing, KVM's only mode, its private-interrupt words are
 * RAZ/WI); SGIs and PPIs on each redistributor.
 *
 * A snapshot is hostile input: the record is refused unless it names
 * exactly the attributes this host's plan names, in that order, so no
 * offset, vCPU or group reaches KVM that mvm would not use itself. The
 * plan is built from what this host's KVM reports (its interrupt count,
 * each vCPU's MPIDR, each CPU interface's priority bits).
 *
 * Record layout, little-endian:
 *   0  u32 magic ARM64_GIC_RECORD_MAGIC ("A64G")
 *   4  u32 version (1)
 *   8  u32 count (at most ARM64_GIC_RECORD_MAX)
 *  12  u32 the interrupt count KVM reported (KVM_DEV_ARM_VGIC_GRP_NR_IRQS)
 *  16  u32 vCPUs
 *  20  u32 zero
 *  24  count entries of 24 bytes: u32 group, u32 zero, u64 attr, u64 value
 *      (a 32-bit register's value has its upper half zero)
 * Nothing follows the last entry.
 */
#ifndef MVM_ARM64_GIC_STATE_H
#define MVM_ARM64_GIC_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/machine.h"

/* Device attribute groups of the GICv3 state (arm-vgic-v3.rst). */
#define ARM64_VGIC_GRP_DIST_REGS    1
#define ARM64_VGIC_GRP_REDIST_REGS  5
#define ARM64_VGIC_GRP_CPU_SYSREGS  6
#define ARM64_VGIC_GRP_LEVEL_INFO   7
#define ARM64_VGIC_MPIDR_SHIFT      32	/* KVM_DEV_ARM_VGIC_V3_MPIDR_SHIFT */
#define ARM64_VGIC_LEVEL_INFO_SHIFT 10	/* KVM_DEV_ARM_VGIC_LINE_LEVEL_INFO_SHIFT */

/* Distributor and redistributor offsets (GICv3 architecture, IHI0069). */
#define ARM64_GICD_CTLR        0x0000
#define ARM64_GICD_IIDR        0x0008
#define ARM64_GICD_IGROUPR     0x0080
#define ARM64_GICD_ISENABLER   0x0100
#define ARM64_GICD_ISPENDR     0x0200
#define ARM64_GICD_ISACTIVER   0x0300
#define ARM64_GICD_IPRIORITYR  0x0400
#define ARM64_GICD_ICFGR       0x0c00
#define ARM64_GICD_IROUTER     0x6000
#define ARM64_GIC_CLEAR_DELTA  0x80	/* ISENABLER -> ICENABLER, ISACTIVER -> ICACTIVER */
#define ARM64_GICR_CTLR        0x0000
#define ARM64_GICR_WAKER       0x0014
#define ARM64_GICR_PROPBASER   0x0070
#define ARM64_GICR_PENDBASER   0x0078
#define ARM64_GICR_SGI         0x10000	/* the SGI_base frame */

/* The interrupt counts KVM takes (GRP_NR_IRQS): 64 to 1024, by 32. */
#define ARM64_GIC_MIN_IRQS     64
#define ARM64_GIC_MAX_IRQS     1024
/* Per vCPU: 21 redistributor attributes and at most 15 CPU interface ones. */
#define ARM64_GIC_PER_CPU      36
/* Every attribute of 1024 interrupts and ARM64_MAX_CPUS vCPUs fits. */
#define ARM64_GIC_SPIS_MAX     (ARM64_GIC_MAX_IRQS - 32)
#define ARM64_GIC_RECORD_MAX   (2 + 5 * ARM64_GIC_SPIS_MAX / 32 + 2 * ARM64_GIC_SPIS_MAX + \
				ARM64_GIC_SPIS_MAX / 16 + ARM64_GIC_SPIS_MAX / 4 + \
				ARM64_GIC_PER_CPU * ARM64_MAX_CPUS)
#define ARM64_GIC_RECORD_MAGIC 0x47343641U	/* "A64G" */
#define ARM64_GIC_RECORD_VERSION 1
#define ARM64_GIC_RECORD_HDR   24
#define ARM64_GIC_ENTRY        24

enum arm64_gic_kind {
	ARM64_GIC_REG32,	/* a 32-bit register: write the value back */
	ARM64_GIC_SETCLR32,	/* a set register (read here); its clear one at
				 * attr + ARM64_GIC_CLEAR_DELTA takes ~value first */
	ARM64_GIC_REG64,	/* a CPU interface system register */
};

struct arm64_gic_reg {
	uint32_t group;
	uint32_t kind;		/* enum arm64_gic_kind */
	uint64_t attr;
};

/* What the plan is built from: as this host's KVM reports it. */
struct arm64_gic_host {
	uint32_t nr_irqs;		/* GRP_NR_IRQS */
	int ncpus;
	const uint64_t *mpidr;		/* each vCPU's MPIDR_EL1 */
	const uint8_t *pribits;		/* each CPU interface's ICC_CTLR_EL1.PRIbits + 1 */
};

/* The GRP_*_REGS/LEVEL_INFO attr's vCPU field for MPIDR_EL1 @mpidr
 * (Aff3 in 63:56, Aff2, Aff1, Aff0 in 39:32). */
uint64_t arm64_gic_mpidr_attr(uint64_t mpidr);
/* ICC_* system register (op0, op1, CRn, CRm, op2) as GRP_CPU_SYSREGS's
 * instr field. */
uint64_t arm64_gic_sysreg_attr(unsigned op0, unsigned op1, unsigned crn, unsigned crm,
			       unsigned op2);
/* ICC_CTLR_EL1 (for PRIbits, read before the plan: arm64_gic_pribits). */
uint64_t arm64_gic_icc_ctlr_attr(void);
/* Priority bits (PRIbits + 1) from an ICC_CTLR_EL1 value. */
uint8_t arm64_gic_pribits(uint64_t icc_ctlr);

/*
 * The plan for @h into @out (room for @cap): the count, or -EINVAL with
 * the reason in @err (an interrupt count KVM cannot have, no vCPUs or too
 * many, priority bits outside 5..8, two vCPUs with one MPIDR) or -E2BIG.
 */
int arm64_gic_plan(const struct arm64_gic_host *h, struct arm64_gic_reg *out, size_t cap,
		   char *err, size_t errlen);

/* Bytes of a record of @n entries. */
size_t arm64_gic_record_size(size_t n);
/* The record of @plan's @n values @vals into @buf (arm64_gic_record_size). */
void arm64_gic_record_write(uint8_t *buf, const struct arm64_gic_reg *plan, const uint64_t *vals,
			    size_t n, uint32_t nr_irqs, uint32_t ncpus);

/*
 * Check a hostile @len-byte record on its own (pure; snapshot loading's
 * first pass): header, version, count within the cap, exact length,
 * reserved fields zero, every group one of the four, 32-bit values
 * within 32 bits. 0, or -EINVAL / -E2BIG with the reason in @err.
 */
int arm64_gic_record_check(const uint8_t *p, size_t len, char *err, size_t errlen);
/*
 * Then against this host's @plan of @n attributes (the record passed
 * arm64_gic_record_check): the same interrupt count (@nr_irqs) and vCPUs
 * (@ncpus), and entry i naming plan[i]'s group and attribute. Fills
 * @vals (room for @n) with the values. 0, or -EINVAL naming the first
 * difference.
 */
int arm64_gic_record_match(const uint8_t *p, size_t len, const struct arm64_gic_reg *plan,
			   size_t n, uint32_t nr_irqs, uint32_t ncpus, uint64_t *vals,
			   char *err, size_t errlen);

#endif
