/* The main thread's x86 KVM ioctls (sc_main_arch_ioctls, seccomp_table.h). */
#include <linux/kvm.h>

#include "vmm/confine/seccomp_table.h"

static const unsigned long ioctls[] = {
	KVM_GET_MSR_INDEX_LIST,
	/* VM and vCPU state: checkpoint, rollback, snapshot (vCPUs paused). */
	KVM_GET_CLOCK, KVM_SET_CLOCK, KVM_GET_IRQCHIP, KVM_SET_IRQCHIP, KVM_GET_PIT2,
	KVM_SET_PIT2, KVM_GET_REGS, KVM_SET_REGS, KVM_GET_SREGS, KVM_SET_SREGS,
	KVM_GET_MP_STATE, KVM_SET_MP_STATE, KVM_GET_XSAVE, KVM_GET_XSAVE2, KVM_SET_XSAVE,
	KVM_GET_XCRS, KVM_SET_XCRS, KVM_GET_DEBUGREGS, KVM_SET_DEBUGREGS, KVM_GET_LAPIC,
	KVM_SET_LAPIC, KVM_GET_MSRS, KVM_SET_MSRS, KVM_GET_TSC_KHZ, KVM_SET_TSC_KHZ,
	KVM_GET_VCPU_EVENTS, KVM_SET_VCPU_EVENTS, KVM_GET_CPUID2, KVM_SET_CPUID2,
	KVM_KVMCLOCK_CTRL,
};

const struct sc_ioctls sc_main_arch_ioctls = { ioctls, sizeof(ioctls) / sizeof(ioctls[0]) };
