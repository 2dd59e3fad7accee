/*
 * Cross-built only (make test-arm64, under qemu-aarch64): the aarch64
 * <asm/kvm.h> agrees with regs.h's id builders at run time
 * (arm64_layout_check), and the KVM call wrappers of vmm/arch/arm64/kvm/
 * refuse a hostile register record before any ioctl and report a failing
 * ioctl by name. No /dev/kvm here: file descriptor -1 stands for a vCPU,
 * so every ioctl that is reached fails (EBADF on an arm64 kernel; ENOSYS
 * under qemu-aarch64, which passes no KVM ioctl through).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "vmm/arch/arm64/kvm/arm64_kvm.h"
#include "vmm/arch/arm64/reg_record.h"
#include "vmm/arch/arm64/regs.h"

int arm64_layout_check(void);

static char err[256];

Test(arm64_abi, id_builders_match_the_kernel_macros)
{
	cr_assert_eq(arm64_layout_check(), 0, "check %d differs", arm64_layout_check());
}

Test(arm64_kvm_calls, a_hostile_record_is_refused_before_any_ioctl)
{
	uint8_t rec[64];
	struct arm64_reg_writer w;
	long len;

	arm64_reg_writer_init(&w, rec, sizeof(rec));
	cr_assert_not_null(arm64_reg_writer_add(&w, arm64_core_reg_id(ARM64_CORE_PC, 8)));
	len = arm64_reg_writer_finish(&w);
	cr_assert_gt(len, 0);
	rec[4] = 9;	/* version 9 */
	cr_assert_eq(arm64_vcpu_regs_restore(-1, rec, (size_t)len, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "version 9"), "%s", err);
	/* The same record, well-formed: now the vCPU is asked for its list. */
	rec[4] = 1;
	cr_assert_lt(arm64_vcpu_regs_restore(-1, rec, (size_t)len, err, sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_GET_REG_LIST"), "%s", err);
}

Test(arm64_kvm_calls, failing_ioctls_are_named)
{
	struct arm64_vgic g;
	uint8_t *rec = NULL;
	size_t len = 0;
	uint64_t mpidr;

	cr_assert_lt(arm64_vcpu_init(-1, -1, 0, err, sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_ARM_PREFERRED_TARGET"), "%s", err);
	cr_assert_lt(arm64_vcpu_boot_regs(-1, 0x80000000ULL, 0xbfe00000ULL, err, sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_SET_ONE_REG 0x6030000000100042"), "%s", err);	/* pstate */
	cr_assert_lt(arm64_vcpu_mpidr(-1, &mpidr, err, sizeof(err)), 0);
	cr_assert(strstr(err, "MPIDR_EL1"), "%s", err);
	cr_assert_lt(arm64_vcpu_regs_save(-1, &rec, &len, err, sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_GET_REG_LIST"), "%s", err);
	cr_assert_null(rec);
	cr_assert_lt(arm64_gic_create(-1, 2, &g, err, sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_CREATE_DEVICE: GICv3: "), "%s", err);
	cr_assert(strstr(err, "; GICv2: "), "%s", err);
	cr_assert_lt(arm64_gic_create(-1, 9, &g, err, sizeof(err)), 0);
	cr_assert(strstr(err, "9 vCPUs are too many for GICv2"), "%s", err);
}

Test(arm64_kvm_calls, gic_state_needs_a_gicv3_and_names_its_ioctls)
{
	static const uint64_t mpidr[2] = { 0x80000000ULL, 0x80000001ULL };
	struct arm64_vgic v2 = { .fd = -1, .version = ARM64_GIC_V2 };
	struct arm64_vgic v3 = { .fd = -1, .version = ARM64_GIC_V3 };
	uint8_t *rec = NULL, hostile[8] = { 0 };
	size_t len = 0;
	uint32_t mp;

	cr_assert_eq(arm64_gic_state_save(&v2, 2, mpidr, &rec, &len, err, sizeof(err)), -ENOTSUP);
	cr_assert(strstr(err, "GICv2"), "%s", err);
	cr_assert_lt(arm64_gic_state_save(&v3, 2, mpidr, &rec, &len, err, sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_GET_DEVICE_ATTR group 3"), "%s", err);	/* NR_IRQS */
	cr_assert_null(rec);
	/* A restore reads this host's plan first; nothing is written before
	 * the record matched it (here: the plan cannot be read). */
	cr_assert_lt(arm64_gic_state_restore(&v3, 2, mpidr, hostile, sizeof(hostile), err,
					     sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_GET_DEVICE_ATTR"), "%s", err);
	cr_assert_lt(arm64_vcpu_mp_state(-1, &mp, err, sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_GET_MP_STATE"), "%s", err);
	cr_assert_lt(arm64_vcpu_set_mp_state(-1, 5, err, sizeof(err)), 0);
	cr_assert(strstr(err, "KVM_SET_MP_STATE"), "%s", err);
}
