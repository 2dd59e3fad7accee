/*
 * The arm64 exit loop (aarch64 only), one per vCPU: the UART's MMIO and
 * its interrupt line to the vGIC, the virtio-mmio devices' registers
 * (their bus; their kicks and interrupts bypass this loop as ioeventfds
 * and irqfds), PSCI's system events. The in-kernel vGIC
 * and timer take their own accesses, and KVM serves PSCI CPU_ON/OFF;
 * anything else that reaches here is an access to no device, answered as a
 * bus would with nothing on it. The first vCPU to stop the VM stops them
 * all: immediate_exit for a vCPU about to enter, SIGUSR1 for one inside.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/arch/arm64/kvm/arm64_vm.h"
#include "vmm/arch/arm64/regs.h"

#define KICK_SIGNAL SIGUSR1	/* as the x86 vCPUs' (vmm/vcpu.c) */
#define NO_STOP (ARM64_STOP_SIGNAL + 1)

static void kick_handler(int sig)
{
	(void)sig;	/* only there to make KVM_RUN return EINTR */
}

void arm64_vm_interrupt(struct arm64_vm *vm)
{
	for (int i = 0; i < vm->ncpus; i++)
		if (vm->cpu[i].run)
			__atomic_store_n(&vm->cpu[i].run->immediate_exit, 1, __ATOMIC_SEQ_CST);
}

static bool stopped(struct arm64_vm *vm)
{
	return __atomic_load_n(&vm->stop, __ATOMIC_SEQ_CST) != NO_STOP;
}

/* Record @reason (the first one wins) and make every other vCPU leave KVM_RUN. */
static void stop_all(struct arm64_vcpu *self, int reason, const char *why)
{
	struct arm64_vm *vm = self->vm;

	pthread_mutex_lock(&vm->lock);
	if (vm->stop == NO_STOP) {
		if (why)
			snprintf(vm->err, sizeof(vm->err), "vCPU %d: %s", self->id, why);
		__atomic_store_n(&vm->stop, reason, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&vm->lock);
	arm64_vm_interrupt(vm);
	for (int i = 0; i < vm->ncpus; i++)
		if (&vm->cpu[i] != self && __atomic_load_n(&vm->cpu[i].started, __ATOMIC_SEQ_CST))
			pthread_kill(vm->cpu[i].th, KICK_SIGNAL);
}

/* The UART's level to the vGIC, only when it changed. Under vm->lock. */
static int uart_irq_sync(struct arm64_vm *vm, char *why, size_t len)
{
	int level = arm64_uart_irq(&vm->uart);
	struct kvm_irq_level irq = { .irq = arm64_irq_line_spi(vm->m.uart.spi), .level = level };

	if (level == vm->uart_level)
		return 0;
	if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq) < 0) {
		int e = errno;

		snprintf(why, len, "KVM_IRQ_LINE (UART, SPI %u): %s", vm->m.uart.spi, strerror(e));
		return -e;
	}
	vm->uart_level = level;
	return 0;
}

static int mmio(struct arm64_vcpu *c, char *why, size_t len)
{
	struct arm64_vm *vm = c->vm;
	struct kvm_run *r = c->run;
	uint64_t a = r->mmio.phys_addr, off = a - vm->m.uart.base;
	int ret;

	if (a >= vm->m.uart.base && off < vm->m.uart.size && r->mmio.len >= 1 &&
	    r->mmio.len <= 8) {
		/* 8-bit registers: a wider access sees its low byte. */
		c->st.mmio_uart++;
		pthread_mutex_lock(&vm->lock);
		if (r->mmio.is_write) {
			arm64_uart_write(&vm->uart, off, r->mmio.data[0]);
		} else {
			memset(r->mmio.data, 0, sizeof(r->mmio.data));
			r->mmio.data[0] = arm64_uart_read(&vm->uart, off);
		}
		ret = uart_irq_sync(vm, why, len);
		pthread_mutex_unlock(&vm->lock);
		return ret;
	}
	/* KVM reports 1, 2, 4 or 8 bytes; anything else is no device's. */
	if (r->mmio.len == 1 || r->mmio.len == 2 || r->mmio.len == 4 || r->mmio.len == 8) {
		bool served = r->mmio.is_write
			? bus_write(&vm->dev.mmio, a, r->mmio.data, r->mmio.len)
			: bus_read(&vm->dev.mmio, a, r->mmio.data, r->mmio.len);

		if (served) {
			c->st.mmio_virtio++;
			return 0;
		}
	}
	c->st.mmio_other++;
	c->st.last_other_addr = a;
	if (!r->mmio.is_write)
		memset(r->mmio.data, 0, sizeof(r->mmio.data));
	return 0;
}

