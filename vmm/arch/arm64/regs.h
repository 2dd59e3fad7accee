/*
 * The arm64 KVM register interface as plain numbers: how a register id is
 * made (KVM_SET_ONE_REG / KVM_GET_REG_LIST ids: architecture, size, class,
 * index), where the core registers sit in KVM's struct kvm_regs, the boot
 * register values of the arm64 boot protocol, the vCPU features, and the
 * KVM_IRQ_LINE number of an SPI. Pure and architecture-neutral, so unit
 * tests run on any host; the aarch64 build compares every number with the
 * cross toolchain's <asm/kvm.h> (tests/build/arm64-layout-check.c).
 */
#ifndef MVM_ARM64_REGS_H
#define MVM_ARM64_REGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Id fields (Linux Documentation/virt/kvm/api.rst, KVM_SET_ONE_REG). */
#define ARM64_REG_ARCH        0x6000000000000000ULL	/* KVM_REG_ARM64 */
#define ARM64_REG_ARCH_MASK   0xff00000000000000ULL
#define ARM64_REG_SIZE_SHIFT  52
#define ARM64_REG_SIZE_MASK   0x00f0000000000000ULL
#define ARM64_REG_SIZE_U32    (2ULL << ARM64_REG_SIZE_SHIFT)
#define ARM64_REG_SIZE_U64    (3ULL << ARM64_REG_SIZE_SHIFT)
#define ARM64_REG_SIZE_U128   (4ULL << ARM64_REG_SIZE_SHIFT)
#define ARM64_REG_SIZE_U2048  (8ULL << ARM64_REG_SIZE_SHIFT)	/* the largest: SVE */
#define ARM64_REG_CLASS_SHIFT 16
#define ARM64_REG_CLASS_MASK  0x000000000fff0000ULL
#define ARM64_REG_CORE        (0x10ULL << ARM64_REG_CLASS_SHIFT)
#define ARM64_REG_DEMUX       (0x11ULL << ARM64_REG_CLASS_SHIFT)
#define ARM64_REG_SYSREG      (0x13ULL << ARM64_REG_CLASS_SHIFT)
#define ARM64_REG_FW          (0x14ULL << ARM64_REG_CLASS_SHIFT)
#define ARM64_REG_SVE         (0x15ULL << ARM64_REG_CLASS_SHIFT)
#define ARM64_REG_FW_FEAT     (0x16ULL << ARM64_REG_CLASS_SHIFT)
#define ARM64_REG_MAX_BYTES   256	/* U2048 */

/* Byte offsets in struct kvm_regs: user_pt_regs (x0..x30, sp_el0, pc,
 * pstate), sp_el1, elr_el1, spsr[5], then the 16-byte aligned FP/SIMD
 * state (v0..v31 of 128 bits, fpsr, fpcr). */
#define ARM64_CORE_X(n)       ((size_t)(n) * 8)	/* n = 0..30 */
#define ARM64_CORE_SP         (31 * 8)
#define ARM64_CORE_PC         (32 * 8)
#define ARM64_CORE_PSTATE     (33 * 8)
#define ARM64_CORE_SP_EL1     (34 * 8)
#define ARM64_CORE_ELR_EL1    (35 * 8)
#define ARM64_CORE_SPSR(n)    (36 * 8 + (size_t)(n) * 8)	/* n = 0..4 */
#define ARM64_CORE_NR_SPSR    5
#define ARM64_CORE_VREG(n)    (42 * 8 + (size_t)(n) * 16)	/* n = 0..31 */
#define ARM64_CORE_FPSR       (ARM64_CORE_VREG(32))
#define ARM64_CORE_FPCR       (ARM64_CORE_FPSR + 4)
#define ARM64_CORE_SIZE       (ARM64_CORE_FPCR + 4 + 8)	/* sizeof(struct kvm_regs) */

/* PSTATE at entry (booting.rst): EL1 with SP_EL1 (EL1h), D, A, I, F masked. */
#define ARM64_PSTATE_EL1H     0x5ULL
#define ARM64_PSTATE_DAIF     (0x200ULL | 0x100ULL | 0x80ULL | 0x40ULL)
#define ARM64_BOOT_PSTATE     (ARM64_PSTATE_EL1H | ARM64_PSTATE_DAIF)

/* KVM_ARM_VCPU_INIT feature bits (features[0]). */
#define ARM64_FEAT_POWER_OFF  0
#define ARM64_FEAT_PSCI_0_2   2

/* Id of the core register at byte @off of struct kvm_regs, @bytes wide
 * (4, 8 or 16). The index is @off in 32-bit words. */
uint64_t arm64_core_reg_id(size_t off, unsigned bytes);
/* Id of system register (op0, op1, CRn, CRm, op2), 64 bits wide. */
uint64_t arm64_sys_reg_id(unsigned op0, unsigned op1, unsigned crn, unsigned crm,
			  unsigned op2);
/* MPIDR_EL1: S3_0_C0_C0_5. */
uint64_t arm64_mpidr_reg_id(void);
/* Bytes of register @id's value (from its size field: 1 << field). */
unsigned arm64_reg_bytes(uint64_t id);

/*
 * Is @id a register a saved vCPU may carry? The arm64 architecture field,
 * a size of at most ARM64_REG_MAX_BYTES, a class KVM lists (core, demux,
 * sysreg, firmware, SVE, firmware features), and for a core register an
 * index inside struct kvm_regs at the width that field has (16 bytes for
 * v0..v31, 4 for fpsr/fpcr, 8 for the rest). The reason in @err when not.
 */
bool arm64_reg_id_valid(uint64_t id, char *err, size_t errlen);

/*
 * Is @id a counter KVM_SET_ONE_REG turns into the VM's counter offset
 * (KVM_REG_ARM_TIMER_CNT, the virtual counter; KVM_REG_ARM_PTIMER_CNT, the
 * physical one where KVM lists it)? Restored after every other register
 * of its vCPU: writing one moves the counter of every vCPU of the VM, so
 * it goes last, once the timers' compare values and controls are in
 * place, and the guest's clock resumes where it was saved.
 */
bool arm64_reg_restore_last(uint64_t id);

struct arm64_reg_val {
	uint64_t id;
	uint64_t val;
};

#define ARM64_BOOT_REGS 6
/*
 * The boot vCPU's registers per the arm64 boot protocol, in the order they
 * are set: PSTATE (EL1h, DAIF masked), X0 = @dtb (the device tree's guest
 * address), X1 = X2 = X3 = 0 (reserved for future use), PC = @entry. Secondary vCPUs get
 * none: they start powered off and PSCI CPU_ON gives them their entry.
 */
void arm64_boot_regs(uint64_t entry, uint64_t dtb, struct arm64_reg_val out[ARM64_BOOT_REGS]);

/* features[0] for KVM_ARM_VCPU_INIT of vCPU @id: PSCI 0.2, and powered
 * off unless it is the boot vCPU (id 0). */
uint32_t arm64_vcpu_features(int id);

/* KVM_IRQ_LINE's irq field for SPI @spi (device-tree numbering): type SPI
 * in bits 24..27, the INTID in bits 0..15. */
uint32_t arm64_irq_line_spi(uint32_t spi);

#endif
