/*
 * Snapshots on arm64: not yet (issue 31). The KVM state sections that
 * snapshots/vm_snap.c saves and loads (vmm/vcpu_state.h, vmm/vm_state.h)
 * say so instead of saving half a machine: every call fails with
 * -ENOTSUP, so `mvm checkpoint`, `snapshot` and templates fail cleanly.
 * What they will hold: every KVM_GET_REG_LIST register per vCPU (the
 * record exists: vmm/arch/arm64/reg_record.h, kvm/vcpu_arm64.c), its MP
 * state, and the vGIC's device attributes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/arch/arch.h"
#include "vmm/kvm.h"
#include "vmm/vcpu_state.h"
#include "vmm/vm_state.h"

#define NOT_YET "saving and loading KVM state is not supported on arm64 yet"

int vcpu_state_save(struct kvm *k, struct kvm_vcpu *v, struct snap_w *w)
{
	(void)k, (void)v, (void)w;
	return -ENOTSUP;
}

int vcpu_state_decode(const uint8_t *p, size_t len, struct vcpu_state **out)
{
	(void)p, (void)len;
	*out = NULL;
	return -ENOTSUP;
}

int vcpu_state_apply(struct kvm *k, struct kvm_vcpu *v, const struct vcpu_state *s,
		     bool set_cpuid, char *err, size_t errlen)
{
	(void)k, (void)v, (void)s, (void)set_cpuid;
	snprintf(err, errlen, "%s", NOT_YET);
	return -ENOTSUP;
}

void vcpu_state_free(struct vcpu_state *s)
{
	(void)s;
}

int vm_state_save(struct kvm *k, struct snap_w *w)
{
	(void)k, (void)w;
	return -ENOTSUP;
}

int vm_state_decode(const uint8_t *p, size_t len, struct vm_kvm_state **out)
{
	(void)p, (void)len;
	*out = NULL;
	return -ENOTSUP;
}

int vm_state_apply(struct kvm *k, const struct vm_kvm_state *s, char *err, size_t errlen)
{
	(void)k, (void)s;
	snprintf(err, errlen, "%s", NOT_YET);
	return -ENOTSUP;
}

void vm_state_free(struct vm_kvm_state *s)
{
	(void)s;
}

/* No CPU fingerprint yet: a snapshot could not be taken anyway. */
void arch_cpu_identity(const struct kvm *k, char vendor[16], uint64_t *fingerprint)
{
	(void)k;
	memset(vendor, 0, 16);
	strcpy(vendor, "arm64");
	*fingerprint = 0;
}
