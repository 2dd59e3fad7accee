/* A PID namespace for a VMM: the host's processes out of sight and out of reach. */
#ifndef MVM_CONFINE_PIDNS_H
#define MVM_CONFINE_PIDNS_H

#include <sys/types.h>

#include "vmm/confine/namespaces.h"

/*
 * First thing on a VMM's start path, single-threaded, before anything is set
 * up (KVM ties a VM to the process that made it, so the VMM cannot move into
 * a PID namespace later; unshare(CLONE_NEWPID) moves only the children):
 * new user and PID namespaces, then a fork. The parent (the keeper), left
 * in the host's PID namespace, drops every capability, installs its own
 * seccomp filter (confine/seccomp_keeper.c) and only waits: it exits as the
 * child does (the child's exit status, or the same signal), so whoever
 * watches it (sb_start, mvm run) still sees the VMM's life. The child
 * returns: pid 1 of the new namespace, killed (SIGKILL) if the parent dies,
 * in a new mount and IPC namespace too, with a /proc of its own namespace,
 * so the network helper it starts later shares all of that: neither sees
 * nor signals any host process. It keeps its effective capabilities for the
 * rest of set-up, but can gain none (confine_caps_bound(): what it execs,
 * the network helper, starts with none).
 *
 * Returns, in the child, the CONFINE_NS_* now in force (CONFINE_NS_USER,
 * CONFINE_NS_PID, and CONFINE_NS_MOUNT | CONFINE_NS_IPC where those were
 * made too); 0 in the only process where the namespaces are not allowed
 * (nothing changed: the caller goes on as before); -errno if the fork failed
 * (the caller ends).
 */
int confine_pidns_enter(void);

/* What confine_pidns_enter() put in force (0 before, or where refused). */
int confine_pidns_flags(void);

/* The pid the host (the CLI, the host's /proc) knows this process by:
 * getpid() outside a PID namespace. */
pid_t confine_pidns_self(void);

/*
 * The host's pid of @local, a child of this process named by its pid in our
 * namespace (read through the host's /proc, kept open until
 * confine_pidns_seal()); @local itself outside a PID namespace or when it
 * cannot be read.
 */
pid_t confine_pidns_host_pid(pid_t local);

/* Close the host's /proc: called once the pids are known, before confinement. */
void confine_pidns_seal(void);

/* The "Pid:" of a pidfd's /proc fdinfo text; -1 if absent or not a pid. */
pid_t confine_fdinfo_pid(const char *text);

#endif
