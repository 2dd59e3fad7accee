/*
 * What the MCP tools do through a sandbox's guest agent
 * (docs/agent-protocol.md): run a command with its output captured, read
 * one file, write one file. Output, file contents and messages from the
 * guest are bounded here; the caller makes them valid text.
 */
#ifndef MVM_MCP_GUEST_H
#define MVM_MCP_GUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "guest/agent/proto.h"
#include "tools/mcp/mcp_rpc.h"
#include "tools/mcp/mcp_text.h"

/*
 * Run @e (its argv, env, cwd, timeout_ms) in sandbox @name; stdout and
 * stderr into @out/@err (bounded by their caps), progress for @c every 2 s.
 * 0 with @x filled; -1 with c->err set.
 */
int mcp_guest_exec(struct mcp_call *c, const char *name, const struct ap_exec *e,
		   struct mcp_buf *out, struct mcp_buf *err, struct ap_exit *x);
/*
 * The regular file at @path (absolute) in sandbox @name into @data (at most
 * its cap; @data->total is the file's size as sent). 0 or -1 with c->err.
 */
int mcp_guest_read(struct mcp_call *c, const char *name, const char *path, struct mcp_buf *data);
/* Write @n bytes as the file @path (absolute; its directory must exist), mode @mode. 0 or -1. */
int mcp_guest_write(struct mcp_call *c, const char *name, const char *path,
		    const uint8_t *p, size_t n, uint32_t mode);

#endif
