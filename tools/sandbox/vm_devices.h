/* The VM's device assembly (tools/sandbox/vm_devices.c). */
#ifndef MVM_VM_DEVICES_H
#define MVM_VM_DEVICES_H

#include <stddef.h>

#include "vmm/vm.h"

/*
 * vm_config.add_devices for every VMM mvm runs: console UART, reset line,
 * guest port, two virtio consoles (hvc0 stdout, hvc1 stderr), the disks in
 * order (vda, vdb, ...), rng, vsock, net. Order fixes the guest's names.
 * 0, or -errno with @err filled.
 */
int vm_devices_create(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);

#endif
