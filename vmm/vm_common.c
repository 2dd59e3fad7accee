/*
 * The parts of struct vm that devices reach and that do not depend on the
 * architecture: the device list (vm_add_device) and the VM's clock
 * (vm_elapsed). x86's vm_create (vmm/vm.c) and the arm64 VM
 * (vmm/arch/arm64/kvm/) both link this; where a virtio-mmio slot lies is
 * each architecture's own (vm_alloc_virtio_slot: vm.c, and
 * vmm/arch/arm64/kvm/devhost_arm64.c).
 */
#include <errno.h>

#include "common/mono_time.h"
#include "vmm/vm.h"

double vm_elapsed(const struct vm *vm)
{
	return mono_now_s() - vm->t0;
}

int vm_add_device(struct vm *vm, const struct vm_device_ops *ops, void *dev)
{
	if (vm->nr_devices == VM_MAX_DEVICES)
		return -ENOSPC;
	vm->devices[vm->nr_devices].ops = ops;
	vm->devices[vm->nr_devices++].dev = dev;
	return 0;
}
