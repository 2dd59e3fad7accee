/*
 * arm64 register ids, core register offsets, boot registers, vCPU
 * features, SPI numbers and the vGIC's attributes (vmm/arch/arm64/regs.c,
 * gic.c). Run natively and, cross-built, under qemu-aarch64 (make
 * test-arm64), where tests/build/arm64-layout-check.c has also compared
 * every constant with the aarch64 <asm/kvm.h>.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "vmm/arch/arm64/gic.h"
#include "vmm/arch/arm64/regs.h"

static char err[256];

Test(arm64_regs, core_ids_are_word_indexes_with_their_width)
{
	/* api.rst's examples: pc is core index 0x40, pstate 0x42, v0 0x54, fpsr 0xd4. */
	cr_assert_eq(arm64_core_reg_id(ARM64_CORE_PC, 8), 0x6030000000100040ULL);
	cr_assert_eq(arm64_core_reg_id(ARM64_CORE_PSTATE, 8), 0x6030000000100042ULL);
	cr_assert_eq(arm64_core_reg_id(ARM64_CORE_X(0), 8), 0x6030000000100000ULL);
	cr_assert_eq(arm64_core_reg_id(ARM64_CORE_VREG(0), 16), 0x6040000000100054ULL);
	cr_assert_eq(arm64_core_reg_id(ARM64_CORE_FPSR, 4), 0x60200000001000d4ULL);
	cr_assert_eq(arm64_reg_bytes(arm64_core_reg_id(ARM64_CORE_VREG(31), 16)), 16);
	cr_assert_eq(arm64_reg_bytes(arm64_core_reg_id(ARM64_CORE_FPCR, 4)), 4);
}

Test(arm64_regs, mpidr_is_the_sysreg_id_kvm_lists)
{
	/* S3_0_C0_C0_5: op0 3 (bits 15:14), op2 5. */
	cr_assert_eq(arm64_mpidr_reg_id(), 0x603000000013c005ULL);
	cr_assert_eq(arm64_sys_reg_id(3, 3, 14, 0, 2), 0x603000000013df02ULL);	/* CNTVCT */
}

Test(arm64_regs, every_core_register_is_valid_and_nothing_between)
{
	int valid = 0;

	for (size_t off = 0; off < ARM64_CORE_SIZE + 16; off += 4)
		for (unsigned b = 4; b <= 16; b *= 2)
			valid += arm64_reg_id_valid(arm64_core_reg_id(off, b), err, sizeof(err));
	/* x0..x30, sp, pc, pstate, sp_el1, elr_el1, spsr[5]; v0..v31; fpsr, fpcr. */
	cr_assert_eq(valid, 31 + 3 + 2 + 5 + 32 + 2);
	cr_assert(!arm64_reg_id_valid(arm64_core_reg_id(ARM64_CORE_PC + 4, 8), err, sizeof(err)));
	cr_assert(strstr(err, "no 8-byte register"), "%s", err);
	/* Nor the padding before v0, nor the reserved words after fpcr. */
	cr_assert(!arm64_reg_id_valid(arm64_core_reg_id(ARM64_CORE_SPSR(5), 8), err, sizeof(err)));
	cr_assert(!arm64_reg_id_valid(arm64_core_reg_id(ARM64_CORE_FPCR + 4, 4), err, sizeof(err)));
}

Test(arm64_regs, hostile_ids_are_refused_with_a_reason)
{
	uint64_t pc = arm64_core_reg_id(ARM64_CORE_PC, 8);

	cr_assert(!arm64_reg_id_valid(pc ^ 0x4000000000000000ULL, err, sizeof(err)));
	cr_assert(strstr(err, "not an arm64 register"), "%s", err);
	cr_assert(!arm64_reg_id_valid(ARM64_REG_ARCH | (9ULL << ARM64_REG_SIZE_SHIFT) |
				      ARM64_REG_SYSREG, err, sizeof(err)));
	cr_assert(strstr(err, "over 2048 bits"), "%s", err);
	cr_assert(!arm64_reg_id_valid(ARM64_REG_ARCH | ARM64_REG_SIZE_U64 |
				      (0x12ULL << ARM64_REG_CLASS_SHIFT), err, sizeof(err)));
	cr_assert(strstr(err, "class 0x12"), "%s", err);
	/* A core id with stray bits between class and size. */
	cr_assert(!arm64_reg_id_valid(pc | (1ULL << 40), err, sizeof(err)));
	cr_assert(arm64_reg_id_valid(arm64_mpidr_reg_id(), err, sizeof(err)));
	cr_assert(arm64_reg_id_valid(ARM64_REG_ARCH | ARM64_REG_SIZE_U64 | ARM64_REG_FW, err,
				     sizeof(err)));
}

