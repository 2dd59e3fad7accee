/* Process hygiene for a VMM process: what it may not become, keep or leave behind. */
#ifndef MVM_CONFINE_HYGIENE_H
#define MVM_CONFINE_HYGIENE_H

/* At most this many descriptors: disks, vsock and slirp connections, files. */
#define CONFINE_NOFILE 4096

/*
 * Make the calling process a confined VMM's: no_new_privs (no setuid gain,
 * and seccomp without privilege), not dumpable (no core file, and other
 * processes of the user cannot ptrace it or read its memory), RLIMIT_CORE 0,
 * RLIMIT_NOFILE at most CONFINE_NOFILE, and every descriptor above 2 closed
 * except the @nkeep in @keep (a fork of the CLI inherits all of the CLI's).
 * 0 or -errno (the first step that failed; later steps still run).
 */
int confine_hygiene(const int *keep, int nkeep);

#endif
