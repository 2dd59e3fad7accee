/*
 * Compiled for aarch64 only (make arm64-check): vmm/arch/arm64/layout.h
 * agrees with the arm64 KVM ABI in the cross toolchain's <asm/kvm.h>. The
 * GIC region sizes there are what KVM maps at the addresses we give it; a
 * region sized otherwise in the device tree would tell the guest a lie.
 */
#ifndef __aarch64__
#error "arm64-layout-check.c is built by make arm64-check, for aarch64"
#endif
#include <asm/kvm.h>
#include <linux/kvm.h>
#include <stddef.h>

#include "vmm/arch/arm64/gic_state.h"
#include "vmm/arch/arm64/layout.h"
#include "vmm/arch/arm64/regs.h"

#ifndef SZ_64K
#define SZ_64K 0x10000	/* the uapi header uses it without defining it */
#endif

_Static_assert(ARM64_GICV3_DIST_SIZE == KVM_VGIC_V3_DIST_SIZE, "GICv3 distributor size");
_Static_assert(ARM64_GICV3_REDIST_SIZE == KVM_VGIC_V3_REDIST_SIZE, "GICv3 redistributor size");
_Static_assert(ARM64_GICV2_DIST_SIZE == KVM_VGIC_V2_DIST_SIZE, "GICv2 distributor size");
_Static_assert(ARM64_GICV2_CPU_SIZE == KVM_VGIC_V2_CPU_SIZE, "GICv2 CPU interface size");
/* KVM_IRQ_LINE's SPI numbers are INTIDs: at least 32 (VGIC_NR_PRIVATE_IRQS). */
_Static_assert(ARM64_SPI_INTID(0) == 32, "SPI 0 is INTID 32");

/* regs.h: the core registers' offsets in struct kvm_regs, the id fields,
 * the boot PSTATE and the vCPU feature bits. */
_Static_assert(ARM64_CORE_X(30) == offsetof(struct kvm_regs, regs.regs[30]), "x30");
_Static_assert(ARM64_CORE_SP == offsetof(struct kvm_regs, regs.sp), "sp_el0");
_Static_assert(ARM64_CORE_PC == offsetof(struct kvm_regs, regs.pc), "pc");
_Static_assert(ARM64_CORE_PSTATE == offsetof(struct kvm_regs, regs.pstate), "pstate");
_Static_assert(ARM64_CORE_SP_EL1 == offsetof(struct kvm_regs, sp_el1), "sp_el1");
_Static_assert(ARM64_CORE_ELR_EL1 == offsetof(struct kvm_regs, elr_el1), "elr_el1");
_Static_assert(ARM64_CORE_SPSR(4) == offsetof(struct kvm_regs, spsr[4]), "spsr");
_Static_assert(ARM64_CORE_NR_SPSR == KVM_NR_SPSR, "spsr count");
_Static_assert(ARM64_CORE_VREG(0) == offsetof(struct kvm_regs, fp_regs.vregs[0]), "v0");
_Static_assert(ARM64_CORE_VREG(31) == offsetof(struct kvm_regs, fp_regs.vregs[31]), "v31");
_Static_assert(ARM64_CORE_FPSR == offsetof(struct kvm_regs, fp_regs.fpsr), "fpsr");
_Static_assert(ARM64_CORE_FPCR == offsetof(struct kvm_regs, fp_regs.fpcr), "fpcr");
_Static_assert(ARM64_CORE_SIZE == sizeof(struct kvm_regs), "sizeof(struct kvm_regs)");
_Static_assert(ARM64_REG_ARCH == KVM_REG_ARM64 && ARM64_REG_ARCH_MASK == KVM_REG_ARCH_MASK &&
	       ARM64_REG_SIZE_U32 == KVM_REG_SIZE_U32 && ARM64_REG_SIZE_U64 == KVM_REG_SIZE_U64 &&
	       ARM64_REG_SIZE_U128 == KVM_REG_SIZE_U128 &&
	       ARM64_REG_SIZE_U2048 == KVM_REG_SIZE_U2048 &&
	       ARM64_REG_SIZE_MASK == KVM_REG_SIZE_MASK &&
	       ARM64_REG_SIZE_SHIFT == KVM_REG_SIZE_SHIFT, "register id fields");
_Static_assert(ARM64_REG_CLASS_MASK == KVM_REG_ARM_COPROC_MASK &&
	       ARM64_REG_CORE == KVM_REG_ARM_CORE && ARM64_REG_DEMUX == KVM_REG_ARM_DEMUX &&
	       ARM64_REG_SYSREG == KVM_REG_ARM64_SYSREG && ARM64_REG_FW == KVM_REG_ARM_FW &&
	       ARM64_REG_SVE == KVM_REG_ARM64_SVE &&
	       ARM64_REG_FW_FEAT == KVM_REG_ARM_FW_FEAT_BMAP, "register classes");
_Static_assert(ARM64_BOOT_PSTATE == (PSR_MODE_EL1h | PSR_D_BIT | PSR_A_BIT | PSR_I_BIT |
				     PSR_F_BIT), "boot PSTATE");
_Static_assert(ARM64_FEAT_POWER_OFF == KVM_ARM_VCPU_POWER_OFF &&
	       ARM64_FEAT_PSCI_0_2 == KVM_ARM_VCPU_PSCI_0_2, "vCPU features");

/* The id builders against KVM's macros (not constant expressions: run by
 * make test-arm64 through arm64_layout_check()). */
int arm64_layout_check(void);
int arm64_layout_check(void)
{
	if (arm64_core_reg_id(ARM64_CORE_PC, 8) !=
	    (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | KVM_REG_ARM_CORE_REG(regs.pc)))
		return 1;
	if (arm64_core_reg_id(ARM64_CORE_VREG(3), 16) !=
	    (KVM_REG_ARM64 | KVM_REG_SIZE_U128 | KVM_REG_ARM_CORE |
	     KVM_REG_ARM_CORE_REG(fp_regs.vregs[3])))
		return 2;
	if (arm64_core_reg_id(ARM64_CORE_FPCR, 4) !=
	    (KVM_REG_ARM64 | KVM_REG_SIZE_U32 | KVM_REG_ARM_CORE |
	     KVM_REG_ARM_CORE_REG(fp_regs.fpcr)))
		return 3;
	if (arm64_mpidr_reg_id() != ARM64_SYS_REG(3, 0, 0, 0, 5))
		return 4;
	if (arm64_irq_line_spi(ARM64_SPI_UART) !=
	    (KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT | ARM64_SPI_INTID(ARM64_SPI_UART)))
		return 5;
	/* The counters restored last (regs.h) and the vGIC's CPU interface
	 * register ids (gic_state.h) are the kernel's. */
	if (!arm64_reg_restore_last(KVM_REG_ARM_TIMER_CNT) ||
	    !arm64_reg_restore_last(KVM_REG_ARM_PTIMER_CNT) ||
	    arm64_reg_restore_last(KVM_REG_ARM_TIMER_CVAL) ||
	    arm64_reg_restore_last(KVM_REG_ARM_TIMER_CTL))
		return 6;
	if (arm64_gic_icc_ctlr_attr() !=
	    (ARM64_SYS_REG(3, 0, 12, 12, 4) & KVM_DEV_ARM_VGIC_SYSREG_INSTR_MASK))
		return 7;
	return 0;
}
