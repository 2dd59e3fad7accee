/*
 * mvm-init's guest port: "booted" when init starts, the command's wait
 * status when it ends (devices/guest_port.c on the host). One side per
 * architecture, chosen by the Makefile: guest/init/arch/x86.c (port I/O at
 * 0x4f0), guest/init/arch/arm64.c (none yet: no port I/O on arm64; the
 * sandbox path's agent reports statuses over vsock instead).
 */
#ifndef MVM_GUEST_INIT_PORT_H
#define MVM_GUEST_INIT_PORT_H

#include <stdint.h>

/* 0 when the port can be used, else -1 (then say port_missing). */
int port_open(void);
void port_boot(void);
void port_exit(uint32_t status);
extern const char port_missing[];

/* Load the kernel modules listed in /lib/modules/mvm/order (one file name
 * a line, in that directory, loaded in order): the arm64 guest's Debian
 * kernel has its virtio-mmio, vsock and virtio-net drivers as modules. No
 * list: nothing to do (x86's kernel has them built in). guest/init/modules.c. */
void load_modules(void (*say)(const char *msg));

#endif
