/* arm64 KVM register ids, core register offsets, boot values: pure. */
#include <stdio.h>

#include "vmm/arch/arm64/layout.h"
#include "vmm/arch/arm64/regs.h"

uint64_t arm64_core_reg_id(size_t off, unsigned bytes)
{
	uint64_t size = bytes == 16 ? ARM64_REG_SIZE_U128 :
			bytes == 4 ? ARM64_REG_SIZE_U32 : ARM64_REG_SIZE_U64;

	return ARM64_REG_ARCH | size | ARM64_REG_CORE | (uint64_t)(off / 4);
}

uint64_t arm64_sys_reg_id(unsigned op0, unsigned op1, unsigned crn, unsigned crm,
			  unsigned op2)
{
	/* Fields of KVM's ARM64_SYS_REG(): op0 15:14, op1 13:11, CRn 10:7,
	 * CRm 6:3, op2 2:0. */
	return ARM64_REG_ARCH | ARM64_REG_SIZE_U64 | ARM64_REG_SYSREG |
	       (uint64_t)(op0 & 3) << 14 | (uint64_t)(op1 & 7) << 11 |
	       (uint64_t)(crn & 15) << 7 | (uint64_t)(crm & 15) << 3 | (op2 & 7);
}

uint64_t arm64_mpidr_reg_id(void)
{
	return arm64_sys_reg_id(3, 0, 0, 0, 5);
}

bool arm64_reg_restore_last(uint64_t id)
{
	return id == arm64_sys_reg_id(3, 3, 14, 3, 2) ||	/* CNTVCT_EL0: TIMER_CNT */
	       id == arm64_sys_reg_id(3, 3, 14, 0, 1);	/* CNTPCT_EL0: PTIMER_CNT */
}

unsigned arm64_reg_bytes(uint64_t id)
{
	return 1U << ((id & ARM64_REG_SIZE_MASK) >> ARM64_REG_SIZE_SHIFT);
}

/* The width of the core register at byte @off, 0 when @off is inside one. */
static unsigned core_width(uint64_t off)
{
	if (off < ARM64_CORE_SPSR(ARM64_CORE_NR_SPSR))
		return off % 8 ? 0 : 8;
	if (off < ARM64_CORE_VREG(0))
		return 0;	/* padding before the 16-byte aligned FP state */
	if (off < ARM64_CORE_FPSR)
		return (off - ARM64_CORE_VREG(0)) % 16 ? 0 : 16;
	if (off == ARM64_CORE_FPSR || off == ARM64_CORE_FPCR)
		return 4;
	return 0;
}

bool arm64_reg_id_valid(uint64_t id, char *err, size_t errlen)
{
	uint64_t cls = id & ARM64_REG_CLASS_MASK;
	unsigned bytes;

	if ((id & ARM64_REG_ARCH_MASK) != ARM64_REG_ARCH) {
		snprintf(err, errlen, "register 0x%llx is not an arm64 register",
			 (unsigned long long)id);
		return false;
	}
	if ((id & ARM64_REG_SIZE_MASK) > ARM64_REG_SIZE_U2048) {
		snprintf(err, errlen, "register 0x%llx: size field over 2048 bits",
			 (unsigned long long)id);
		return false;
	}
	bytes = arm64_reg_bytes(id);
	if (cls == ARM64_REG_CORE) {
		uint64_t off = (id & 0xffff) * 4;

		/* Bits between the class and the size are zero for core ids. */
		if ((id & ~(ARM64_REG_ARCH_MASK | ARM64_REG_SIZE_MASK | ARM64_REG_CLASS_MASK |
			    0xffffULL)) || off >= ARM64_CORE_SIZE - 8 ||
		    core_width(off) != bytes) {
			snprintf(err, errlen, "core register 0x%llx: no %u-byte register at"
				 " offset %llu", (unsigned long long)id, bytes,
				 (unsigned long long)off);
			return false;
		}
		return true;
	}
	if (cls == ARM64_REG_DEMUX || cls == ARM64_REG_SYSREG || cls == ARM64_REG_FW ||
	    cls == ARM64_REG_SVE || cls == ARM64_REG_FW_FEAT)
		return true;
	snprintf(err, errlen, "register 0x%llx: class 0x%llx is not one KVM lists",
		 (unsigned long long)id, (unsigned long long)(cls >> ARM64_REG_CLASS_SHIFT));
	return false;
}

void arm64_boot_regs(uint64_t entry, uint64_t dtb, struct arm64_reg_val out[ARM64_BOOT_REGS])
{
	/* PSTATE first: KVM's reset value is already EL1h with DAIF masked,
	 * set again so the state never depends on the reset path. */
	out[0] = (struct arm64_reg_val){ arm64_core_reg_id(ARM64_CORE_PSTATE, 8),
					 ARM64_BOOT_PSTATE };
	out[1] = (struct arm64_reg_val){ arm64_core_reg_id(ARM64_CORE_X(0), 8), dtb };
	out[2] = (struct arm64_reg_val){ arm64_core_reg_id(ARM64_CORE_X(1), 8), 0 };
	out[3] = (struct arm64_reg_val){ arm64_core_reg_id(ARM64_CORE_X(2), 8), 0 };
	out[4] = (struct arm64_reg_val){ arm64_core_reg_id(ARM64_CORE_X(3), 8), 0 };
	out[5] = (struct arm64_reg_val){ arm64_core_reg_id(ARM64_CORE_PC, 8), entry };
}

uint32_t arm64_vcpu_features(int id)
{
	uint32_t f = 1U << ARM64_FEAT_PSCI_0_2;

	return id == 0 ? f : f | 1U << ARM64_FEAT_POWER_OFF;
}

uint32_t arm64_irq_line_spi(uint32_t spi)
{
	return 1U << 24 | ((uint32_t)ARM64_SPI_INTID(spi) & 0xffff);
}
