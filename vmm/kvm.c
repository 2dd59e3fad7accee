/* Thin KVM layer: /dev/kvm, memory slots, vCPU fds; neutral (the x86 VM set-up
 * is vmm/arch/x86/kvm_x86.c, arm64's vmm/arch/arm64/kvm/). */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/arch/arch.h"
#include "vmm/kvm.h"
#include "vmm/vm_state.h"

int kvm_open(struct kvm *k, char *err, size_t errlen)
{
	int ver, ret;

	memset(k, 0, sizeof(*k));
	k->vm_fd = -1;
	k->sys_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (k->sys_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open /dev/kvm: %s%s", strerror(errno),
			 errno == ENOENT ? " (KVM not available on this machine)" :
			 errno == EACCES ? " (add yourself to the kvm group)" : "");
		return ret;
	}
	/* KVM PVM (software virtualization without vmx/svm) answers the same
	 * API but runs only kernels built as PVM guests: ours would stop at its
	 * first instructions with an internal error nobody could read. */
	if (access("/sys/module/kvm_pvm", F_OK) == 0) {
		snprintf(err, errlen, "/dev/kvm here is KVM PVM, which runs only PVM-built guest "
			 "kernels; mvm needs hardware KVM (vmx/svm), or the nested box of "
			 "tests/nested/ (make test and make demo use it by themselves)");
		ret = -ENOTSUP;
		goto fail;
	}
	ver = ioctl(k->sys_fd, KVM_GET_API_VERSION, 0);
	if (ver != KVM_API_VERSION) {
		snprintf(err, errlen, "KVM API version %d, need %d", ver, KVM_API_VERSION);
		ret = -ENOTSUP;
		goto fail;
	}
	ret = ioctl(k->sys_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ret <= 0) {
		snprintf(err, errlen, "KVM_GET_VCPU_MMAP_SIZE failed");
		ret = -EINVAL;
		goto fail;
	}
	k->run_size = (size_t)ret;
	/* The architecture's capabilities (x86: and its CPUID), arch.h. */
	ret = arch_kvm_check(k, err, errlen);
	if (ret)
		goto fail;
	return 0;
fail:
	kvm_close(k);
	return ret;
}

void kvm_close(struct kvm *k)
{
	if (k->vm_fd >= 0)
		close(k->vm_fd);
	if (k->sys_fd >= 0)
		close(k->sys_fd);
	free(k->cpuid);
	k->cpuid = NULL;
	k->vm_fd = k->sys_fd = -1;
}

int kvm_set_memory(struct kvm *k, uint32_t slot, uint64_t gpa, uint64_t size,
		   void *host, bool log_dirty)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot,
		.flags = log_dirty ? KVM_MEM_LOG_DIRTY_PAGES : 0,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)host,
	};

	return ioctl(k->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0 ? -errno : 0;
}

int kvm_vcpu_create(struct kvm *k, int id, struct kvm_vcpu *v)
{
	void *run;

	v->id = id;
	v->fd = ioctl(k->vm_fd, KVM_CREATE_VCPU, id);
	if (v->fd < 0)
		return -errno;
	run = mmap(NULL, k->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (run == MAP_FAILED) {
		close(v->fd);
		v->fd = -1;
		return -ENOMEM;
	}
	v->run = run;
	return 0;
}

void kvm_vcpu_destroy(struct kvm *k, struct kvm_vcpu *v)
{
	if (v->run)
		munmap(v->run, k->run_size);
	if (v->fd >= 0)
		close(v->fd);
	v->run = NULL;
	v->fd = -1;
}

int kvm_vcpu_run(struct kvm_vcpu *v)
{
	return ioctl(v->fd, KVM_RUN, 0) < 0 ? -errno : 0;
}

void kvm_vcpu_set_immediate_exit(struct kvm_vcpu *v, bool on)
{
	__atomic_store_n(&v->run->immediate_exit, on ? 1 : 0, __ATOMIC_SEQ_CST);
}

/* Dirty-page logging for checkpoints (declared in vmm/vm_state.h). */
int kvm_dirty_log_enable(struct kvm *k, uint32_t slot, uint64_t gpa, uint64_t size, void *host)
{
	return kvm_set_memory(k, slot, gpa, size, host, true);
}

int kvm_dirty_log_get(struct kvm *k, uint32_t slot, uint64_t *bitmap)
{
	struct kvm_dirty_log l = { .slot = slot, .dirty_bitmap = bitmap };

	return ioctl(k->vm_fd, KVM_GET_DIRTY_LOG, &l) < 0 ? -errno : 0;
}
