/*
 * JSON-RPC 2.0 dispatch for MCP (tools/mcp/mcp_rpc.h). Every message is
 * untrusted: anything malformed gets the matching JSON-RPC error, never an
 * abort. Batches (JSON arrays) were removed from MCP in 2025-06-18; they
 * are answered with one Invalid Request error.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mcp/mcp_rpc.h"
#include "tools/mcp/mcp_schema.h"
#include "tools/mcp/mcp_text.h"

/* Revisions we speak, newest first; a client asking for one of these gets it. */
static const char *const versions[] = { MCP_LATEST_VERSION, "2025-06-18", "2025-03-26", "2024-11-05" };

int mcp_server_init(struct mcp_server *s, const struct mcp_tool *tools, size_t ntools)
{
	s->tools = tools;
	s->ntools = ntools;
	s->in_schemas = calloc(ntools + 1, sizeof(cJSON *));
	s->out_schemas = calloc(ntools + 1, sizeof(cJSON *));
	if (!s->in_schemas || !s->out_schemas)
		return -ENOMEM;
	for (size_t i = 0; i < ntools; i++) {
		s->in_schemas[i] = cJSON_Parse(tools[i].input_schema);
		s->out_schemas[i] = tools[i].output_schema ? cJSON_Parse(tools[i].output_schema) : NULL;
		if (!cJSON_IsObject(s->in_schemas[i]) ||
		    (tools[i].output_schema && !cJSON_IsObject(s->out_schemas[i]))) {
			fprintf(stderr, "mvm mcp: the schema of tool %s is not a JSON object\n", tools[i].name);
			return -EINVAL;
		}
	}
	snprintf(s->version, sizeof(s->version), "%s", MCP_LATEST_VERSION);
	return 0;
}

void mcp_server_free(struct mcp_server *s)
{
	for (size_t i = 0; i < s->ntools && s->in_schemas; i++) {
		cJSON_Delete(s->in_schemas[i]);
		if (s->out_schemas)
			cJSON_Delete(s->out_schemas[i]);
	}
	free(s->in_schemas);
	free(s->out_schemas);
	s->in_schemas = s->out_schemas = NULL;
}

static char *print_free(cJSON *o)
{
	char *t = o ? cJSON_PrintUnformatted(o) : NULL;

	cJSON_Delete(o);
	return t;
}

static cJSON *envelope(const cJSON *id)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	return o;
}

char *mcp_error_reply(const cJSON *id, int code, const char *message)
{
	cJSON *o = envelope(id), *e = cJSON_AddObjectToObject(o, "error");

	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	return print_free(o);
}

static char *result_reply(const cJSON *id, cJSON *result)
{
	cJSON *o = envelope(id);

	cJSON_AddItemToObject(o, "result", result);
	return print_free(o);
}

void mcp_progress(struct mcp_call *c, const char *message)
{
	cJSON *o, *p;
	char *t;

	if (!c->progress_token || !c->srv->send)
		return;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddStringToObject(o, "method", "notifications/progress");
	p = cJSON_AddObjectToObject(o, "params");
	cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(c->progress_token, 1));
	cJSON_AddNumberToObject(p, "progress", ++c->progress);
	if (message)
		cJSON_AddStringToObject(p, "message", message);
	t = print_free(o);
	if (t)
		c->srv->send(c->srv->send_ctx, t);
	free(t);
}

