/* Capabilities: none left in a confined process once its set-up is done. */
#ifndef MVM_CONFINE_CAPS_H
#define MVM_CONFINE_CAPS_H

/*
 * Make sure the calling process can never gain a capability again, while it
 * keeps the effective ones it has for the rest of its set-up: securebits
 * SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_NO_CAP_AMBIENT_RAISE set and
 * locked, SECBIT_KEEP_CAPS clear and locked (no root, setuid or ambient
 * route back; inherited across fork and exec), the ambient set cleared and
 * the bounding set emptied (what an exec could grant). Idempotent: what is
 * already so is not asked again. 0, or -errno of the first step that failed
 * (-EPERM without CAP_SETPCAP: where user namespaces are refused, an
 * unprivileged process cannot empty its bounding set); later steps still run.
 */
int confine_caps_bound(void);

/*
 * confine_caps_bound(), then the effective, permitted and inheritable sets
 * emptied. Capabilities are per thread: call it single-threaded, before the
 * threads that must inherit none are made, and before a seccomp filter that
 * forbids capset and prctl. 0 when no capability is left in any set of
 * this thread (bounding included), else -errno.
 */
int confine_caps_drop(void);

/*
 * 1 if the /proc/PID/status text @status shows no capability in any of
 * CapInh, CapPrm, CapEff, CapBnd and CapAmb; 0 if one holds any; -1 if one
 * of them is missing or not a hexadecimal number.
 */
int confine_caps_none(const char *status);

#endif
