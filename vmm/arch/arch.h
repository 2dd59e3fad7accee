/*
 * The per-architecture seam of the KVM core (issue 31). What differs
 * between x86_64 and arm64 is reached through these entry points and
 * nothing else; devices, the event loop, images and snapshots above them
 * stay architecture-neutral. Each entry point is a function type here. The
 * x86 column names the existing functions that fill it today, and
 * tests/unit/test_arch_seam.c fails to compile when one of them stops
 * fitting its type. The arm64 column is honest about what exists.
 *
 * Call order in vm_create() (vmm/vm.c), and where arm64 must differ:
 *
 *  step            type                     x86_64 today          arm64
 *  1 VM            arch_vm_create_fn        kvm_create_vm()       -- (VM with an IPA size; no
 *                                           (VM, irqchip, PIT)       irqchip yet: see step 6)
 *  2 memory        arch_mem_init_fn         gm_init() (RAM        -- (one region from
 *                                           around the 3-4 GiB       ARM64_RAM_BASE; layout.h)
 *                                           hole; boot_layout.h)
 *  3 kernel        arch_kernel_parse_fn     kimg_parse() (PVH     arm64_image_parse() and
 *                                           vmlinux or bzImage)      arm64_boot_place() EXIST
 *                                                                    (vmm/arch/arm64/image.h);
 *                                                                    not yet a kernel_image
 *                  arch_kernel_load_fn      kimg_load_fd()        the same (one segment)
 *  4 devices       (neutral)                vm_devices_create()   UART on MMIO; devices/'s
 *                                                                    virtio-mmio devices on the
 *                                                                    arm64 VM's embedded struct
 *                                                                    vm EXIST (kvm/devhost_arm64.c,
 *                                                                    virtio_slots.h); not yet
 *                                                                    through vm_devices_create
 *  5 vCPUs         arch_vcpu_init_fn        vcpu_init() (CPUID,   arm64_vcpu_init() (PSCI 0.2,
 *                                           MSRs, LAPIC, regs)       secondaries off) and
 *                                                                    arm64_vcpu_boot_regs() (PC,
 *                                                                    X0 = DTB, EL1h DAIF) EXIST
 *                                                                    (vmm/arch/arm64/kvm/); not
 *                                                                    yet behind struct vcpu
 *  6 irqchip       arch_irqchip_finish_fn   none: made in step 1  arm64_gic_create() (v3, else
 *                                                                    v2) and arm64_gic_finish()
 *                                                                    EXIST, after every vCPU
 *  7 boot data     arch_boot_fn             vm_load_boot() (zero  -- (the device tree:
 *                                           page/PVH, e820, MP       arm64_fdt_build() EXISTS,
 *                                           table, cmdline)          vmm/arch/arm64/fdt.h)
 *  8 snapshots     arch_vcpu_state_*_fn     vcpu_state_save()...  seam/snap_arm64.c: power
 *                                                                    state and every
 *                                                                    KVM_GET_REG_LIST register
 *                                                                    (counters set last;
 *                                                                    vcpu_section.h)
 *                  arch_vm_state_*_fn       vm_state_save()...    the GICv3's device
 *                                                                    attributes (gic_state.h)
 *
 * "--": not written yet. The arm64 KVM calls take file descriptors, not
 * struct vcpu/vm: the arm64 VMM that will own those does not exist yet.
 * On arm64 the boot data (7) comes after the vCPUs (5) because the
 * device tree names each vCPU's MPIDR, which KVM assigns.
 * Nothing here is called through a table yet: x86's vm.c calls its
 * functions directly, and the first arm64 boot is what will route both
 * through this seam.
 */
#ifndef MVM_ARCH_H
#define MVM_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct guest_mem;
struct kernel_image;
struct kvm;
struct kvm_vcpu;
struct snap_w;
struct vcpu;
struct vcpu_state;
struct vm;
struct vm_config;
struct vm_kvm_state;

/* 1. Create the VM and whatever KVM needs before guest memory. 0 or -errno. */
typedef int arch_vm_create_fn(struct kvm *k);

/* 2. Map @ram_size bytes of guest RAM and lay it out. 0 or -errno. */
typedef int arch_mem_init_fn(struct guest_mem *m, uint64_t ram_size);

/* 3. Validate a kernel file (pure: every header field against @len and
 * @ram_end) and copy its segments into RAM. 0 or -errno, reason in @err. */
typedef int arch_kernel_parse_fn(const uint8_t *buf, size_t len, uint64_t ram_end,
				 struct kernel_image *k, char *err, size_t errlen);
typedef int arch_kernel_load_fn(const struct kernel_image *k, int fd, size_t len,
				struct guest_mem *m);

