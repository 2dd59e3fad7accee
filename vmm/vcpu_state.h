/*
 * One vCPU's architectural state for snapshots, in Firecracker's orders.
 * Save: MP state first (reading it can change LAPIC state), then regs,
 * sregs, xsave, xcrs, debug regs, LAPIC, TSC frequency, CPUID, MSRs, and
 * the vCPU events last. Restore: CPUID, MP state, regs (they clear pending
 * exceptions, so before events), sregs (APIC base, so before LAPIC), xsave,
 * xcrs, debug regs, LAPIC, MSRs (TSC_DEADLINE after TSC), events, then
 * KVM_KVMCLOCK_CTRL. The thin KVM part; decode is pure and unit-tested.
 */
#ifndef MVM_VCPU_STATE_H
#define MVM_VCPU_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/snap_buf.h"

#define VCPU_STATE_VERSION   1
#define VCPU_STATE_MAX_MSRS  1024
#define VCPU_STATE_MAX_CPUID 256
#define VCPU_STATE_MAX_XSAVE (64u << 10)

struct kvm;
struct kvm_vcpu;
struct vcpu_state;

/* Capture @v (paused) and append its serialised form to @w. 0 or -errno. */
int vcpu_state_save(struct kvm *k, struct kvm_vcpu *v, struct snap_w *w);
/* Decode a section; every size checked. 0 or -EBADMSG. Pure. */
int vcpu_state_decode(const uint8_t *p, size_t len, struct vcpu_state **out);
/* Serialise a decoded state again (tests: round trip). */
void vcpu_state_encode(const struct vcpu_state *s, struct snap_w *w);
/* Load @s into @v. @set_cpuid: false for a rollback in place (CPUID is
 * fixed once the vCPU ran). 0 or -errno with the failing step in @err. */
int vcpu_state_apply(struct kvm *k, struct kvm_vcpu *v, const struct vcpu_state *s,
		     bool set_cpuid, char *err, size_t errlen);
void vcpu_state_free(struct vcpu_state *s);

#endif
