/* The CLI side of a sandbox's JSON control API (docs/api.md) and its sockets. */
#ifndef MVM_API_CLIENT_H
#define MVM_API_CLIENT_H

#include <stddef.h>

/* How long a connect to a VMM's socket may wait (its backlog full). */
#define SB_CONNECT_TIMEOUT_MS 10000

/* Connect to the Unix socket at @path (< 108 bytes), waiting at most
 * @timeout_ms for room in the listener's backlog. fd, -ETIMEDOUT or -errno. */
int unix_connect_by(const char *path, int timeout_ms);
/* Connect to the Unix socket @file in NAME's state directory, whatever the
 * directory's length (through /proc/self/fd). fd or -errno. */
int sb_connect_unix(const char *name, const char *file);
/* One request line, one response line (malloc'd into *resp). 0 or -errno. */
int api_call(const char *name, const char *req, char **resp, int timeout_ms);
/* The VMM's "status" field ("running", "paused"). 0 or -errno. */
int api_status(const char *name, char *status, size_t cap);
/* {"op":@op}; 0 if the reply has "ok":true, else -errno with @err filled. */
int api_simple(const char *name, const char *op, char *err, size_t errlen);

#endif
