/*
 * The guest's tree stream (docs/agent-protocol.md, GET) as tar bytes, read
 * as the HTTP stream asks for them (tools/serve/serve_tree_out.c).
 */
#ifndef MVM_SERVE_TREE_OUT_H
#define MVM_SERVE_TREE_OUT_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "guest/agent/proto.h"

/*
 * A converter for the stream on @fd (it owns @fd from now on), whose root
 * ENTRY @root the caller read: a directory (its contents follow) or a file
 * (named @root_name in the archive; at most @cap bytes). File bytes in all
 * at most @cap. NULL when out of memory or @root is over the cap.
 */
void *sv_tree_out_new(int fd, uint64_t cap, const struct ap_entry *root, const char *root_name, time_t now);
/* Up to @max bytes of the archive into @buf: the count, 0 at its end, -1 when the stream must be cut. */
ssize_t sv_tree_out_read(void *cls, char *buf, size_t max);
/* Close the stream and free. */
void sv_tree_out_free(void *cls);

#endif
