/* The VM configuration of a sandbox, built from its config.json in one place. */
#ifndef MVM_SANDBOX_VM_CONFIG_H
#define MVM_SANDBOX_VM_CONFIG_H

#include <limits.h>
#include <stddef.h>

#include "snapshots/disk_layers.h"
#include "tools/sandbox/sandbox.h"
#include "vmm/vm.h"

/* The strings a vm_config points into; owned by the caller, and must
 * outlive the vm_config built on them. */
struct sb_vm_bufs {
	char kernel[PATH_MAX], initrd[PATH_MAX], base_dir[PATH_MAX];
	char top_file[DISK_LAYER_NAME], top_fmt[8];
	char restore_dir[PATH_MAX], restore_mem[PATH_MAX + 8];
};

/*
 * In the state directory (the cwd): @vc from @c: kernel and initramfs, the
 * disk (its checkpoint layers if any), CPUs, RAM, the agent as the guest's
 * command, vsock, network with policy.json and events.jsonl, a pending
 * restore. Output fds are -1 (the caller sets vc->log or its fds).
 * 0, or -errno with a message in @err.
 */
int sb_vm_config(const struct sb_config *c, struct sb_vm_bufs *b, struct vm_config *vc,
		 char *err, size_t errlen);

#endif