static char *initialize(struct mcp_server *s, const cJSON *id, const cJSON *params)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	cJSON *r, *caps, *info;

	if (!cJSON_IsString(v))
		return mcp_error_reply(id, MCP_INVALID_PARAMS, "initialize: params.protocolVersion must be a string");
	snprintf(s->version, sizeof(s->version), "%s", MCP_LATEST_VERSION);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (!strcmp(v->valuestring, versions[i]))
			snprintf(s->version, sizeof(s->version), "%s", versions[i]);
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "protocolVersion", s->version);
	caps = cJSON_AddObjectToObject(r, "capabilities");
	cJSON_AddFalseToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged");
	info = cJSON_AddObjectToObject(r, "serverInfo");
	cJSON_AddStringToObject(info, "name", "mvm");
	cJSON_AddStringToObject(info, "title", "mvm microVM sandboxes");
	cJSON_AddStringToObject(info, "version", "0.1.0");
	cJSON_AddStringToObject(r, "instructions",
		"Each sandbox is a KVM microVM named by the caller. Create one with sandbox_create "
		"(no network unless you pass allow rules), run shell commands with sandbox_exec, "
		"move files with file_read/file_write, checkpoint and roll back, review changes with "
		"diff and promote, and remove it with sandbox_remove.");
	return result_reply(id, r);
}

static char *tools_list(struct mcp_server *s, const cJSON *id)
{
	cJSON *r = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(r, "tools");

	for (size_t i = 0; i < s->ntools; i++) {
		const struct mcp_tool *t = &s->tools[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", t->name);
		cJSON_AddStringToObject(o, "title", t->title);
		cJSON_AddStringToObject(o, "description", t->description);
		cJSON_AddItemToObject(o, "inputSchema", cJSON_Duplicate(s->in_schemas[i], 1));
		if (s->out_schemas[i])
			cJSON_AddItemToObject(o, "outputSchema", cJSON_Duplicate(s->out_schemas[i], 1));
		cJSON_AddItemToArray(arr, o);
	}
	return result_reply(id, r);
}

static cJSON *text_content(const char *text)
{
	cJSON *arr = cJSON_CreateArray(), *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "type", "text");
	cJSON_AddStringToObject(o, "text", text);
	cJSON_AddItemToArray(arr, o);
	return arr;
}

static char *run_tool(struct mcp_server *s, size_t i, const cJSON *id, const cJSON *args,
		      const cJSON *token)
{
	struct mcp_call c = { .srv = s, .progress_token = token };
	cJSON *out = cJSON_CreateObject(), *r = cJSON_CreateObject();
	char *text, *reply;
	int ret = s->tools[i].fn(&c, args, out);

	if (ret) {
		/* Messages may quote the guest: valid UTF-8 before they go out. */
		text = mcp_utf8_clean((const uint8_t *)c.err, strlen(c.err), strlen(c.err));
		cJSON_Delete(out);
		if (ret == MCP_INVALID_PARAMS) {
			cJSON_Delete(r);
			reply = mcp_error_reply(id, MCP_INVALID_PARAMS, text ? text : "invalid params");
		} else {
			cJSON_AddItemToObject(r, "content", text_content(text && text[0] ? text : "the tool failed"));
			cJSON_AddTrueToObject(r, "isError");
			reply = result_reply(id, r);
		}
		free(text);
		return reply;
	}
	/* The same JSON as text, for clients that do not read structuredContent. */
	text = cJSON_PrintUnformatted(out);
	cJSON_AddItemToObject(r, "content", text_content(text ? text : "{}"));
	free(text);
	cJSON_AddItemToObject(r, "structuredContent", out);
	cJSON_AddFalseToObject(r, "isError");
	return result_reply(id, r);
}

