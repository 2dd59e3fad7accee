/*
 * The VM's device list, which devices join through vm_add_device(). Neutral:
 * x86's vm_create (vmm/vm.c) and the arm64 VM (vmm/arch/arm64/kvm/) both
 * link it; where a virtio-mmio slot lies is each architecture's own
 * (vm_alloc_virtio_slot: vm.c, and vmm/arch/arm64/kvm/devhost_arm64.c).
 */
#include <errno.h>

#include "vmm/vm.h"

int vm_add_device(struct vm *vm, const struct vm_device_ops *ops, void *dev)
{
	if (vm->nr_devices == VM_MAX_DEVICES)
		return -ENOSPC;
	vm->devices[vm->nr_devices].ops = ops;
	vm->devices[vm->nr_devices++].dev = dev;
	return 0;
}
