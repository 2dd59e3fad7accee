/* vCPU set-up (CPUID, MSRs, FPU, LAPIC, registers) and the vCPU thread. */
#ifndef MVM_VCPU_H
#define MVM_VCPU_H

#include <stdbool.h>

#include "common/small_thread.h"
#include "vmm/kernel_image.h"
#include "vmm/kvm.h"

struct vm;

struct vcpu {
	struct kvm_vcpu kv;
	struct vm *vm;
	struct small_thread thread;
	bool started;
};

/* Create vCPU @id and load its initial state (BSP gets the boot registers). */
int vcpu_init(struct vcpu *v, struct vm *vm, int id, int ncpus,
	      const struct kernel_image *k, char *err, size_t errlen);
int vcpu_start(struct vcpu *v);
/* Kick the vCPU out of KVM_RUN and join its thread. */
void vcpu_stop(struct vcpu *v);
void vcpu_destroy(struct vcpu *v);
/* Once per process: the no-op signal used to kick vCPUs. */
void vcpu_signal_setup(void);

#endif
