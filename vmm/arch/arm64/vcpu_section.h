/*
 * An arm64 vCPU's snapshot section (the seam's vcpu_state_*, vmm/arch/arm64/
 * seam/snap_arm64.c): its power state, then its register record
 * (reg_record.h). Pure; a snapshot is hostile, so the check refuses a
 * power state KVM_SET_MP_STATE does not take on arm64 and a record that
 * does not parse whole, before the caller sets anything.
 *
 * Layout, little-endian:
 *   0  u32 power state (KVM_MP_STATE_RUNNABLE, _STOPPED: a PSCI-off vCPU,
 *      _SUSPENDED)
 *   4  u32 zero
 *   8  the register record, to the section's end
 */
#ifndef MVM_ARM64_VCPU_SECTION_H
#define MVM_ARM64_VCPU_SECTION_H

#include <stddef.h>
#include <stdint.h>

#define ARM64_MP_RUNNABLE  0	/* KVM_MP_STATE_RUNNABLE */
#define ARM64_MP_STOPPED   5	/* KVM_MP_STATE_STOPPED */
#define ARM64_MP_SUSPENDED 10	/* KVM_MP_STATE_SUSPENDED */
#define ARM64_VCPU_SECTION_HDR 8

/* The section's first bytes for power state @mp. */
void arm64_vcpu_section_header(uint8_t hdr[ARM64_VCPU_SECTION_HDR], uint32_t mp);
/* Check section @p of @len bytes whole: 0 with the power state in *@mp,
 * the register record in *@rec, *@rec_len (inside @p) and the MPIDR_EL1 it
 * holds in *@mpidr (the caller compares it with the one KVM gave the vCPU:
 * the vGIC addresses each vCPU by it); or -EINVAL (no MPIDR_EL1 among the
 * registers is one) / -E2BIG / -ENOMEM with the reason in @err. */
int arm64_vcpu_section_check(const uint8_t *p, size_t len, uint32_t *mp, const uint8_t **rec,
			     size_t *rec_len, uint64_t *mpidr, char *err, size_t errlen);

#endif
