/*
 * The architecture seam (vmm/arch/arch.h) holds for x86: every x86 entry
 * point its table names still has the seam's type. Checked by the compiler:
 * this file stops building when one of them changes shape, so the table
 * cannot drift from the code. The arm64 side has its own tests
 * (test_arm64_fdt.c, test_arm64_machine.c).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "vmm/arch/arch.h"
#include "vmm/arch/arm64/fdt.h"
#include "vmm/boot_layout.h"
#include "vmm/guest_mem.h"
#include "vmm/kernel_image.h"
#include "vmm/kvm.h"
#include "vmm/vcpu.h"
#include "vmm/vcpu_state.h"
#include "vmm/vm_internal.h"
#include "vmm/vm_state.h"

#define SEAM(fn, type) \
	_Static_assert(__builtin_types_compatible_p(__typeof__(fn), type), \
		       #fn " no longer fits " #type " (vmm/arch/arch.h)")

SEAM(kvm_create_vm, arch_vm_create_fn);
SEAM(gm_init, arch_mem_init_fn);
SEAM(kimg_parse, arch_kernel_parse_fn);
SEAM(kimg_load_fd, arch_kernel_load_fn);
SEAM(vcpu_init, arch_vcpu_init_fn);
SEAM(vm_load_boot, arch_boot_fn);
SEAM(vcpu_state_save, arch_vcpu_state_save_fn);
SEAM(vcpu_state_decode, arch_vcpu_state_decode_fn);
SEAM(vcpu_state_apply, arch_vcpu_state_apply_fn);
SEAM(vm_state_save, arch_vm_state_save_fn);
SEAM(vm_state_decode, arch_vm_state_decode_fn);
SEAM(vm_state_apply, arch_vm_state_apply_fn);

/* The seam's limits agree across architectures: a sandbox config valid on
 * x86 (vCPUs, devices) fits the arm64 machine too. */
_Static_assert(ARM64_MAX_CPUS == VM_MAX_CPUS, "arm64 vCPU limit differs from x86's");
_Static_assert(ARM64_MAX_VIRTIO >= VIRTIO_IRQ_MAX - VIRTIO_IRQ_BASE + 1,
	       "arm64 has fewer virtio slots than x86");

Test(arch_seam, x86_sandbox_devices_fit_arm64_machine)
{
	struct arm64_mmio_dev devs[VIRTIO_IRQ_MAX - VIRTIO_IRQ_BASE + 1];
	struct arm64_machine m;
	char err[256] = "";
	int n = (int)(sizeof(devs) / sizeof(devs[0]));

	/* As many virtio devices as x86 can give interrupts to, at the largest
	 * vCPU count: the arm64 machine takes them all. */
	arm64_machine_init(&m, GM_MIN_SIZE, VM_MAX_CPUS, ARM64_GIC_V3);
	for (int i = 0; i < n; i++)
		devs[i] = arm64_virtio_slot(i);
	m.virtio = devs;
	m.nr_virtio = n;
	cr_assert_eq(arm64_machine_check(&m, err, sizeof(err)), 0, "%s", err);
}

/* The x86 side of the link-time seam keeps what vm_devices_create made
 * before the seam existed: COM1 on port 0x3f8 with IRQ 4, the i8042 reset
 * line, mvm-init's guest port; the kernel is the guest dir's vmlinux and
 * the command line keeps `nomodule` (x86's kernel has no modules). */
Test(arch_seam, x86_legacy_devices_are_unchanged)
{
	cr_assert(!arch_legacy.uart_on_mmio);
	cr_assert_eq(arch_legacy.uart_base, 0x3f8);
	cr_assert_eq(arch_legacy.uart_irq, 4);
	cr_assert(arch_legacy.i8042 && arch_legacy.guest_port);
	cr_assert_str_eq(arch_kernel_name, "vmlinux");
	cr_assert_not_null(strstr(arch_base_cmdline, "console=ttyS0"));
	cr_assert_not_null(strstr(arch_base_cmdline, "nomodule"));
}
