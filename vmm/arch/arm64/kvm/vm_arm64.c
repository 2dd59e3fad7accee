/* An arm64 VM: RAM, its vCPUs, the vGIC, and the boot images (aarch64 only). */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/arch/arm64/kvm/arm64_vm.h"

static int fail(const char *what, char *err, size_t errlen)
{
	int e = errno;

	snprintf(err, errlen, "arm64: %s: %s", what, strerror(e));
	return -e;
}

static int map_ram(struct arm64_vm *vm, uint64_t ram_size, char *err, size_t errlen)
{
	struct kvm_userspace_memory_region mr = { .slot = 0 };

	vm->ram = mmap(NULL, ram_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->ram == MAP_FAILED) {
		vm->ram = NULL;
		return fail("mmap of guest RAM", err, errlen);
	}
	mr.guest_phys_addr = ARM64_RAM_BASE;
	mr.memory_size = ram_size;
	mr.userspace_addr = (uint64_t)(uintptr_t)vm->ram;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &mr) < 0)
		return fail("KVM_SET_USER_MEMORY_REGION", err, errlen);
	return 0;
}

static int make_vcpu(struct arm64_vm *vm, int id, char *err, size_t errlen)
{
	struct arm64_vcpu *c = &vm->cpu[id];
	int ret;

	c->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (c->fd < 0)
		return fail("KVM_CREATE_VCPU", err, errlen);
	ret = arm64_vcpu_init(vm->vm_fd, c->fd, id, err, errlen);
	if (!ret)
		ret = arm64_vcpu_mpidr(c->fd, &vm->mpidr[id], err, errlen);
	if (ret)
		return ret;
	c->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (c->run == MAP_FAILED) {
		c->run = NULL;
		return fail("mmap of kvm_run", err, errlen);
	}
	return 0;
}

static int make_vcpus(struct arm64_vm *vm, char *err, size_t errlen)
{
	long sz = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	int ret = 0;

	if (sz < (long)sizeof(struct kvm_run))
		return fail("KVM_GET_VCPU_MMAP_SIZE", err, errlen);
	vm->run_size = (size_t)sz;
	for (int i = 0; i < vm->ncpus && !ret; i++)
		ret = make_vcpu(vm, i, err, errlen);
	return ret;
}

int arm64_vm_create(struct arm64_vm *vm, uint64_t ram_size, int ncpus, arm64_uart_out_fn out,
		    void *opaque, char *err, size_t errlen)
{
	int ret;

	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = vm->vm_fd = vm->gic.fd = -1;
	vm->dev.loop.epfd = vm->dev.loop.stop_fd = -1;
	for (int i = 0; i < ARM64_VM_MAX_CPUS; i++) {
		vm->cpu[i] = (struct arm64_vcpu){ .id = i, .fd = -1, .vm = vm };
	}
	vm->uart_level = -1;
	pthread_mutex_init(&vm->lock, NULL);
	arm64_uart_init(&vm->uart, out, opaque);
	if (ncpus < 1 || ncpus > ARM64_VM_MAX_CPUS) {
		snprintf(err, errlen, "arm64: %d vCPUs (1 to %d)", ncpus, ARM64_VM_MAX_CPUS);
		return -EINVAL;
	}
	vm->ncpus = ncpus;
	/* Checked before any of it is made: RAM inside the layout's window. */
	arm64_machine_init(&vm->m, ram_size, ncpus, ARM64_GIC_V3);
	ret = arm64_machine_check(&vm->m, err, errlen);
	if (ret)
		return ret;
	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		ret = fail("open /dev/kvm", err, errlen);
		goto out;
	}
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		ret = fail("KVM_CREATE_VM", err, errlen);
		goto out;
	}
	ret = map_ram(vm, ram_size, err, errlen);
	if (!ret)
		ret = make_vcpus(vm, err, errlen);
	/* The vGIC after its vCPUs: CTRL_INIT needs every one of them. */
	if (!ret)
		ret = arm64_gic_create(vm->vm_fd, ncpus, &vm->gic, err, errlen);
	if (!ret)
		ret = arm64_gic_finish(&vm->gic, err, errlen);
	/* After CTRL_INIT: it sets up the vGIC's default GSI routing that the
	 * devices' irqfds go through. */
	if (!ret)
		ret = arm64_vm_devices_init(vm, err, errlen);
out:
	if (ret)
		arm64_vm_destroy(vm);
	return ret;
}

int arm64_vm_load(struct arm64_vm *vm, const uint8_t *kernel, size_t kernel_len,
		  const uint8_t *initrd, size_t initrd_len, const char *bootargs,
		  char *err, size_t errlen)
{
	int ret;

	/* The machine the device tree describes is the one KVM made. */
	arm64_machine_init(&vm->m, vm->m.ram.size, vm->ncpus, vm->gic.version);
	vm->m.mpidr = vm->mpidr;
	vm->m.psci = ARM64_PSCI_0_2;	/* what KVM_ARM_VCPU_INIT asked for */
	vm->m.bootargs = bootargs;
	arm64_virtio_slots_describe(&vm->slots, &vm->m);	/* the devices made so far */
	ret = arm64_boot_load(&vm->m, vm->ram, kernel, kernel_len, initrd, initrd_len,
			      &vm->place, err, errlen);
	if (!ret)
		ret = arm64_vcpu_boot_regs(vm->cpu[0].fd, vm->place.kernel, vm->place.fdt, err,
					   errlen);
	return ret;
}

void arm64_vm_destroy(struct arm64_vm *vm)
{
	/* Devices first: their irqfds and ioeventfds belong to the VM fd. */
	arm64_vm_devices_destroy(vm);
	for (int i = 0; i < ARM64_VM_MAX_CPUS; i++) {
		struct arm64_vcpu *c = &vm->cpu[i];

		if (c->run)
			munmap(c->run, vm->run_size);
		if (c->fd >= 0)
			close(c->fd);
		c->run = NULL;
		c->fd = -1;
	}
	if (vm->gic.fd >= 0)
		arm64_gic_close(&vm->gic);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->ram)
		munmap(vm->ram, vm->m.ram.size);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->ram = NULL;
	vm->kvm_fd = vm->vm_fd = vm->gic.fd = -1;
}
