/* The VMM of one sandbox (tools/sandbox/vmm_serve.c): `mvm vmm NAME` for create/start,
 * and the ephemeral sandbox of `mvm run` (tools/sandbox/run_sandbox.c). */
#ifndef MVM_SANDBOX_VMM_H
#define MVM_SANDBOX_VMM_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/vm.h"

/* Run in NAME's state directory (the cwd): write "pid" atomically, the
 * VMM's pid as the host sees it (confine_pidns_self()). 0 or -errno. */
int sb_vmm_write_pid(void);

/*
 * In the state directory (the cwd): create the VM from @vc, serve the control
 * API on api.sock, run until the guest stops, log started/stopped events.
 * @res says how it ended (@res->message also when creating failed);
 * @guest_kib (may be NULL) the guest's resident RAM at the end. 0, or -errno
 * when the VM could not be created. @base (NULL: none) is the sandbox's disk
 * as created, before any checkpoint layer: checkpoints freeze layers above
 * it (snapshots/checkpoint.h). @cpu_quota: `create --cpu-quota` (0: none).
 * A pending `mvm restore` is loaded here.
 */
int sb_vmm_serve(const char *name, struct vm_config *vc, const struct vm_disk *base, int cpu_quota,
		 struct vm_result *res, uint64_t *guest_kib);

struct cJSON;
/* The "stopped" event for @r (outcome and message), or NULL (no memory). */
struct cJSON *sb_stopped_event(const struct vm_result *r);

/*
 * The VMM's own line in console.log, at @ms (event_now_ms): with @r NULL
 * "mvm: TIME VMM started: the guest boots", else "mvm: TIME guest stopped
 * (OUTCOME): MESSAGE" as in the "stopped" event. A whole line (cut to
 * @cap); its length, 0 if none fits.
 */
size_t sb_console_mark(char *buf, size_t cap, uint64_t ms, const struct vm_result *r);

struct rotlog;
/* In the state directory: open console.log capped (MVM_LOG_MAX) and
 * rotating; the VMM's stderr follows it if it is console.log. 0 or -errno. */
int sb_console_log_open(struct rotlog *log);

/* `mvm vmm NAME`: chdir to its state directory, load config.json, write the
 * pid file, serve until the VM ends. @ready_fd (-1: none): one byte written
 * to it, and closed, once the VMM serves and the guest is about to run.
 * 0 or -errno (message printed). */
int sb_vmm_main(const char *name, int ready_fd);

#endif
