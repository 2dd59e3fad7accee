/*
 * A whole arm64 guest on KVM, first stage (issue 31): one VM with its RAM,
 * its vCPUs (a thread each while it runs), the in-kernel vGIC, the
 * kernel/initrd/device tree loaded per the boot protocol (boot.h), and an
 * exit loop that serves the 16550 UART (uart.h), the virtio-mmio devices of
 * devices/ (through @dev, below) and PSCI's SYSTEM_OFF and SYSTEM_RESET
 * (KVM serves CPU_ON/OFF itself). No snapshots yet: the steps of
 * vmm/arch/arch.h this proves on a real arm64 /dev/kvm before vm_create
 * takes them. aarch64 only.
 */
#ifndef MVM_ARM64_VM_H
#define MVM_ARM64_VM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/arch/arm64/boot.h"
#include "vmm/arch/arm64/kvm/arm64_kvm.h"
#include "vmm/arch/arm64/machine.h"
#include "vmm/arch/arm64/uart.h"
#include "vmm/arch/arm64/virtio_slots.h"
#include "vmm/vm.h"

struct kvm_run;
struct arm64_vm;

/* vCPUs of this first stage: GICv2's limit, so the fallback serves them too. */
#define ARM64_VM_MAX_CPUS ARM64_GICV2_MAX_CPUS

struct arm64_run_stats {
	uint64_t exits, mmio_uart, mmio_virtio, mmio_other;
	uint64_t last_other_addr;	/* the last MMIO access outside every device */
};

struct arm64_vcpu {
	int id, fd;
	struct kvm_run *run;
	pthread_t th;
	bool started;			/* @th is running vcpu_loop (atomic) */
	struct arm64_vm *vm;
	struct arm64_run_stats st;
};

struct arm64_vm {
	int kvm_fd, vm_fd, ncpus;
	size_t run_size;
	uint8_t *ram;			/* host mapping of m.ram */
	struct arm64_vcpu cpu[ARM64_VM_MAX_CPUS];
	uint64_t mpidr[ARM64_VM_MAX_CPUS];
	struct arm64_machine m;
	struct arm64_vgic gic;
	struct arm64_boot_place place;
	/*
	 * The architecture-neutral device host the virtio-mmio devices of
	 * devices/ are made on (virtio_rng_create(&vm->dev), ...): RAM as
	 * guest_mem (one region at ARM64_RAM_BASE), the MMIO bus the exit
	 * loop dispatches to, the event loop that takes their ioeventfd kicks
	 * (a thread of its own while the VM runs), the KVM fds for their
	 * irqfds, the device list. Only those fields are used: the rest of
	 * struct vm is x86's vm_create's. Its cmdline collects the x86-style
	 * virtio_mmio.device= announcements and is never given to the guest:
	 * the device tree describes the devices (@slots).
	 */
	struct vm dev;
	struct arm64_virtio_slots slots;
	pthread_t ev_th;
	bool ev_started;
	/* Shared by the vCPU threads while they run, under @lock. */
	pthread_mutex_t lock;
	struct arm64_uart uart;
	int uart_level;			/* last level given to the vGIC (-1: none yet) */
	int stop;			/* the first stop reason or -errno; 1 + ARM64_STOP_SIGNAL: none yet */
	uint64_t max_exits;
	char err[256];			/* the reason of a negative @stop */
};

/*
 * Open /dev/kvm, make the VM (KVM's default 40-bit IPA) with @ram_size
 * bytes of RAM at ARM64_RAM_BASE, @ncpus vCPUs (1..ARM64_VM_MAX_CPUS; PSCI
 * 0.2, all but vCPU 0 powered off until the guest's PSCI CPU_ON) and the
 * vGIC (v3, else v2). The UART's output goes to @out(@opaque), called with
 * the VM's lock held. 0 or -errno with the step in @err; on error
 * everything made is released.
 */
int arm64_vm_create(struct arm64_vm *vm, uint64_t ram_size, int ncpus, arm64_uart_out_fn out,
		    void *opaque, char *err, size_t errlen);
/*
 * Devices: between arm64_vm_create and arm64_vm_load, the caller makes
 * virtio devices on &vm->dev with devices/'s constructors; each takes the
 * next slot of vm->slots (vm_alloc_virtio_slot, devhost_arm64.c), so
 * arm64_vm_load's device tree names it. arm64_vm_run starts them (their
 * ops' start) and the event loop, once per VM (the loop's stop is not
 * re-armed: a second run would find it stopped); arm64_vm_destroy
 * destroys them. (devhost_arm64.c.)
 */
int arm64_vm_devices_init(struct arm64_vm *vm, char *err, size_t errlen);
int arm64_vm_devices_start(struct arm64_vm *vm, char *err, size_t errlen);
void arm64_vm_devices_stop(struct arm64_vm *vm);
void arm64_vm_devices_destroy(struct arm64_vm *vm);
/* Load kernel, initrd and device tree (arm64_boot_load, @bootargs on the
 * command line) and give the boot vCPU PC = entry, X0 = the tree. */
int arm64_vm_load(struct arm64_vm *vm, const uint8_t *kernel, size_t kernel_len,
		  const uint8_t *initrd, size_t initrd_len, const char *bootargs,
		  char *err, size_t errlen);

enum arm64_stop {
	ARM64_STOP_POWER_OFF,	/* PSCI SYSTEM_OFF */
	ARM64_STOP_RESET,	/* PSCI SYSTEM_RESET */
	ARM64_STOP_CRASH,	/* KVM_SYSTEM_EVENT_CRASH */
	ARM64_STOP_EXITS,	/* a vCPU reached @max_exits */
	ARM64_STOP_SIGNAL,	/* arm64_vm_interrupt(), or a signal ended KVM_RUN */
};

/*
 * Run every vCPU, vCPU 0 on the calling thread and each other on a thread
 * of its own, until one of them stops the VM: the guest powers off or
 * resets, a vCPU makes @max_exits exits (0: no limit), a signal interrupts
 * KVM_RUN or arm64_vm_interrupt() is called, or an exit mvm cannot serve.
 * The devices' event loop runs on a thread of its own meanwhile.
 * The first stop wins; the other vCPUs are kicked out of KVM_RUN (SIGUSR1,
 * whose no-op handler this installs, and immediate_exit) and joined. MMIO
 * inside the UART is the UART's, inside a virtio slot the device's (the
 * bus vm->dev.mmio); elsewhere reads are 0 and writes are dropped
 * (counted). The stop reason with every vCPU's counts summed in
 * @st, or -errno with the reason in @err.
 */
int arm64_vm_run(struct arm64_vm *vm, uint64_t max_exits, struct arm64_run_stats *st,
		 char *err, size_t errlen);
/* Make every vCPU's next (or current) KVM_RUN return: async-signal-safe,
 * for the caller's hang guard. */
void arm64_vm_interrupt(struct arm64_vm *vm);
void arm64_vm_destroy(struct arm64_vm *vm);

#endif
