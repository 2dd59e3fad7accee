/*
 * The one i8042 behaviour a microVM needs: the CPU reset line. Linux's
 * reboot=k writes 0xfe to the command port; we end the VM there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/legacy.h"
#include "vmm/vm.h"

#define I8042_CMD_PORT   0x64
#define I8042_CMD_RESET  0xfe

static void i8042_read(void *opaque, uint64_t off, uint8_t *data, uint32_t len)
{
	/* Status: output buffer empty, input buffer empty — never busy. */
	memset(data, 0, len);
}

static void i8042_write(void *opaque, uint64_t off, const uint8_t *data, uint32_t len)
{
	struct vm *vm = opaque;

	if (data[0] == I8042_CMD_RESET)
		vm_request_stop(vm, VM_REBOOT, 0, "guest reset the machine");
}

static const struct bus_dev_ops i8042_ops = {
	.read = i8042_read,
	.write = i8042_write,
};

int i8042_create(struct vm *vm)
{
	return bus_add(&vm->pio, I8042_CMD_PORT, 1, &i8042_ops, vm);
}