Test(arm64_regs, boot_registers_follow_the_boot_protocol)
{
	struct arm64_reg_val r[ARM64_BOOT_REGS];

	arm64_boot_regs(0x80200000ULL, 0xbfe00000ULL, r);
	cr_assert_eq(r[0].id, arm64_core_reg_id(ARM64_CORE_PSTATE, 8));
	cr_assert_eq(r[0].val, 0x3c5);	/* EL1h, D A I F masked */
	cr_assert_eq(r[1].id, arm64_core_reg_id(ARM64_CORE_X(0), 8));
	cr_assert_eq(r[1].val, 0xbfe00000ULL);
	for (int i = 2; i <= 4; i++) {
		cr_assert_eq(r[i].id, arm64_core_reg_id(ARM64_CORE_X(i - 1), 8));
		cr_assert_eq(r[i].val, 0);
	}
	cr_assert_eq(r[5].id, arm64_core_reg_id(ARM64_CORE_PC, 8));
	cr_assert_eq(r[5].val, 0x80200000ULL);
}

Test(arm64_regs, secondaries_start_powered_off_all_with_psci_0_2)
{
	cr_assert_eq(arm64_vcpu_features(0), 1U << 2);
	cr_assert_eq(arm64_vcpu_features(1), 1U << 2 | 1U);
	cr_assert_eq(arm64_vcpu_features(63), 1U << 2 | 1U);
}

Test(arm64_regs, irq_line_of_an_spi_is_type_spi_and_its_intid)
{
	cr_assert_eq(arm64_irq_line_spi(ARM64_SPI_UART), 0x01000000U | 33);
	cr_assert_eq(arm64_irq_line_spi(ARM64_SPI_VIRTIO_BASE + 31), 0x01000000U | (16 + 31 + 32));
}

Test(arm64_gic, v3_attributes_are_the_layouts_addresses_then_256_irqs)
{
	struct arm64_gic_attr a[ARM64_GIC_ATTRS];

	cr_assert_eq(arm64_gic_attrs(ARM64_GIC_V3, 64, a, err, sizeof(err)), 3, "%s", err);
	cr_assert_eq(a[0].group, ARM64_VGIC_GRP_ADDR);
	cr_assert_eq(a[0].attr, ARM64_VGIC_V3_ADDR_DIST);
	cr_assert_eq(a[0].value, ARM64_GIC_DIST_BASE);
	cr_assert_eq(a[1].attr, ARM64_VGIC_V3_ADDR_REDIST);
	cr_assert_eq(a[1].value, ARM64_GICV3_REDIST_BASE);
	/* 64 redistributors of 128 KiB end below the UART. */
	cr_assert_leq(a[1].value + 64 * ARM64_GICV3_REDIST_SIZE, ARM64_UART_BASE);
	cr_assert_eq(a[2].group, ARM64_VGIC_GRP_NR_IRQS);
	cr_assert_eq(a[2].value, 256);
}

Test(arm64_gic, v2_attributes_and_its_eight_cpu_limit)
{
	struct arm64_gic_attr a[ARM64_GIC_ATTRS];

	cr_assert_eq(arm64_gic_attrs(ARM64_GIC_V2, 8, a, err, sizeof(err)), 3, "%s", err);
	cr_assert_eq(a[0].attr, ARM64_VGIC_V2_ADDR_DIST);
	cr_assert_eq(a[1].attr, ARM64_VGIC_V2_ADDR_CPU);
	cr_assert_eq(a[1].value, ARM64_GICV2_CPU_BASE);
	cr_assert_eq(arm64_gic_attrs(ARM64_GIC_V2, 9, a, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "GICv2 serves 1 to 8 vCPUs, not 9"), "%s", err);
	cr_assert_eq(arm64_gic_attrs(ARM64_GIC_V3, 65, a, err, sizeof(err)), -EINVAL);
	cr_assert_eq(arm64_gic_attrs(ARM64_GIC_V3, 0, a, err, sizeof(err)), -EINVAL);
	cr_assert_eq(arm64_gic_attrs((enum arm64_gic_version)4, 1, a, err, sizeof(err)), -EINVAL);
}
