/*
 * The thin KVM layer: the only code that includes <linux/kvm.h> besides the
 * exit decoder and the vCPU register setup. Every call returns 0 or -errno.
 */
#ifndef MVM_KVM_H
#define MVM_KVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kvm_run;
struct kvm_cpuid2;

struct kvm {
	int sys_fd;		/* /dev/kvm */
	int vm_fd;
	size_t run_size;	/* mmap size of each vCPU's kvm_run */
	struct kvm_cpuid2 *cpuid;	/* KVM_GET_SUPPORTED_CPUID */
	int max_vcpus;
};

struct kvm_vcpu {
	int fd;
	int id;
	struct kvm_run *run;
};

/* Open /dev/kvm, check the API version and every capability mvm uses. */
int kvm_open(struct kvm *k, char *err, size_t errlen);
/* VM with in-kernel irqchip and PIT; TSS and identity map in the MMIO hole. */
int kvm_create_vm(struct kvm *k);
void kvm_close(struct kvm *k);

int kvm_set_memory(struct kvm *k, uint32_t slot, uint64_t gpa, uint64_t size,
		   void *host, bool log_dirty);
int kvm_irq_line(struct kvm *k, uint32_t irq, int level);
int kvm_irqfd(struct kvm *k, int fd, uint32_t gsi);
/* Signal @fd when the guest writes @datamatch (4 bytes) to MMIO @addr. */
int kvm_ioeventfd(struct kvm *k, int fd, uint64_t addr, uint32_t datamatch);

int kvm_vcpu_create(struct kvm *k, int id, struct kvm_vcpu *v);
void kvm_vcpu_destroy(struct kvm *k, struct kvm_vcpu *v);
/* One KVM_RUN; -EINTR when kicked by a signal. */
int kvm_vcpu_run(struct kvm_vcpu *v);
/* Make the next (or current) KVM_RUN return at once. */
void kvm_vcpu_set_immediate_exit(struct kvm_vcpu *v, bool on);

#endif
