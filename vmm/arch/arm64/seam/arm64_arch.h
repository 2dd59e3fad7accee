/*
 * What the arm64 side of the seam keeps beside struct vm (vm->arch): the
 * vGIC, the slots the device tree describes, the vCPUs' MPIDRs, the parsed
 * Image, the machine and where its boot images went. Shared by
 * vm_arm64_seam.c (which makes it) and snap_arm64.c (snapshots: the vGIC
 * and the MPIDRs its redistributors are addressed by). aarch64 mvm only.
 */
#ifndef MVM_ARM64_ARCH_H
#define MVM_ARM64_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/boot.h"
#include "vmm/arch/arm64/image.h"
#include "vmm/arch/arm64/kvm/arm64_kvm.h"
#include "vmm/arch/arm64/machine.h"
#include "vmm/arch/arm64/virtio_slots.h"
#include "vmm/vm.h"

struct arm64_arch {
	struct arm64_vgic gic;
	struct arm64_virtio_slots slots;
	uint64_t mpidr[ARM64_MAX_CPUS];	/* as KVM assigned them */
	struct arm64_image img;
	struct arm64_machine m;
	struct arm64_boot_place place;
};

static inline struct arm64_arch *arm64_arch_of(const struct vm *vm)
{
	return vm->arch;
}

/* The VM whose struct kvm @k is (the seam's state calls get only that). */
static inline struct vm *arm64_vm_of_kvm(struct kvm *k)
{
	return (struct vm *)((char *)k - offsetof(struct vm, kvm));
}

#endif
