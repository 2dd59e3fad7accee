/* The tools `mvm mcp` offers: their schemas and what they do. */
#ifndef MVM_MCP_TOOLS_H
#define MVM_MCP_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/mcp/mcp_rpc.h"
#include "tools/mcp/mcp_text.h"
#include "tools/sandbox/operator_policy.h"

/* The tools' context (mcp_server.app): the operator's policy and who we are. */
struct mcp_app {
	struct op_policy pol;
	char owner[OP_OWNER_MAX];	/* "mcp:ID" or "tenant:NAME": recorded on what this server creates */
	/*
	 * The caller's namespace: "" (stdio: names are the host's), or
	 * "TENANT." for a tenant of `mvm serve` (tools/serve/serve_mcp.c), whose
	 * sandbox NAME is the host's TENANT.NAME, as in its HTTP API.
	 */
	char ns[32];
	/*
	 * Optional (mvm serve: the tenant's quota): called by sandbox_create
	 * before the create with its host name, vCPUs and memory in bytes; a
	 * slot >= 0, or -1 with @err. create_done() gets the slot back after
	 * the create (@ok: it made the sandbox) and may refuse it after all
	 * (-1 with @err: the sandbox was removed).
	 */
	int (*create_reserve)(void *ctx, const char *host, int cpus, uint64_t memory, char *err, size_t cap);
	int (*create_done)(void *ctx, int slot, const char *host, bool ok, char *err, size_t cap);
	/*
	 * Optional (mvm serve: the tenant's quota), called by checkpoint
	 * before the VMM is asked, with the sandbox's host name: a slot >= 0,
	 * or -1 with @err; checkpoint_done() gets the slot back after.
	 */
	int (*checkpoint_reserve)(void *ctx, const char *host, char *err, size_t cap);
	void (*checkpoint_done)(void *ctx, int slot);
	void *hook_ctx;
};

/* @c's context; NULL in a server without one (unit tests), where every
 * sandbox is out of scope. */
static inline struct mcp_app *mcp_app_of(const struct mcp_call *c)
{
	return c->srv ? (struct mcp_app *)c->srv->app : NULL;
}

/* The table, in tools/list order. */
extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_ntools;

/* Shared by the tool files. */
#define MCP_NAME_SCHEMA \
	"\"name\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$\"," \
	"\"description\":\"the sandbox's name\"}"
#define MCP_TAG_PATTERN "^[A-Za-z0-9][A-Za-z0-9_.-]{0,46}$"

/* The host's name of the sandbox @args names ("name" with the caller's
 * namespace, mcp_app.ns); NULL without one, "" when it would be too long
 * (a name no sandbox has). */
const char *mcp_name(struct mcp_call *c, const cJSON *args);
/* @host as the caller names it (its namespace taken off), or NULL when it
 * is not in the caller's namespace. */
const char *mcp_caller_name(const struct mcp_call *c, const char *host);

/* @key's string in @args, or NULL. */
const char *mcp_arg_str(const cJSON *args, const char *key);
/* @key's number in @args, or @dflt. */
double mcp_arg_num(const cJSON *args, const char *key, double dflt);
/* The sandbox @name exists and is in this server's scope (else c->err
 * "no sandbox named NAME", the same for another owner's). 0 or -1. */
int mcp_need_sandbox(struct mcp_call *c, const char *name);
/* Add @p[0..n) (total bytes @total) to @o as the valid-UTF-8 string @key. 0 or -1. */
int mcp_add_text(cJSON *o, const char *key, const uint8_t *p, size_t n, uint64_t total);
/* A failed child: c->err from its status and (bounded, cleaned) stderr. Returns -1. */
int mcp_child_failed(struct mcp_call *c, const char *verb, int status, const struct mcp_buf *err);

/*
 * promote's argv into @v (@cap entries including the NULL): `mvm promote
 * --out @out [--check C]... [--workspace W] [--check-timeout T] NAME`.
 * The count, or -E2BIG if @cap is too small (nothing written past it).
 */
#define MCP_PROMOTE_ARGV_MAX (4 + 2 * 64 + 2 + 2 + 1 + 1)
int mcp_promote_argv(const cJSON *args, const char *out, char **v, int cap, char *tmo, size_t tmocap);

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
