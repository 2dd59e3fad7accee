/* The x86 half of the KVM layer: required capabilities, CPUID, the VM with
 * its in-kernel irqchip and PIT (vmm/arch/arch.h). */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/arch/arch.h"
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

int arch_kvm_check(struct kvm *k, char *err, size_t errlen)
{
	int ret = check_caps(k, err, errlen);

	return ret ? ret : get_cpuid(k, err, errlen);
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
