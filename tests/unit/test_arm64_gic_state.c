/*
 * arm64 snapshot state as plain data (issue 31): the vGICv3's attribute
 * plan and its record (vmm/arch/arm64/gic_state.c), the vCPU section
 * (vcpu_section.c) and the counters' restore order (regs.c). A record
 * round-trips; a hostile one (other offsets, vCPUs, interrupt counts,
 * groups, widths, lengths) is refused whole, with a reason, before the
 * caller would write one attribute. Run natively and under qemu-aarch64
 * (make test-arm64).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/arch/arm64/gic_state.h"
#include "vmm/arch/arm64/reg_record.h"
#include "vmm/arch/arm64/regs.h"
#include "vmm/arch/arm64/vcpu_section.h"

static char err[256];
/* Two vCPUs as KVM numbers them (MPIDR_EL1 bit 31 is RES1). */
static const uint64_t mpidrs[2] = { 0x80000000ULL, 0x80000001ULL };
static uint8_t pri5[2] = { 5, 5 };
static struct arm64_gic_reg plan[ARM64_GIC_RECORD_MAX];
static uint64_t vals[ARM64_GIC_RECORD_MAX], back[ARM64_GIC_RECORD_MAX];

static int make_plan(uint32_t nr_irqs, const uint8_t *pri)
{
	struct arm64_gic_host h = {
		.nr_irqs = nr_irqs, .ncpus = 2, .mpidr = mpidrs, .pribits = pri,
	};

	return arm64_gic_plan(&h, plan, ARM64_GIC_RECORD_MAX, err, sizeof(err));
}

/* The record of a 256-interrupt, 2-vCPU plan with distinct values. */
static uint8_t *make_record(int *n, size_t *len)
{
	uint8_t *rec;

	*n = make_plan(256, pri5);
	cr_assert_gt(*n, 0, "%s", err);
	for (int i = 0; i < *n; i++)
		vals[i] = plan[i].kind == ARM64_GIC_REG64 ? 0x1122334455667700ULL + (uint64_t)i :
							    0x80000000U + (uint32_t)i;
	*len = arm64_gic_record_size((size_t)*n);
	rec = malloc(*len);
	cr_assert_not_null(rec);
	arm64_gic_record_write(rec, plan, vals, (size_t)*n, 256, 2);
	return rec;
}

static int match(const uint8_t *rec, size_t len, int n)
{
	return arm64_gic_record_match(rec, len, plan, (size_t)n, 256, 2, back, err, sizeof(err));
}

Test(arm64_gic_state, the_plan_starts_with_iidr_and_addresses_each_vcpu_by_mpidr)
{
	int n = make_plan(256, pri5), first_icc = -1;

	/* 2 + 7 SPI words x (group, level, pending, active, enable) + 448
	 * IROUTER halves + 14 ICFGR + 56 IPRIORITYR; per vCPU 21 + 9. */
	cr_assert_eq(n, 2 + 35 + 448 + 14 + 56 + 2 * (21 + 9), "%d: %s", n, err);
	cr_assert_eq(plan[0].group, ARM64_VGIC_GRP_DIST_REGS);
	cr_assert_eq(plan[0].attr, ARM64_GICD_IIDR);
	cr_assert_eq(plan[1].attr, ARM64_GICD_CTLR);
	/* SPIs only: the first group word is INTIDs 32..63. */
	cr_assert_eq(plan[2].attr, ARM64_GICD_IGROUPR + 4);
	for (int i = 0; i < n; i++) {
		uint64_t cpu = plan[i].attr >> 32;

		if (plan[i].group == ARM64_VGIC_GRP_DIST_REGS) {
			cr_assert_eq(cpu, 0);
			cr_assert_lt(plan[i].attr, ARM64_GICD_IROUTER + 8 * 256);
		} else {
			cr_assert(cpu == 0 || cpu == 1, "attribute 0x%llx",
				  (unsigned long long)plan[i].attr);
		}
		if (plan[i].group == ARM64_VGIC_GRP_CPU_SYSREGS && first_icc < 0)
			first_icc = i;
	}
	/* Enable is the distributor's last word (nothing delivered half set
	 * up): the last SPI word's ISENABLER, before vCPU 0's GICR_CTLR. */
	cr_assert_eq(plan[2 + 35 + 448 + 14 + 56 - 1].kind, ARM64_GIC_SETCLR32);
	cr_assert_eq(plan[2 + 35 + 448 + 14 + 56 - 1].attr, ARM64_GICD_ISENABLER + 4 * 7);
	cr_assert_eq(plan[2 + 35 + 448 + 14 + 56].group, ARM64_VGIC_GRP_REDIST_REGS);
	cr_assert_eq(plan[2 + 35 + 448 + 14 + 56].attr, ARM64_GICR_CTLR);
	/* The CPU interfaces after every redistributor, ICC_SRE_EL1 first. */
	cr_assert_gt(first_icc, 0);
	cr_assert_eq(plan[first_icc].attr, arm64_gic_sysreg_attr(3, 0, 12, 12, 5));
	cr_assert_eq(plan[first_icc - 1].group, ARM64_VGIC_GRP_REDIST_REGS);
	cr_assert_eq(plan[first_icc - 1].attr >> 32, 1);
}

