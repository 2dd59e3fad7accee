/*
 * A KVM exit decoded into a plain struct, and its dispatch to the device
 * buses. Decoding reads struct kvm_run; dispatch is a pure function of the
 * struct and the buses, so tests feed it synthetic exits without /dev/kvm.
 */
#ifndef MVM_EXIT_H
#define MVM_EXIT_H

#include <stdbool.h>
#include <stdint.h>

struct kvm_run;
struct bus;

enum exit_kind {
	EXIT_NONE,		/* nothing to do (e.g. interrupted by a signal) */
	EXIT_PIO,
	EXIT_MMIO,
	EXIT_SHUTDOWN,		/* triple fault: guest reboot */
	EXIT_SYSTEM_EVENT,	/* guest asked for reset/shutdown */
	EXIT_HLT,
	EXIT_FAIL,		/* entry failure or internal error */
	EXIT_UNKNOWN,
};

struct vm_exit {
	enum exit_kind kind;
	uint32_t raw_reason;
	uint64_t addr;		/* PIO port or MMIO address */
	uint32_t len;		/* access width: 1, 2, 4 or 8 */
	uint32_t count;		/* PIO repeat count (string I/O) */
	bool is_write;
	uint8_t *data;		/* points into kvm_run: count * len bytes */
	uint64_t detail;	/* fail/internal error code, system event type */
};

enum exit_action {
	EXIT_ACT_CONTINUE,
	EXIT_ACT_SHUTDOWN,	/* stop the VM cleanly */
	EXIT_ACT_ERROR,		/* stop the VM with an error */
};

/* Decode @run after KVM_RUN returned 0. */
void exit_decode(struct kvm_run *run, struct vm_exit *e);

/*
 * Route a decoded exit to the PIO or MMIO bus (reads fill e->data in place)
 * and say what the vCPU loop should do next.
 */
enum exit_action exit_dispatch(struct bus *pio, struct bus *mmio, struct vm_exit *e);

const char *exit_kind_name(enum exit_kind k);

#endif
