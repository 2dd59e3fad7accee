/* Shared between vm.c and vm_boot.c only. */
#ifndef MVM_VM_INTERNAL_H
#define MVM_VM_INTERNAL_H

#include "vmm/vm.h"

int vm_map_file(const char *path, const uint8_t **data, size_t *len, int *fd,
		char *err, size_t errlen);
int vm_parse_kernel(struct vm *vm, const char *path, char *err, size_t errlen);
int vm_load_boot(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);

#endif
