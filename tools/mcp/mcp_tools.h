/* The tools `mvm mcp` offers: their schemas and what they do. */
#ifndef MVM_MCP_TOOLS_H
#define MVM_MCP_TOOLS_H

#include <stddef.h>

#include "tools/mcp/mcp_rpc.h"
#include "tools/mcp/mcp_text.h"

/* The table, in tools/list order. */
extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_ntools;

/* Shared by the tool files. */
#define MCP_NAME_SCHEMA \
	"\"name\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$\"," \
	"\"description\":\"the sandbox's name\"}"
#define MCP_TAG_PATTERN "^[A-Za-z0-9][A-Za-z0-9_.-]{0,46}$"

/* @key's string in @args, or NULL. */
const char *mcp_arg_str(const cJSON *args, const char *key);
/* @key's number in @args, or @dflt. */
double mcp_arg_num(const cJSON *args, const char *key, double dflt);
/* The sandbox named in @args exists (else c->err set). */
int mcp_need_sandbox(struct mcp_call *c, const char *name);
/* Add @p[0..n) (total bytes @total) to @o as the valid-UTF-8 string @key. 0 or -1. */
int mcp_add_text(cJSON *o, const char *key, const uint8_t *p, size_t n, uint64_t total);
/* A failed child: c->err from its status and (bounded, cleaned) stderr. Returns -1. */
int mcp_child_failed(struct mcp_call *c, const char *verb, int status, const struct mcp_buf *err);

/* The handlers (tools/mcp/mcp_tools_*.c). */
int mcp_tool_create(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_list(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_remove(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_exec(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_file_read(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_file_write(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_checkpoint(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_rollback(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_diff(struct mcp_call *c, const cJSON *args, cJSON *out);
int mcp_tool_promote(struct mcp_call *c, const cJSON *args, cJSON *out);

#endif
