/* The MCP tools that have no runtime function yet run `mvm VERB ...` as a child. */
#ifndef MVM_MCP_SPAWN_H
#define MVM_MCP_SPAWN_H

#include "tools/mcp/mcp_rpc.h"
#include "tools/mcp/mcp_text.h"

/*
 * Run this binary with @argv (argv[0] is "mvm"), stdin /dev/null, stdout
 * into @out and stderr into @err (each kept up to its cap, the rest drained
 * and counted), sending a progress notification for @c every 2 s. The
 * child's exit status, 128+N if signal N ended it, or -errno.
 */
int mcp_spawn(struct mcp_call *c, char *const argv[], struct mcp_buf *out, struct mcp_buf *err);

#endif
