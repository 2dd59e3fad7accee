/*
 * A whole arm64 guest on KVM, first stage (issue 31): one VM with its RAM,
 * one vCPU, the in-kernel vGIC, the kernel/initrd/device tree loaded per
 * the boot protocol (boot.h), and an exit loop that serves the 16550 UART
 * (uart.h) and PSCI's SYSTEM_OFF/RESET. No virtio devices, no SMP, no
 * snapshots yet: the steps of vmm/arch/arch.h this proves on a real arm64
 * /dev/kvm before vm_create takes them. aarch64 only.
 */
#ifndef MVM_ARM64_VM_H
#define MVM_ARM64_VM_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/boot.h"
#include "vmm/arch/arm64/kvm/arm64_kvm.h"
#include "vmm/arch/arm64/machine.h"
#include "vmm/arch/arm64/uart.h"

struct kvm_run;

struct arm64_vm {
	int kvm_fd, vm_fd, vcpu_fd;
	struct kvm_run *run;
	size_t run_size;
	uint8_t *ram;			/* host mapping of m.ram */
	uint64_t mpidr;
	struct arm64_machine m;
	struct arm64_vgic gic;
	struct arm64_uart uart;
	int uart_level;			/* last level given to the vGIC (-1: none yet) */
	struct arm64_boot_place place;
};

/*
 * Open /dev/kvm, make the VM (KVM's default 40-bit IPA) with @ram_size
 * bytes of RAM at ARM64_RAM_BASE, one vCPU (PSCI 0.2) and the vGIC (v3,
 * else v2). The UART's output goes to @out(@opaque). 0 or -errno with the
 * step in @err; on error everything made is released.
 */
int arm64_vm_create(struct arm64_vm *vm, uint64_t ram_size, arm64_uart_out_fn out,
		    void *opaque, char *err, size_t errlen);
/* Load kernel, initrd and device tree (arm64_boot_load, @bootargs on the
 * command line) and give the boot vCPU PC = entry, X0 = the tree. */
int arm64_vm_load(struct arm64_vm *vm, const uint8_t *kernel, size_t kernel_len,
		  const uint8_t *initrd, size_t initrd_len, const char *bootargs,
		  char *err, size_t errlen);

enum arm64_stop {
	ARM64_STOP_POWER_OFF,	/* PSCI SYSTEM_OFF */
	ARM64_STOP_RESET,	/* PSCI SYSTEM_RESET */
	ARM64_STOP_CRASH,	/* KVM_SYSTEM_EVENT_CRASH */
	ARM64_STOP_EXITS,	/* @max_exits reached */
	ARM64_STOP_SIGNAL,	/* KVM_RUN interrupted by a signal (the caller's hang guard) */
};

struct arm64_run_stats {
	uint64_t exits, mmio_uart, mmio_other;
	uint64_t last_other_addr;	/* the last MMIO access outside every device */
};

/*
 * Run the boot vCPU until the guest powers off or resets, a signal
 * interrupts KVM_RUN, or @max_exits exits (0: no limit). MMIO inside the
 * UART is the UART's; elsewhere reads are 0 and writes are dropped
 * (counted). The stop reason, or -errno (an exit mvm cannot serve) with the
 * reason in @err.
 */
int arm64_vm_run(struct arm64_vm *vm, uint64_t max_exits, struct arm64_run_stats *st,
		 char *err, size_t errlen);
void arm64_vm_destroy(struct arm64_vm *vm);

#endif