static char *tools_call(struct mcp_server *s, const cJSON *id, const cJSON *params)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	char err[768], msg[1024];
	cJSON *empty = NULL;
	char *reply;

	if (!cJSON_IsString(name))
		return mcp_error_reply(id, MCP_INVALID_PARAMS, "tools/call: params.name must be a string");
	if (args && !cJSON_IsObject(args))
		return mcp_error_reply(id, MCP_INVALID_PARAMS, "tools/call: params.arguments must be an object");
	if (token && !cJSON_IsString(token) && !cJSON_IsNumber(token))
		return mcp_error_reply(id, MCP_INVALID_PARAMS, "tools/call: _meta.progressToken must be a string or a number");
	for (size_t i = 0; i < s->ntools; i++) {
		if (strcmp(s->tools[i].name, name->valuestring))
			continue;
		if (!args)
			args = empty = cJSON_CreateObject();
		if (mcp_schema_check(s->in_schemas[i], args, err, sizeof(err))) {
			snprintf(msg, sizeof(msg), "invalid arguments for %s: %s", s->tools[i].name, err);
			reply = mcp_error_reply(id, MCP_INVALID_PARAMS, msg);
		} else {
			reply = run_tool(s, i, id, args, token);
		}
		cJSON_Delete(empty);
		return reply;
	}
	snprintf(msg, sizeof(msg), "unknown tool: %.200s (see tools/list)", name->valuestring);
	return mcp_error_reply(id, MCP_INVALID_PARAMS, msg);
}

static char *dispatch(struct mcp_server *s, const char *method, const cJSON *id, const cJSON *params)
{
	char msg[300];

	if (!strcmp(method, "initialize"))
		return initialize(s, id, params);
	if (!strcmp(method, "ping"))
		return result_reply(id, cJSON_CreateObject());
	if (!strcmp(method, "tools/list"))
		return tools_list(s, id);
	if (!strcmp(method, "tools/call"))
		return tools_call(s, id, params);
	snprintf(msg, sizeof(msg), "method not found: %.200s", method);
	return mcp_error_reply(id, MCP_METHOD_NOT_FOUND, msg);
}

/* A valid request id: a string or an integer (MCP: never null). */
static bool id_ok(const cJSON *id)
{
	return cJSON_IsString(id) ||
	       (cJSON_IsNumber(id) && fabs(id->valuedouble) < 9007199254740992.0 &&
		id->valuedouble == floor(id->valuedouble));
}

static char *handle_object(struct mcp_server *s, const cJSON *m)
{
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(m, "jsonrpc");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(m, "params");

	if (!method && id && (cJSON_GetObjectItem(m, "result") || cJSON_GetObjectItem(m, "error")))
		return NULL;	/* a response to nothing we asked: ignored */
	if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0"))
		return mcp_error_reply(id_ok(id) ? id : NULL, MCP_INVALID_REQUEST,
				       "invalid request: \"jsonrpc\" must be \"2.0\"");
	if (id && !id_ok(id))
		return mcp_error_reply(NULL, MCP_INVALID_REQUEST,
				       "invalid request: \"id\" must be a string or an integer");
	if (!cJSON_IsString(method))
		return id ? mcp_error_reply(id, MCP_INVALID_REQUEST,
					    "invalid request: \"method\" must be a string") : NULL;
	if (!id) {
		/* A notification: never answered, even when unknown or malformed. */
		if (!strcmp(method->valuestring, "notifications/initialized"))
			s->initialized = true;
		return NULL;
	}
	if (params && !cJSON_IsObject(params))
		return mcp_error_reply(id, MCP_INVALID_PARAMS, "invalid params: \"params\" must be an object");
	return dispatch(s, method->valuestring, id, params);
}

char *mcp_handle(struct mcp_server *s, const char *msg, size_t len)
{
	/* The terminating NUL is parsed too: nothing may follow the value. */
	cJSON *m = strlen(msg) == len ? cJSON_ParseWithLengthOpts(msg, len + 1, NULL, 1) : NULL;
	char *reply;

	if (!m)
		return mcp_error_reply(NULL, MCP_PARSE_ERROR, "parse error: the message is not valid JSON");
	if (cJSON_IsArray(m))
		reply = mcp_error_reply(NULL, MCP_INVALID_REQUEST,
			"invalid request: JSON-RPC batches are not part of MCP since 2025-06-18; "
			"send one message per line");
	else if (!cJSON_IsObject(m))
		reply = mcp_error_reply(NULL, MCP_INVALID_REQUEST, "invalid request: a message must be a JSON object");
	else
		reply = handle_object(s, m);
	cJSON_Delete(m);
	return reply;
}
