/*
 * mvm-init's guest port on arm64: none yet (guest/init/port.h). arm64 has
 * no port I/O; an MMIO page would need /dev/mem. The direct `mvm run`
 * path, which reads the exit status from the port, is therefore x86's;
 * the sandbox path (create/exec/run through the agent) reports it itself.
 */
#include "guest/init/port.h"

const char port_missing[] = "no guest port on arm64: the agent reports exit statuses";

int port_open(void)
{
	return -1;
}

void port_boot(void)
{
}

void port_exit(uint32_t status)
{
	(void)status;
}