/* 5. Create vCPU @id of @ncpus and load its reset state (the boot vCPU
 * gets the kernel's entry). 0 or -errno, the failing step in @err. */
typedef int arch_vcpu_init_fn(struct vcpu *v, struct vm *vm, int id, int ncpus,
			      const struct kernel_image *k, char *err, size_t errlen);

/* 6. Finish the interrupt controller once every vCPU exists. */
typedef int arch_irqchip_finish_fn(struct kvm *k, int ncpus, char *err, size_t errlen);

/* 7. Write the command line, the initrd and the boot description into RAM. */
typedef int arch_boot_fn(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);

/* 8. A vCPU's and the VM's KVM state for snapshots: save appends a
 * section, decode checks one (pure), apply loads it. @set_cpuid is x86's
 * (CPUID is fixed once a vCPU ran); others ignore it. */
typedef int arch_vcpu_state_save_fn(struct kvm *k, struct kvm_vcpu *v, struct snap_w *w);
typedef int arch_vcpu_state_decode_fn(const uint8_t *p, size_t len, struct vcpu_state **out);
typedef int arch_vcpu_state_apply_fn(struct kvm *k, struct kvm_vcpu *v,
				     const struct vcpu_state *s, bool set_cpuid,
				     char *err, size_t errlen);
typedef int arch_vm_state_save_fn(struct kvm *k, struct snap_w *w);
typedef int arch_vm_state_decode_fn(const uint8_t *p, size_t len, struct vm_kvm_state **out);
typedef int arch_vm_state_apply_fn(struct kvm *k, const struct vm_kvm_state *s,
				   char *err, size_t errlen);

/*
 * The link-time seam: the entry points vmm/vm.c, vmm/vcpu.c, vmm/kvm.c and
 * the device assembly call. Each build links exactly one implementation:
 * vmm/arch/x86/ (the x86_64 build, `make`) or vmm/arch/arm64/kvm/ (the
 * aarch64 build, `make arm64-mvm`); no #ifdef in the callers. In create
 * order (vmm/vm.c):
 *
 *   kvm_open -> arch_kvm_check      capabilities (x86: CPUID too)
 *   arch_vm_create                  the VM fd (x86: irqchip and PIT too)
 *   gm_init -> arch_mem_layout      where RAM sits in guest-physical space
 *   arch_kernel_parse               the kernel file's headers
 *   arch_before_devices             arm64: vCPUs and the vGIC (its irqfd
 *                                   routing exists only after CTRL_INIT)
 *   add_devices                     neutral (tools/sandbox/vm_devices.c,
 *                                   with arch_legacy's console and ports)
 *   arch_boot                       kernel, initrd, boot data; the vCPUs
 *                                   (x86) or their boot registers (arm64)
 */
/* The kernel command line every guest starts with. */
extern const char arch_base_cmdline[];
/* The kernel's file name in a guest directory (cli_guest_dir). */
extern const char arch_kernel_name[];

/* What the device assembly puts beside the virtio devices. */
struct arch_legacy {
	bool uart_on_mmio;	/* false: port I/O */
	uint64_t uart_base;
	uint32_t uart_irq;	/* as kvm_irq_line takes it */
	bool i8042;		/* the reset line `reboot=k` uses */
	bool guest_port;	/* mvm-init's boot and exit-status port (port I/O) */
};
extern const struct arch_legacy arch_legacy;

int arch_kvm_check(struct kvm *k, char *err, size_t errlen);
int arch_vm_create(struct vm *vm, char *err, size_t errlen);
void arch_mem_layout(struct guest_mem *m);
int arch_kernel_parse(struct vm *vm, const char *path, char *err, size_t errlen);
/* The longest command line the parsed kernel takes, with its NUL. */
size_t arch_cmdline_cap(const struct vm *vm);
int arch_before_devices(struct vm *vm, char *err, size_t errlen);
int arch_boot(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);
/* vCPU @id's architectural set-up once KVM made it (x86: CPUID, MSRs,
 * LAPIC, the boot vCPU's registers; arm64: KVM_ARM_VCPU_INIT). */
int arch_vcpu_setup(struct vcpu *v, struct vm *vm, int id, int ncpus,
		    const struct kernel_image *k, char *err, size_t errlen);
/* For snapshots' compatibility check: the CPU vendor (NUL-padded) and a
 * fingerprint of what the guest may use (x86: CPUID; arm64: vCPU 0's
 * MIDR and ID_AA64* registers, so only once the vCPUs exist). */
void arch_cpu_identity(const struct kvm *k, char vendor[16], uint64_t *fingerprint);
/* Release what the arch made beyond struct kvm (arm64: the vGIC, vm->arch). */
void arch_vm_destroy(struct vm *vm);

#endif
