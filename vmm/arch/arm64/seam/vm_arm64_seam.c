/*
 * The arm64 side of the architecture seam (vmm/arch/arch.h), linked only
 * into the aarch64 mvm (`make arm64-mvm`): vm_create() in vmm/vm.c drives
 * these in its usual order. The VM (KVM's default 40-bit IPA), RAM as one
 * region at ARM64_RAM_BASE (layout.h), the kernel Image of the arm64 boot
 * protocol (image.h), the vCPUs (PSCI 0.2, secondaries off) and the vGIC
 * (v3, else v2) before the devices, whose irqfds need the vGIC's routing,
 * then the initrd and the device tree that names every device made
 * (boot.h), and the boot vCPU's registers. The console is devices/serial.c
 * on MMIO at the device tree's ns16550a; arm64 has no port I/O, so no
 * i8042 and no guest port (a guest resets and powers off through PSCI,
 * which KVM turns into a system-event exit).
 *
 * A restore (cfg->restore_mem) loads nothing: the snapshot's vCPU and vGIC
 * state (snap_arm64.c) replace the reset state made here. Not done here
 * yet (the README's arm64 line): a guest port for mvm-init's exit status
 * (the sandbox path's agent reports it instead).
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "common/log.h"
#include "vmm/arch/arch.h"
#include "vmm/arch/arm64/boot.h"
#include "vmm/arch/arm64/kvm/arm64_kvm.h"
#include "vmm/arch/arm64/layout.h"
#include "vmm/arch/arm64/seam/arm64_arch.h"
#include "vmm/arch/arm64/machine.h"
#include "vmm/arch/arm64/virtio_slots.h"
#include "vmm/initrd.h"
#include "vmm/vcpu.h"
#include "vmm/vm_internal.h"

static struct arm64_arch *arch_of(const struct vm *vm)
{
	return arm64_arch_of(vm);
}

int arch_kvm_check(struct kvm *k, char *err, size_t errlen)
{
	static const struct {
		int cap;
		const char *name;
	} caps[] = {
		{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
		{ KVM_CAP_IRQFD, "KVM_CAP_IRQFD" },
		{ KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD" },
		{ KVM_CAP_ONE_REG, "KVM_CAP_ONE_REG" },
		{ KVM_CAP_ARM_PSCI_0_2, "KVM_CAP_ARM_PSCI_0_2" },
		{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
		{ KVM_CAP_DEVICE_CTRL, "KVM_CAP_DEVICE_CTRL" },
	};

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (ioctl(k->sys_fd, KVM_CHECK_EXTENSION, caps[i].cap) <= 0) {
			snprintf(err, errlen, "KVM lacks required capability %s", caps[i].name);
			return -ENOTSUP;
		}
	k->max_vcpus = ioctl(k->sys_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (k->max_vcpus <= 0)
		k->max_vcpus = ioctl(k->sys_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	if (k->max_vcpus > ARM64_MAX_CPUS)
		k->max_vcpus = ARM64_MAX_CPUS;
	return 0;
}

int arch_vm_create(struct vm *vm, char *err, size_t errlen)
{
	struct arm64_arch *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->gic.fd = -1;
	vm->arch = a;
	vm->virtio_in_fdt = true;
	/* Type 0: the default 40-bit IPA, which layout.h's map fits. */
	vm->kvm.vm_fd = ioctl(vm->kvm.sys_fd, KVM_CREATE_VM, 0);
	if (vm->kvm.vm_fd < 0) {
		snprintf(err, errlen, "creating the VM: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int arch_kernel_parse(struct vm *vm, const char *path, char *err, size_t errlen)
{
	struct arm64_arch *a = arch_of(vm);
	char why[200];
	int ret = vm_map_file(path, &vm->kernel_data, &vm->kernel_len, &vm->kernel_fd, err, errlen);

	if (ret)
		return ret;
	ret = arm64_image_parse(vm->kernel_data, vm->kernel_len, &a->img, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "kernel %s: %s", path, why);
	return ret;
}

size_t arch_cmdline_cap(const struct vm *vm)
{
	(void)vm;
	return ARM64_CMDLINE_MAX;
}

int arch_vcpu_setup(struct vcpu *v, struct vm *vm, int id, int ncpus,
		    const struct kernel_image *k, char *err, size_t errlen)
{
	struct arm64_arch *a = arch_of(vm);
	int ret;

	(void)ncpus, (void)k;
	ret = arm64_vcpu_init(vm->kvm.vm_fd, v->kv.fd, id, err, errlen);
	if (!ret)
		ret = arm64_vcpu_mpidr(v->kv.fd, &a->mpidr[id], err, errlen);
	return ret;
}

/* The vCPUs, then the vGIC: KVM_DEV_ARM_VGIC_CTRL_INIT needs every vCPU,
 * and sets up the GSI routing the devices' irqfds go through. */
int arch_before_devices(struct vm *vm, char *err, size_t errlen)
{
	struct arm64_arch *a = arch_of(vm);
	int ret;

	if (vm->ncpus > ARM64_MAX_CPUS) {
		snprintf(err, errlen, "arm64: at most %d vCPUs", ARM64_MAX_CPUS);
		return -EINVAL;
	}
	ret = vm_create_vcpus(vm, err, errlen);
	if (!ret)
		ret = arm64_gic_create(vm->kvm.vm_fd, vm->ncpus, &a->gic, err, errlen);
	if (!ret)
		ret = arm64_gic_finish(&a->gic, err, errlen);
	return ret;
}

int vm_alloc_virtio_slot(struct vm *vm, uint64_t *base, uint32_t *irq)
{
	return arm64_virtio_slot_alloc(&arch_of(vm)->slots, base, irq);
}

/* The initramfs with the run spec behind it, as x86's vm_load_boot makes. */
static int build_initrd(const struct vm_config *cfg, struct buf *out, char *err, size_t errlen)
{
	struct run_spec rs = {
		.argv = cfg->argv, .env = cfg->env, .workdir = cfg->workdir,
		.root_on_disk = cfg->root_on_disk,
	};
	int ret = initrd_build(cfg->initrd_path, &rs, out);

	if (ret)
		snprintf(err, errlen, "initrd %s: %s", cfg->initrd_path ? cfg->initrd_path : "",
			 ret == -E2BIG ? "command and environment too large" : strerror(-ret));
	return ret;
}

int arch_boot(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen)
{
	struct arm64_arch *a = arch_of(vm);
	struct buf initrd = { 0 };
	int ret;

	/* A restore: RAM holds the snapshot's guest, and the vCPUs and vGIC
	 * get its state (snap_arm64.c) before they run; nothing to load. */
	if (cfg->restore_mem)
		return 0;
	if (cmdline_check(&vm->cmdline)) {
		snprintf(err, errlen, "kernel command line longer than %zu bytes", vm->cmdline.cap);
		return -E2BIG;
	}
	ret = build_initrd(cfg, &initrd, err, errlen);
	if (ret)
		goto out;
	/* The machine the device tree describes is the one KVM made. */
	arm64_machine_init(&a->m, vm->mem.ram_size, vm->ncpus, a->gic.version);
	a->m.mpidr = a->mpidr;
	a->m.psci = ARM64_PSCI_0_2;	/* what KVM_ARM_VCPU_INIT asked for */
	a->m.bootargs = vm->cmdline.buf;
	arm64_virtio_slots_describe(&a->slots, &a->m);
	ret = arm64_boot_load(&a->m, vm->mem.map, vm->kernel_data, vm->kernel_len,
			      initrd.data, initrd.len, &a->place, err, errlen);
	log_info("setup: kernel, initrd and device tree loaded at %.3fs", vm_elapsed(vm));
	if (!ret)
		ret = arm64_vcpu_boot_regs(vm->vcpus[0].kv.fd, a->place.kernel, a->place.fdt,
					   err, errlen);
out:
	buf_free(&initrd);
	return ret;
}

void arch_vm_destroy(struct vm *vm)
{
	struct arm64_arch *a = arch_of(vm);

	if (!a)
		return;
	if (a->gic.fd >= 0)
		arm64_gic_close(&a->gic);
	free(a);
	vm->arch = NULL;
}
