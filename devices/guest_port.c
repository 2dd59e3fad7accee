/*
 * mvm's guest signal port, written by the guest init: a boot-timer byte when
 * init starts (as Firecracker's boot timer), and the command's wait status
 * when it ends. Values are plain data: nothing here trusts them beyond that.
 */
#include <string.h>

#include "devices/legacy.h"
#include "vmm/vm.h"

static void port_read(void *opaque, uint64_t off, uint8_t *data, uint32_t len)
{
	memset(data, 0, len);
}

static void port_write(void *opaque, uint64_t off, const uint8_t *data, uint32_t len)
{
	struct vm *vm = opaque;
	uint32_t v = 0;

	memcpy(&v, data, len < 4 ? len : 4);
	if (off == GUEST_PORT_BOOT_OFF && len == 1 && v == GUEST_PORT_BOOT_MAGIC)
		vm_guest_booted(vm);
	else if (off == GUEST_PORT_EXIT_OFF && len == 4)
		vm_guest_exited(vm, v);
}

static const struct bus_dev_ops port_ops = {
	.read = port_read,
	.write = port_write,
};

int guest_port_create(struct vm *vm)
{
	return bus_add(&vm->pio, GUEST_PORT_BASE, 8, &port_ops, vm);
}