Test(arm64_gic_state, active_priority_registers_follow_the_priority_bits)
{
	uint8_t pri[2] = { 7, 6 };
	int n5 = make_plan(64, pri5), n = make_plan(64, pri);

	/* 7 bits: 4 AP0R and 4 AP1R; 6 bits: 2 and 2; 5 bits: 1 and 1. */
	cr_assert_eq(n - n5, (8 - 2) + (4 - 2));
}

Test(arm64_gic_state, mpidr_affinity_goes_to_the_attributes_upper_half)
{
	cr_assert_eq(arm64_gic_mpidr_attr(0x12ULL << 32 | 0x80345678ULL), 0x12345678ULL << 32);
	cr_assert_eq(arm64_gic_pribits(4u << 8), 5);
}

Test(arm64_gic_state, a_plan_kvm_cannot_have_is_refused)
{
	uint8_t pri9[2] = { 9, 5 };
	static const uint64_t same[2] = { 0x80000001ULL, 0x80000001ULL };
	struct arm64_gic_host h = { .nr_irqs = 256, .ncpus = 2, .mpidr = same, .pribits = pri5 };

	cr_assert_eq(make_plan(100, pri5), -EINVAL);
	cr_assert(strstr(err, "100 interrupts"), "%s", err);
	cr_assert_eq(make_plan(2048, pri5), -EINVAL);
	cr_assert_eq(make_plan(256, pri9), -EINVAL);
	cr_assert(strstr(err, "priority bits"), "%s", err);
	cr_assert_eq(arm64_gic_plan(&h, plan, ARM64_GIC_RECORD_MAX, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "one MPIDR"), "%s", err);
	h.mpidr = mpidrs;
	cr_assert_eq(arm64_gic_plan(&h, plan, 10, err, sizeof(err)), -E2BIG);
}

