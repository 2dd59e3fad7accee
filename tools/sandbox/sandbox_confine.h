/* Confining a sandbox's VMM once it is set up, and saying what is in force. */
#ifndef MVM_SANDBOX_CONFINE_H
#define MVM_SANDBOX_CONFINE_H

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "vmm/vm.h"

#define SB_CONFINE_FILE "confine.json"

/*
 * In the state directory (the cwd), single-threaded, after the VM, its
 * devices and the control API are set up: new user/mount/IPC namespaces
 * hiding every other sandbox's state (where allowed), then Landlock (read:
 * the kernel, initrd, disks and image base directories of @vc; read-write:
 * the state directory; where the kernel has it). The network helper of @vm
 * (started with its devices) runs outside those namespaces: the VMM's new
 * network namespace is empty. The seccomp filters follow
 * in vm_run. The cgroup (tools/sandbox/sandbox_cgroup.h) comes first, with
 * @cpu_quota (percent of one CPU, 0: none). Writes SB_CONFINE_FILE and a "confined" event saying what is in
 * force; what could not be had is reported there, never fatal. Before the
 * report, it waits for the network helper (started in the background with
 * the devices): 0, or -errno with @err saying why the helper did not start.
 */
int sb_confine(const char *name, struct vm *vm, const struct vm_config *vc, int cpu_quota,
	       char *err, size_t errlen);

/*
 * What protects NAME's VMM @pid, as an object for ls/inspect/events:
 * seccomp and no_new_privs read from /proc/PID/status (the kernel's word),
 * landlock, namespaces, cgroup and helper_pid from the VMM's SB_CONFINE_FILE;
 * "helper": the network helper's pid, landlock, and its own seccomp and
 * no_new_privs from its /proc/PID/status (null: no helper, or it is gone).
 * NULL when @pid is not running.
 */
cJSON *sb_protections(const char *name, pid_t pid);

#endif
