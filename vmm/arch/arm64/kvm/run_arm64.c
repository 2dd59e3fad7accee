/*
 * The arm64 exit loop (aarch64 only): the UART's MMIO, its interrupt line
 * to the vGIC, PSCI's system events. The in-kernel vGIC and timer take
 * their own accesses; anything else that reaches here is an access to no
 * device, answered as a bus would with nothing on it.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/arch/arm64/kvm/arm64_vm.h"
#include "vmm/arch/arm64/regs.h"

/* The UART's level to the vGIC, only when it changed. */
static int uart_irq_sync(struct arm64_vm *vm, char *err, size_t errlen)
{
	int level = arm64_uart_irq(&vm->uart);
	struct kvm_irq_level irq = { .irq = arm64_irq_line_spi(vm->m.uart.spi), .level = level };

	if (level == vm->uart_level)
		return 0;
	if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq) < 0) {
		int e = errno;

		snprintf(err, errlen, "arm64: KVM_IRQ_LINE (UART, SPI %u): %s", vm->m.uart.spi,
			 strerror(e));
		return -e;
	}
	vm->uart_level = level;
	return 0;
}

static int mmio(struct arm64_vm *vm, struct arm64_run_stats *st, char *err, size_t errlen)
{
	struct kvm_run *r = vm->run;
	uint64_t a = r->mmio.phys_addr, off = a - vm->m.uart.base;
	uint32_t len = r->mmio.len;

	if (a >= vm->m.uart.base && off < vm->m.uart.size && len >= 1 && len <= 8) {
		/* 8-bit registers: a wider access sees its low byte. */
		st->mmio_uart++;
		if (r->mmio.is_write) {
			arm64_uart_write(&vm->uart, off, r->mmio.data[0]);
		} else {
			memset(r->mmio.data, 0, sizeof(r->mmio.data));
			r->mmio.data[0] = arm64_uart_read(&vm->uart, off);
		}
		return uart_irq_sync(vm, err, errlen);
	}
	st->mmio_other++;
	st->last_other_addr = a;
	if (!r->mmio.is_write)
		memset(r->mmio.data, 0, sizeof(r->mmio.data));
	return 0;
}

static int system_event(struct arm64_vm *vm, char *err, size_t errlen)
{
	switch (vm->run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN: return ARM64_STOP_POWER_OFF;
	case KVM_SYSTEM_EVENT_RESET:    return ARM64_STOP_RESET;
	case KVM_SYSTEM_EVENT_CRASH:    return ARM64_STOP_CRASH;
	default:
		snprintf(err, errlen, "arm64: unknown system event %u",
			 vm->run->system_event.type);
		return -EPROTO;
	}
}

int arm64_vm_run(struct arm64_vm *vm, uint64_t max_exits, struct arm64_run_stats *st,
		 char *err, size_t errlen)
{
	int ret = uart_irq_sync(vm, err, errlen);

	memset(st, 0, sizeof(*st));
	while (!ret) {
		if (max_exits && st->exits >= max_exits)
			return ARM64_STOP_EXITS;
		if (ioctl(vm->vcpu_fd, KVM_RUN, 0) < 0) {
			int e = errno;

			if (e == EINTR)
				return ARM64_STOP_SIGNAL;
			snprintf(err, errlen, "arm64: KVM_RUN: %s", strerror(e));
			return -e;
		}
		st->exits++;
		switch (vm->run->exit_reason) {
		case KVM_EXIT_MMIO:
			ret = mmio(vm, st, err, errlen);
			break;
		case KVM_EXIT_SYSTEM_EVENT:
			return system_event(vm, err, errlen);
		case KVM_EXIT_INTR:
			return ARM64_STOP_SIGNAL;
		default:
			snprintf(err, errlen, "arm64: KVM exit %u that mvm does not serve",
				 vm->run->exit_reason);
			return -EPROTO;
		}
	}
	return ret;
}
