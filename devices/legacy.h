/* Small fixed PC devices with no state worth a header of their own. */
#ifndef MVM_LEGACY_H
#define MVM_LEGACY_H

struct vm;

/* Guest signal port; the guest init (guest/init) writes to it. */
#define GUEST_PORT_BASE       0x4f0
#define GUEST_PORT_BOOT_OFF   0
#define GUEST_PORT_BOOT_MAGIC 123
#define GUEST_PORT_EXIT_OFF   4
/* Snapshots (4-byte reads, for the guest agent): the generation changes on
 * every rollback or restore; then the agent reads the host's wall clock
 * (seconds, nanoseconds; re-read if the seconds moved) and fresh host
 * entropy, steps its clock and reseeds the kernel RNG. */
#define GUEST_PORT_GEN_OFF    8
#define GUEST_PORT_SEC_OFF    12
#define GUEST_PORT_NSEC_OFF   16
#define GUEST_PORT_RAND_OFF   20
#define GUEST_PORT_SIZE       24

int i8042_create(struct vm *vm);
int guest_port_create(struct vm *vm);

#endif
