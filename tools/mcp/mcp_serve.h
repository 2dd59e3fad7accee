/* `mvm mcp`: the MCP server on stdin/stdout. */
#ifndef MVM_MCP_SERVE_H
#define MVM_MCP_SERVE_H

/* Serve until stdin ends. 0, or -errno if the channel broke. */
int mcp_serve(void);

#endif
