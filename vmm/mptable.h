/* Intel MultiProcessor Specification 1.4 tables: how a guest without ACPI finds its CPUs. */
#ifndef MVM_MPTABLE_H
#define MVM_MPTABLE_H

#include "vmm/guest_mem.h"

#define MPTABLE_MAX_CPUS 64

/* Write the floating pointer and config table at BIOS_START for @ncpus. */
int mptable_write(struct guest_mem *m, int ncpus);

#endif
