/* mvm-init's guest port on x86: port I/O (guest/init/port.h). */
#include <sys/io.h>

#include "guest/init/port.h"

/* Must match devices/legacy.h. */
#define GUEST_PORT_BASE       0x4f0
#define GUEST_PORT_BOOT_MAGIC 123
#define GUEST_PORT_EXIT_OFF   4

const char port_missing[] = "no port I/O (kernel without CONFIG_X86_IOPL_IOPERM): exit status lost";

int port_open(void)
{
	return ioperm(GUEST_PORT_BASE, 8, 1) == 0 ? 0 : -1;
}

void port_boot(void)
{
	outb(GUEST_PORT_BOOT_MAGIC, GUEST_PORT_BASE);
}

void port_exit(uint32_t status)
{
	outl(status, GUEST_PORT_BASE + GUEST_PORT_EXIT_OFF);
}
