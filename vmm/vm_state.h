/*
 * VM-wide KVM state for snapshots: PIT2, kvmclock, the three irqchips (PIC
 * master, PIC slave, IOAPIC), restored in that order; and KVM's dirty-page
 * log. The thin KVM part; decode is pure and unit-tested.
 */
#ifndef MVM_VM_STATE_H
#define MVM_VM_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/snap_buf.h"

#define VM_STATE_VERSION 1

struct kvm;
struct vm_kvm_state;

int vm_state_save(struct kvm *k, struct snap_w *w);
int vm_state_decode(const uint8_t *p, size_t len, struct vm_kvm_state **out);
int vm_state_apply(struct kvm *k, const struct vm_kvm_state *s, char *err, size_t errlen);
void vm_state_free(struct vm_kvm_state *s);

/* Turn KVM's dirty log on for memory slot @slot (re-registering it). */
int kvm_dirty_log_enable(struct kvm *k, uint32_t slot, uint64_t gpa, uint64_t size, void *host);
/* Fetch and clear slot @slot's dirty bitmap (one bit per page, u64 words). */
int kvm_dirty_log_get(struct kvm *k, uint32_t slot, uint64_t *bitmap);

#endif
