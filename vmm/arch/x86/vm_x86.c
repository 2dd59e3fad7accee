/*
 * The x86_64 side of the architecture seam (vmm/arch/arch.h): the VM with
 * its irqchip and PIT, RAM around the 3-4 GiB hole, PVH or bzImage kernels,
 * boot params/e820/MP table, CPUID/MSR/LAPIC vCPUs, the COM1 console on
 * port 0x3f8, the i8042 reset line and mvm-init's guest port.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/arch/arch.h"
#include "vmm/boot_layout.h"
#include "vmm/boot_setup.h"
#include "common/log.h"
#include "vmm/vcpu.h"
#include "vmm/vm_internal.h"

/* Defined in vmm/vcpu_regs.c: each returns 0 or -errno. */
int vcpu_set_cpuid(struct kvm *k, struct kvm_vcpu *v, int ncpus);
int vcpu_set_msrs(struct kvm_vcpu *v);
int vcpu_set_fpu_lapic(struct kvm_vcpu *v);
int vcpu_set_boot_regs(struct kvm_vcpu *v, const struct kernel_image *k);

/*
 * After Firecracker's microVM command line. quiet: every console byte is a
 * trap. reboot=k: reset through the i8042 line, which ends the VM. panic=-1:
 * reboot at once, so a panic ends the VM too. io_delay=none: no port-0x80
 * exits. no_timer_check: the IO-APIC timer probe misfires under nested
 * emulation. The guest kernel has no PCI, ACPI, keyboard or modules.
 * nopku: no memory protection keys in the guest. Under nested KVM on an
 * emulated CPU (the QEMU TCG box) the guest kernel finds XSAVE inconsistent
 * and turns it off, which drops PKU but leaves OSPKE and CR4.PKE on: pkeys
 * then work without the kernel keeping PKRU across signals, and Chromium's
 * renderers (V8 guards its JIT memory with a pkey; seccomp traps are
 * signals) crash on their first real page (issue 17). The VM is the wall.
 * The inconsistency is the box's, not our CPUID's: QEMU 7.2's TCG never
 * delivers the SVM XSETBV intercept (fixed in QEMU 8.2), so the box's KVM
 * never learns the guest's XCR0 and leaf 0xD's EBX stays at 576 bytes; a
 * guest of QEMU itself in the same box says the same (issue 26,
 * tests/nested/README.md).
 */
const char arch_base_cmdline[] =
	"console=ttyS0 quiet reboot=k panic=-1 nomodule 8250.nr_uarts=1 swiotlb=noforce "
	"cryptomgr.notests tsc=reliable no_timer_check io_delay=none nopku";

int vm_alloc_virtio_slot(struct vm *vm, uint64_t *base, uint32_t *irq)
{
	if (VIRTIO_IRQ_BASE + vm->next_virtio > VIRTIO_IRQ_MAX)
		return -ENOSPC;
	*base = VIRTIO_MMIO_BASE + (uint64_t)vm->next_virtio * VIRTIO_MMIO_SIZE;
	*irq = (uint32_t)(VIRTIO_IRQ_BASE + vm->next_virtio);
	vm->next_virtio++;
	return 0;
}

const char arch_kernel_name[] = "vmlinux";

/* COM1 at its usual port and IRQ, the i8042 for `reboot=k`, the guest port. */
const struct arch_legacy arch_legacy = {
	.uart_on_mmio = false, .uart_base = 0x3f8, .uart_irq = 4,
	.i8042 = true, .guest_port = true,
};

int arch_vm_create(struct vm *vm, char *err, size_t errlen)
{
	int ret = kvm_create_vm(&vm->kvm);

	if (ret)
		snprintf(err, errlen, "creating the VM: %s", strerror(-ret));
	return ret;
}

/* gm_init already laid RAM around the hole (vmm/guest_mem.c). */
void arch_mem_layout(struct guest_mem *m)
{
	(void)m;
}

int arch_kernel_parse(struct vm *vm, const char *path, char *err, size_t errlen)
{
	return vm_parse_kernel(vm, path, err, errlen);
}

size_t arch_cmdline_cap(const struct vm *vm)
{
	return boot_cmdline_cap(&vm->kimg);
}

/* The irqchip exists since arch_vm_create; vCPUs come after the boot data. */
int arch_before_devices(struct vm *vm, char *err, size_t errlen)
{
	(void)vm, (void)err, (void)errlen;
	return 0;
}

int arch_boot(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen)
{
	int ret = cfg->restore_mem ? 0 : vm_load_boot(vm, cfg, err, errlen);

	log_info("setup: kernel and initrd loaded at %.3fs", vm_elapsed(vm));
	if (!ret)
		ret = vm_create_vcpus(vm, err, errlen);
	log_info("setup: vCPUs created at %.3fs", vm_elapsed(vm));
	return ret;
}

int arch_vcpu_setup(struct vcpu *v, struct vm *vm, int id, int ncpus,
		    const struct kernel_image *k, char *err, size_t errlen)
{
	const char *step = "set CPUID";
	int ret = vcpu_set_cpuid(&vm->kvm, &v->kv, ncpus);

	if (ret)
		goto fail;
	step = "set MSRs";
	ret = vcpu_set_msrs(&v->kv);
	if (ret)
		goto fail;
	step = "set FPU/LAPIC";
	ret = vcpu_set_fpu_lapic(&v->kv);
	if (ret)
		goto fail;
	/* Application processors wait for INIT/SIPI from the boot CPU. */
	if (id == 0) {
		step = "set boot registers";
		ret = vcpu_set_boot_regs(&v->kv, k);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "vCPU %d: %s: %s", id, step, strerror(-ret));
	return ret;
}

void arch_vm_destroy(struct vm *vm)
{
	(void)vm;
}
