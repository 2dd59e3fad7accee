/*
 * MCP over stdio (JSON-RPC 2.0, one message per line): framing, dispatch of
 * initialize / ping / tools/list / tools/call, argument checks against each
 * tool's input schema, error codes. Pure: the tools' work is behind
 * function pointers, output goes through the caller's callback, so unit
 * tests drive it with strings.
 */
#ifndef MVM_MCP_RPC_H
#define MVM_MCP_RPC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define MCP_MAX_MESSAGE (4u << 20)	/* longer lines are refused, the server goes on */
#define MCP_LATEST_VERSION "2025-11-25"	/* @modelcontextprotocol/sdk 1.32's LATEST_PROTOCOL_VERSION */

enum mcp_code {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
};

struct mcp_server;

/* One tools/call while it runs. */
struct mcp_call {
	struct mcp_server *srv;
	const cJSON *progress_token;	/* NULL: the client asked for no progress */
	double progress;		/* the last value sent (they must increase) */
	char err[1024];			/* why the tool failed */
	char sandbox[160];		/* the host's name of the sandbox the arguments name (mcp_name) */
};

/*
 * A tool: @fn fills @out (the structuredContent object) and returns 0; or
 * returns -1 with c->err set (a tool error: isError result); or
 * MCP_INVALID_PARAMS with c->err set (a JSON-RPC error). Arguments reach
 * @fn only after they satisfied @input_schema.
 */
struct mcp_tool {
	const char *name, *title, *description;
	const char *input_schema, *output_schema;	/* JSON text; output may be NULL */
	int (*fn)(struct mcp_call *c, const cJSON *args, cJSON *out);
};

struct mcp_server {
	const struct mcp_tool *tools;
	size_t ntools;
	cJSON **in_schemas, **out_schemas;	/* parsed */
	char version[16];			/* negotiated protocol revision */
	bool initialized;
	/* Where notifications (progress) go: one message, no newline. */
	void (*send)(void *ctx, const char *msg);
	void *send_ctx;
	void *app;				/* the tools' context (tools/mcp/mcp_tools.h) */
};

/* Parse the tools' schemas. 0, or -EINVAL naming the tool on stderr. */
int mcp_server_init(struct mcp_server *s, const struct mcp_tool *tools, size_t ntools);
void mcp_server_free(struct mcp_server *s);

/*
 * Handle one message (@len bytes, NUL-terminated; a NUL inside is a parse
 * error). The reply as
 * a malloc'd single-line JSON text, or NULL when none is due
 * (notifications, responses, empty lines).
 */
char *mcp_handle(struct mcp_server *s, const char *msg, size_t len);
/* The error reply for @id (NULL: null id). malloc'd. */
char *mcp_error_reply(const cJSON *id, int code, const char *message);
/* Send notifications/progress for @c if it has a token (@message may be NULL). */
void mcp_progress(struct mcp_call *c, const char *message);

/* Line framing of the stdio transport. */
struct mcp_reader {
	char *buf;
	size_t len, start, cap;
	bool skipping;		/* inside a line longer than the cap */
};

/*
 * The next message from @fd into *msg (@*len bytes, NUL-terminated, valid
 * until the next call; trailing CR dropped; empty lines skipped).
 * 1 a message; 0 end of input; -EMSGSIZE a line over MCP_MAX_MESSAGE was
 * read and dropped whole (the caller answers it and goes on); -errno.
 */
int mcp_read_message(struct mcp_reader *r, int fd, char **msg, size_t *len);
void mcp_reader_free(struct mcp_reader *r);

#endif
