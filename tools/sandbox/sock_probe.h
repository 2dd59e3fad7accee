/*
 * Whether a directory can hold the unix sockets a sandbox's VMM listens on
 * (api.sock, vsock.sock): 9p and some network or FUSE file systems cannot,
 * and a VMM would fail there only after the sandbox had been half made.
 */
#ifndef MVM_SOCK_PROBE_H
#define MVM_SOCK_PROBE_H

#include <stddef.h>

/*
 * Bind, listen on and connect to a probe socket in @dir, then remove it.
 * 0 if all worked; else -errno with a message in @err (@cap bytes) naming
 * @dir, the step that failed and what to do (pick another MVM_STATE_DIR).
 */
int sock_probe_dir(const char *dir, char *err, size_t cap);

#endif
