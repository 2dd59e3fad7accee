/*
 * The arm64 VM as a host for devices/'s virtio-mmio devices (aarch64
 * only): the struct vm fields those devices reach (vmm/vm.h: guest_mem,
 * the MMIO bus, the event loop, the KVM fds, the device list, the clock)
 * set up over the arm64 VM's own RAM and fds, and vm_alloc_virtio_slot's
 * arm64 answer (virtio_slots.h). The devices themselves do not change:
 * their doorbells are ioeventfds on the slot's QUEUE_NOTIFY, their
 * interrupts irqfds on the slot's SPI, their registers reached through the
 * exit loop's bus dispatch (run_arm64.c).
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/mono_time.h"
#include "vmm/arch/arm64/kvm/arm64_vm.h"

static struct arm64_vm *arm64_of(struct vm *vm)
{
	return (struct arm64_vm *)((char *)vm - offsetof(struct arm64_vm, dev));
}

/* x86's is in vmm/vm.c, which the arm64 build does not link. Only
 * arm64_vm's embedded struct vm reaches here. */
int vm_alloc_virtio_slot(struct vm *vm, uint64_t *base, uint32_t *irq)
{
	return arm64_virtio_slot_alloc(&arm64_of(vm)->slots, base, irq);
}

int arm64_vm_devices_init(struct arm64_vm *vm, char *err, size_t errlen)
{
	struct vm *d = &vm->dev;
	int ret;

	memset(d, 0, sizeof(*d));
	memset(&vm->slots, 0, sizeof(vm->slots));
	d->kvm.sys_fd = vm->kvm_fd;
	d->kvm.vm_fd = vm->vm_fd;
	d->kvm.run_size = vm->run_size;
	d->kvm.max_vcpus = vm->ncpus;
	d->ncpus = vm->ncpus;
	d->kernel_fd = -1;
	d->t0 = mono_now_s();	/* vm_elapsed: virtio-vsock's reset wait */
	d->mmio.name = "mmio";
	d->pio.name = "pio";	/* arm64 has no port I/O: stays empty */
	/* No dirty-page log yet (snapshots are not done on arm64). */
	gm_wrap(&d->mem, vm->ram, ARM64_RAM_BASE, vm->m.ram.size);
	cmdline_init(&d->cmdline, sizeof(d->cmdline.buf));
	ret = ev_init(&d->loop);
	if (ret) {
		snprintf(err, errlen, "arm64: the devices' event loop: %s", strerror(-ret));
		d->loop.epfd = d->loop.stop_fd = -1;
	}
	return ret;
}

static void *ev_thread(void *arg)
{
	struct arm64_vm *vm = arg;
	sigset_t set;

	/* The vCPUs' kick signal is theirs: this thread never takes it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	ev_run(&vm->dev.loop);
	return NULL;
}

int arm64_vm_devices_start(struct arm64_vm *vm, char *err, size_t errlen)
{
	struct vm *d = &vm->dev;
	int ret = 0;

	for (int i = 0; i < d->nr_devices && !ret; i++)
		if (d->devices[i].ops->start)
			ret = d->devices[i].ops->start(d->devices[i].dev);
	if (ret) {
		snprintf(err, errlen, "arm64: starting a device: %s", strerror(-ret));
		return ret;
	}
	d->loop.stopping = false;
	ret = pthread_create(&vm->ev_th, NULL, ev_thread, vm);
	if (ret) {
		snprintf(err, errlen, "arm64: the devices' event loop thread: %s", strerror(ret));
		return -ret;
	}
	vm->ev_started = true;
	return 0;
}

void arm64_vm_devices_stop(struct arm64_vm *vm)
{
	if (!vm->ev_started)
		return;
	ev_stop(&vm->dev.loop);
	pthread_join(vm->ev_th, NULL);
	vm->ev_started = false;
}

void arm64_vm_devices_destroy(struct arm64_vm *vm)
{
	struct vm *d = &vm->dev;

	arm64_vm_devices_stop(vm);
	/* Newest first, as x86's vm_destroy: a device may use an older one. */
	for (int i = d->nr_devices - 1; i >= 0; i--)
		d->devices[i].ops->destroy(d->devices[i].dev);
	d->nr_devices = 0;
	if (d->loop.epfd >= 0 || d->loop.stop_fd >= 0)
		ev_fini(&d->loop);
	d->loop.epfd = d->loop.stop_fd = -1;
}
