/* Small fixed PC devices with no state worth a header of their own. */
#ifndef MVM_LEGACY_H
#define MVM_LEGACY_H

struct vm;

/* Guest signal port; the guest init (guest/init) writes to it. */
#define GUEST_PORT_BASE       0x4f0
#define GUEST_PORT_BOOT_OFF   0
#define GUEST_PORT_BOOT_MAGIC 123
#define GUEST_PORT_EXIT_OFF   4

int i8042_create(struct vm *vm);
int guest_port_create(struct vm *vm);

#endif
