/* Shared between vm.c, vm_boot.c, vm_file.c and the vmm/arch/ sides only. */
#ifndef MVM_VM_INTERNAL_H
#define MVM_VM_INTERNAL_H

#include "vmm/vm.h"

int vm_map_file(const char *path, const uint8_t **data, size_t *len, int *fd,
		char *err, size_t errlen);
int vm_parse_kernel(struct vm *vm, const char *path, char *err, size_t errlen);
/* Every vCPU of @vm through vcpu_init (arch_vcpu_setup): x86 after the
 * boot data, arm64 before the devices (the vGIC needs them). */
int vm_create_vcpus(struct vm *vm, char *err, size_t errlen);
int vm_load_boot(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);

#endif
