/*
 * The main thread's arm64 KVM ioctls (sc_main_arch_ioctls,
 * seccomp_table.h): the VM and vCPU state of checkpoint, rollback,
 * snapshot and restore (vCPUs paused; seam/snap_arm64.c): registers
 * through KVM_GET_REG_LIST/KVM_GET_ONE_REG/KVM_SET_ONE_REG, the power
 * state, and the vGIC's device attributes. Compiled for the build host by
 * the seccomp generator: these requests are the generic KVM ones, whose
 * numbers are the same on x86_64 and aarch64 (their structures have one
 * layout on both).
 */
#include <linux/kvm.h>

#include "vmm/confine/seccomp_table.h"

static const unsigned long ioctls[] = {
	KVM_GET_REG_LIST, KVM_GET_ONE_REG, KVM_SET_ONE_REG,
	KVM_GET_MP_STATE, KVM_SET_MP_STATE,
	KVM_GET_DEVICE_ATTR, KVM_SET_DEVICE_ATTR,
};

const struct sc_ioctls sc_main_arch_ioctls = { ioctls, sizeof(ioctls) / sizeof(ioctls[0]) };