Test(arm64_gic_state, a_record_round_trips)
{
	int n;
	size_t len;
	uint8_t *rec = make_record(&n, &len);

	cr_assert_eq(arm64_gic_record_check(rec, len, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(match(rec, len, n), 0, "%s", err);
	cr_assert_eq(memcmp(back, vals, (size_t)n * sizeof(vals[0])), 0);
	free(rec);
}

/* Offsets of entry @i's fields in a record. */
#define ENTRY(i) (ARM64_GIC_RECORD_HDR + (size_t)(i) * ARM64_GIC_ENTRY)

Test(arm64_gic_state, a_hostile_record_is_refused_whole)
{
	int n;
	size_t len;
	uint8_t *rec = make_record(&n, &len), *bad = malloc(len + ARM64_GIC_ENTRY);

	cr_assert_not_null(bad);
#define TRY(edit, ret, what)                                                          \
	do {                                                                          \
		size_t l = len;                                                       \
		memcpy(bad, rec, len);                                                \
		edit;                                                                 \
		cr_assert_eq(match(bad, l, n), ret, "%s: %s", #edit, err);            \
		cr_assert(strstr(err, what), "%s: %s", #edit, err);                   \
	} while (0)
	TRY(bad[0] ^= 1, -EINVAL, "no arm64 vGIC record");
	TRY(bad[4] = 2, -EINVAL, "version 2");
	TRY(bad[20] = 1, -EINVAL, "reserved");
	TRY((bad[8] = 0xff, bad[9] = 0xff, bad[10] = 0xff), -E2BIG, "at most");
	TRY(l = len - 1, -EINVAL, "bytes for");
	TRY(l = 5, -EINVAL, "header");
	/* An entry in a group mvm never saves (the ITS's, 8). */
	TRY(bad[ENTRY(3)] = 8, -EINVAL, "no vGIC state group");
	TRY(bad[ENTRY(3) + 4] = 1, -EINVAL, "no vGIC state group");
	/* A 32-bit register's value wider than 32 bits. */
	TRY(bad[ENTRY(3) + 20] = 1, -EINVAL, "32-bit value");
	/* An offset past this host's interrupts, and another vCPU. */
	TRY(bad[ENTRY(3) + 9] = 0x70, -EINVAL, "this host's is");
	TRY(bad[ENTRY(n - 1) + 12] = 7, -EINVAL, "this host's is");
	/* Another interrupt count or vCPU count than this VM's. */
	TRY(bad[12] = 0x60, -EINVAL, "interrupts and");
	TRY(bad[16] = 3, -EINVAL, "vCPUs");
	/* One attribute fewer, or one more (count and length agreeing). */
	TRY((bad[8] = (uint8_t)(n - 1), bad[9] = (uint8_t)((n - 1) >> 8),
	     l = len - ARM64_GIC_ENTRY), -EINVAL, "this host's KVM has");
	TRY((bad[8] = (uint8_t)(n + 1), bad[9] = (uint8_t)((n + 1) >> 8), l = len + ARM64_GIC_ENTRY,
	     memcpy(bad + len, rec + ENTRY(0), ARM64_GIC_ENTRY)),
	    -EINVAL, "this host's KVM has");
#undef TRY
	free(bad);
	free(rec);
}

/* A vCPU section: power state, then PC and MPIDR_EL1 (0x80000001). */
static size_t make_section(uint8_t *buf, size_t cap, uint32_t mp)
{
	struct arm64_reg_writer w;
	uint8_t *v;
	long len;

	arm64_vcpu_section_header(buf, mp);
	arm64_reg_writer_init(&w, buf + ARM64_VCPU_SECTION_HDR, cap - ARM64_VCPU_SECTION_HDR);
	cr_assert_not_null(arm64_reg_writer_add(&w, arm64_core_reg_id(ARM64_CORE_PC, 8)));
	v = arm64_reg_writer_add(&w, arm64_mpidr_reg_id());
	cr_assert_not_null(v);
	v[0] = 1, v[3] = 0x80;
	len = arm64_reg_writer_finish(&w);
	cr_assert_gt(len, 0);
	return ARM64_VCPU_SECTION_HDR + (size_t)len;
}

Test(arm64_vcpu_section, a_psci_off_vcpu_keeps_its_power_state)
{
	uint8_t sec[64];
	const uint8_t *rec;
	size_t rec_len, len = make_section(sec, sizeof(sec), ARM64_MP_STOPPED);
	uint64_t mpidr = 0;
	uint32_t mp = 99;

	cr_assert_eq(arm64_vcpu_section_check(sec, len, &mp, &rec, &rec_len, &mpidr, err,
					      sizeof(err)), 0, "%s", err);
	cr_assert_eq(mp, ARM64_MP_STOPPED);
	cr_assert_eq(mpidr, 0x80000001ULL);
	cr_assert_eq(rec, sec + ARM64_VCPU_SECTION_HDR);
	cr_assert_eq(rec_len, len - ARM64_VCPU_SECTION_HDR);
}

static int check(const uint8_t *sec, size_t len)
{
	const uint8_t *rec;
	size_t rec_len;
	uint64_t mpidr;
	uint32_t mp;

	return arm64_vcpu_section_check(sec, len, &mp, &rec, &rec_len, &mpidr, err, sizeof(err));
}

Test(arm64_vcpu_section, a_hostile_section_is_refused)
{
	uint8_t sec[64];
	size_t len = make_section(sec, sizeof(sec), 3);

	cr_assert_eq(check(sec, len), -EINVAL);
	cr_assert(strstr(err, "power state 3"), "%s", err);
	len = make_section(sec, sizeof(sec), ARM64_MP_RUNNABLE);
	sec[5] = 1;
	cr_assert_eq(check(sec, len), -EINVAL);
	sec[5] = 0;
	cr_assert_eq(check(sec, len - 1), -EINVAL);
	cr_assert(strstr(err, "register record"), "%s", err);
	cr_assert_eq(check(sec, 4), -EINVAL);
	/* No MPIDR_EL1: the vCPU it was cannot be told. */
	{
		struct arm64_reg_writer w;
		long l;

		arm64_vcpu_section_header(sec, ARM64_MP_RUNNABLE);
		arm64_reg_writer_init(&w, sec + ARM64_VCPU_SECTION_HDR,
				      sizeof(sec) - ARM64_VCPU_SECTION_HDR);
		cr_assert_not_null(arm64_reg_writer_add(&w, arm64_core_reg_id(ARM64_CORE_PC, 8)));
		l = arm64_reg_writer_finish(&w);
		cr_assert_eq(check(sec, ARM64_VCPU_SECTION_HDR + (size_t)l), -EINVAL);
		cr_assert(strstr(err, "MPIDR_EL1"), "%s", err);
	}
}

Test(arm64_regs, the_counters_are_restored_last)
{
	cr_assert(arm64_reg_restore_last(arm64_sys_reg_id(3, 3, 14, 3, 2)));	/* TIMER_CNT */
	cr_assert(arm64_reg_restore_last(arm64_sys_reg_id(3, 3, 14, 0, 1)));	/* PTIMER_CNT */
	cr_assert(!arm64_reg_restore_last(arm64_sys_reg_id(3, 3, 14, 0, 2)));	/* TIMER_CVAL */
	cr_assert(!arm64_reg_restore_last(arm64_sys_reg_id(3, 3, 14, 3, 1)));	/* TIMER_CTL */
	cr_assert(!arm64_reg_restore_last(arm64_core_reg_id(ARM64_CORE_PC, 8)));
}
