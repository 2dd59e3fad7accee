/* Thin KVM layer: /dev/kvm, the VM fd, memory slots, interrupts, vCPU fds. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/kvm.h"

#define KVM_TSS_ADDR      0xfffbd000UL
#define KVM_IDMAP_ADDR    0xfffbc000ULL
#define CPUID_MAX_ENTRIES 256

static const struct {
	int cap;
	const char *name;
} required_caps[] = {
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
	{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP" },
	{ KVM_CAP_PIT2, "KVM_CAP_PIT2" },
	{ KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR" },
	{ KVM_CAP_SET_IDENTITY_MAP_ADDR, "KVM_CAP_SET_IDENTITY_MAP_ADDR" },
	{ KVM_CAP_IRQFD, "KVM_CAP_IRQFD" },
	{ KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
	{ KVM_CAP_MP_STATE, "KVM_CAP_MP_STATE" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
	{ KVM_CAP_NR_VCPUS, "KVM_CAP_NR_VCPUS" },
};

static int check_caps(struct kvm *k, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(required_caps) / sizeof(required_caps[0]); i++) {
		if (ioctl(k->sys_fd, KVM_CHECK_EXTENSION, required_caps[i].cap) <= 0) {
			snprintf(err, errlen, "KVM lacks required capability %s",
				 required_caps[i].name);
			return -ENOTSUP;
		}
	}
	k->max_vcpus = ioctl(k->sys_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (k->max_vcpus <= 0)
		k->max_vcpus = ioctl(k->sys_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	return 0;
}

/*
 * KVM emulates the TSC-deadline LAPIC timer for every guest with an in-kernel
 * irqchip, but kernels before 6.14 leave it out of KVM_GET_SUPPORTED_CPUID.
 * Without it the guest calibrates its LAPIC timer against the PIT at boot
 * (~100 ms, and far more exits) and reprograms it through MMIO every tick.
 */
static void advertise_tsc_deadline(struct kvm *k)
{
	if (ioctl(k->sys_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_DEADLINE_TIMER) <= 0)
		return;
	for (uint32_t i = 0; i < k->cpuid->nent; i++)
		if (k->cpuid->entries[i].function == 1)
			k->cpuid->entries[i].ecx |= 1U << 24;
}

static int get_cpuid(struct kvm *k, char *err, size_t errlen)
{
	k->cpuid = calloc(1, sizeof(*k->cpuid) +
			      CPUID_MAX_ENTRIES * sizeof(struct kvm_cpuid_entry2));
	if (!k->cpuid)
		return -ENOMEM;
	k->cpuid->nent = CPUID_MAX_ENTRIES;
	if (ioctl(k->sys_fd, KVM_GET_SUPPORTED_CPUID, k->cpuid) < 0) {
		snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
		return -errno;
	}
	advertise_tsc_deadline(k);
	return 0;
}

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
	ret = check_caps(k, err, errlen);
	if (ret)
		goto fail;
	ret = ioctl(k->sys_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ret <= 0) {
		snprintf(err, errlen, "KVM_GET_VCPU_MMAP_SIZE failed");
		ret = -EINVAL;
		goto fail;
	}
	k->run_size = (size_t)ret;
	ret = get_cpuid(k, err, errlen);
	if (ret)
		goto fail;
	return 0;
fail:
	kvm_close(k);
	return ret;
}

int kvm_create_vm(struct kvm *k)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	uint64_t idmap = KVM_IDMAP_ADDR;

	k->vm_fd = ioctl(k->sys_fd, KVM_CREATE_VM, 0);
	if (k->vm_fd < 0)
		return -errno;
	/* Intel needs both pages for real mode; AMD ignores them. */
	if (ioctl(k->vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_ADDR) < 0)
		return -errno;
	if (ioctl(k->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap) < 0)
		return -errno;
	if (ioctl(k->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return -errno;
	if (ioctl(k->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return -errno;
	return 0;
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
