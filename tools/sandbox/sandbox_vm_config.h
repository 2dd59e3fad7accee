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
	char mount[32], *argv[4];
};

/*
 * In the state directory (the cwd): @vc from @c: kernel, initramfs and extra
 * command line, the disk (its checkpoint layers if any) and `mvm run`'s
 * further disks, CPUs, RAM, the agent as the guest's command (mounting the
 * data disk), vsock, network with policy.json and events.jsonl, a pending
 * restore. Output fds are -1 (the caller sets vc->log or its fds). The one
 * builder of a sandbox's VM: `mvm vmm` and both paths of `mvm run` use it.
 * 0, or -errno with a message in @err.
 */
int sb_vm_config(const struct sb_config *c, struct sb_vm_bufs *b, struct vm_config *vc,
		 char *err, size_t errlen);

#endif
