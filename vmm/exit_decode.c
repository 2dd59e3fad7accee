/* Decode struct kvm_run into struct vm_exit (no ioctls, no side effects). */
#include <linux/kvm.h>
#include <string.h>

#include "vmm/exit.h"

static void decode_io(struct kvm_run *run, struct vm_exit *e)
{
	e->kind = EXIT_PIO;
	e->addr = run->io.port;
	e->len = run->io.size;
	e->count = run->io.count;
	e->is_write = run->io.direction == KVM_EXIT_IO_OUT;
	/* data_offset is KVM's, not the guest's: kvm_run is one mapped page+. */
	e->data = (uint8_t *)run + run->io.data_offset;
}

static void decode_mmio(struct kvm_run *run, struct vm_exit *e)
{
	e->kind = EXIT_MMIO;
	e->addr = run->mmio.phys_addr;
	e->len = run->mmio.len;
	e->count = 1;
	e->is_write = run->mmio.is_write;
	e->data = run->mmio.data;
}

void exit_decode(struct kvm_run *run, struct vm_exit *e)
{
	memset(e, 0, sizeof(*e));
	e->raw_reason = run->exit_reason;
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		decode_io(run, e);
		break;
	case KVM_EXIT_MMIO:
		decode_mmio(run, e);
		break;
	case KVM_EXIT_SHUTDOWN:
		e->kind = EXIT_SHUTDOWN;
		break;
	case KVM_EXIT_SYSTEM_EVENT:
		e->kind = EXIT_SYSTEM_EVENT;
		e->detail = run->system_event.type;
		break;
	case KVM_EXIT_HLT:
		e->kind = EXIT_HLT;
		break;
	case KVM_EXIT_INTR:
		e->kind = EXIT_NONE;
		break;
	case KVM_EXIT_FAIL_ENTRY:
		e->kind = EXIT_FAIL;
		e->detail = run->fail_entry.hardware_entry_failure_reason;
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		e->kind = EXIT_FAIL;
		e->detail = run->internal.suberror;
		break;
	default:
		e->kind = EXIT_UNKNOWN;
		break;
	}
}
