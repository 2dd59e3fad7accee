/*
 * A whole VM's state file: header (vendor, CPUID fingerprint, memory
 * layout), the VM section, one section per vCPU and per device. Loading is
 * split so that nothing changes until everything validated: check decodes
 * and validates every section (device loads run with apply = false), apply
 * loads what check accepted. The caller reverts or maps memory in between.
 */
#ifndef MVM_VM_SNAP_H
#define MVM_VM_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/snap_buf.h"
#include "snapshots/state_file.h"

#define MVM_VERSION_STRING "mvm 0.1"

struct vm;
struct vm_snap_loaded;

/* This VM's header: vendor, fingerprint, layout, vCPU count. */
void vm_snap_header(struct vm *vm, struct snap_header *h);
/* Capture the paused VM into @w: header and sections; the caller may add
 * sections and then calls snap_state_finish(). 0 or -errno. */
int vm_snap_capture(struct vm *vm, struct snap_w *w, char *err, size_t errlen);
/* Parse and validate @buf for @vm; nothing in the VM changes. */
int vm_snap_check(struct vm *vm, const uint8_t *buf, size_t len, struct vm_snap_loaded **out,
		  char *err, size_t errlen);
/* Load what vm_snap_check accepted. @in_place: a rollback of this same VM
 * (CPUID is left alone). Guest memory must already hold the snapshot's. */
int vm_snap_apply(struct vm *vm, struct vm_snap_loaded *l, bool in_place, char *err, size_t errlen);
void vm_snap_loaded_free(struct vm_snap_loaded *l);

#endif