static int system_event(struct arm64_vcpu *c, char *why, size_t len)
{
	switch (c->run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN: return ARM64_STOP_POWER_OFF;
	case KVM_SYSTEM_EVENT_RESET:    return ARM64_STOP_RESET;
	case KVM_SYSTEM_EVENT_CRASH:    return ARM64_STOP_CRASH;
	default:
		snprintf(why, len, "unknown system event %u", c->run->system_event.type);
		return -EPROTO;
	}
}

/* One exit of @c: false to go on, true with the stop reason (or -errno)
 * in *@stop. (ARM64_STOP_POWER_OFF is 0: a reason cannot double as "go on".) */
static bool one_exit(struct arm64_vcpu *c, int *stop, char *why, size_t len)
{
	switch (c->run->exit_reason) {
	case KVM_EXIT_MMIO: {
		int ret = mmio(c, why, len);

		if (ret)
			*stop = ret;
		return ret != 0;
	}
	case KVM_EXIT_SYSTEM_EVENT:
		*stop = system_event(c, why, len);
		return true;
	case KVM_EXIT_INTR:
		*stop = ARM64_STOP_SIGNAL;
		return true;
	default:
		snprintf(why, len, "KVM exit %u that mvm does not serve", c->run->exit_reason);
		*stop = -EPROTO;
		return true;
	}
}

static void *vcpu_loop(void *arg)
{
	struct arm64_vcpu *c = arg;
	char why[200] = "";
	int stop = ARM64_STOP_SIGNAL;	/* another vCPU stopped the VM first */

	while (!stopped(c->vm)) {
		if (c->vm->max_exits && c->st.exits >= c->vm->max_exits) {
			stop = ARM64_STOP_EXITS;
			break;
		}
		if (ioctl(c->fd, KVM_RUN, 0) < 0) {
			int e = errno;

			if (e == EINTR) {
				stop = ARM64_STOP_SIGNAL;	/* a kick, or the caller's guard */
				break;
			}
			snprintf(why, sizeof(why), "KVM_RUN: %s", strerror(e));
			stop = -e;
			break;
		}
		c->st.exits++;
		if (one_exit(c, &stop, why, sizeof(why)))
			break;
	}
	stop_all(c, stop, why[0] ? why : NULL);
	return NULL;
}

int arm64_vm_run(struct arm64_vm *vm, uint64_t max_exits, struct arm64_run_stats *st,
		 char *err, size_t errlen)
{
	struct sigaction sa = { .sa_handler = kick_handler };	/* no SA_RESTART */
	int started = 1, ret;

	memset(st, 0, sizeof(*st));
	sigaction(KICK_SIGNAL, &sa, NULL);
	vm->max_exits = max_exits;
	vm->stop = NO_STOP;
	vm->err[0] = 0;
	vm->cpu[0].th = pthread_self();
	for (int i = 0; i < vm->ncpus; i++) {
		__atomic_store_n(&vm->cpu[i].started, i == 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&vm->cpu[i].run->immediate_exit, 0, __ATOMIC_SEQ_CST);
		memset(&vm->cpu[i].st, 0, sizeof(vm->cpu[i].st));
	}
	pthread_mutex_lock(&vm->lock);
	ret = uart_irq_sync(vm, vm->err, sizeof(vm->err));
	pthread_mutex_unlock(&vm->lock);
	if (ret) {
		snprintf(err, errlen, "arm64: %s", vm->err);
		return ret;
	}
	ret = arm64_vm_devices_start(vm, vm->err, sizeof(vm->err));
	if (ret) {
		snprintf(err, errlen, "%s", vm->err);
		return ret;
	}
	for (; started < vm->ncpus; started++) {
		ret = pthread_create(&vm->cpu[started].th, NULL, vcpu_loop, &vm->cpu[started]);
		if (ret) {
			snprintf(vm->err, sizeof(vm->err), "starting vCPU %d: %s", started,
				 strerror(ret));
			vm->stop = -ret;
			break;
		}
		__atomic_store_n(&vm->cpu[started].started, true, __ATOMIC_SEQ_CST);
	}
	if (!stopped(vm))
		vcpu_loop(&vm->cpu[0]);
	else
		stop_all(&vm->cpu[0], vm->stop, NULL);
	for (int i = 1; i < started; i++) {
		pthread_join(vm->cpu[i].th, NULL);
		__atomic_store_n(&vm->cpu[i].started, false, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&vm->cpu[0].started, false, __ATOMIC_SEQ_CST);
	arm64_vm_devices_stop(vm);
	for (int i = 0; i < vm->ncpus; i++) {
		st->exits += vm->cpu[i].st.exits;
		st->mmio_uart += vm->cpu[i].st.mmio_uart;
		st->mmio_virtio += vm->cpu[i].st.mmio_virtio;
		st->mmio_other += vm->cpu[i].st.mmio_other;
		if (vm->cpu[i].st.mmio_other)
			st->last_other_addr = vm->cpu[i].st.last_other_addr;
	}
	if (vm->stop < 0)
		snprintf(err, errlen, "arm64: %s", vm->err);
	return vm->stop;
}
