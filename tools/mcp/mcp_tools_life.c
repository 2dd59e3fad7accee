/*
 * The lifecycle tools: create, list, remove (through `mvm VERB` children
 * until the CLI's create/rm logic is a runtime function), checkpoint and
 * rollback (the control API, docs/api.md), diff and promote (children).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mcp/mcp_spawn.h"
#include "tools/mcp/mcp_tools.h"
#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/api_client.h"
#include "tools/sandbox/sandbox.h"

#define MAX_ARGV    (8 + 2 * 64 + 2 * 64 + 8)
#define ERR_CAP     (64u << 10)
#define PATCH_CAP   (1u << 20)
#define API_MS      (600 * 1000)	/* a checkpoint of a big guest under emulation is slow */

struct argv_b {
	char *v[MAX_ARGV + 1];
	char *owned[MAX_ARGV];
	int n, nowned;
};

static void arg(struct argv_b *a, const char *s)
{
	if (a->n < MAX_ARGV)
		a->v[a->n++] = (char *)s;
}

static void argv_free(struct argv_b *a)
{
	for (int i = 0; i < a->nowned; i++)
		free(a->owned[i]);
}

/* The env object as --env K=V; MCP_INVALID_PARAMS for a bad key. */
static int env_args(struct mcp_call *c, struct argv_b *a, const cJSON *env)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, env) {
		char *kv;

		if (!e->string[0] || strchr(e->string, '=')) {
			snprintf(c->err, sizeof(c->err), "invalid arguments: env name '%.64s' is empty or has '='", e->string);
			return MCP_INVALID_PARAMS;
		}
		if (asprintf(&kv, "%s=%s", e->string, e->valuestring) < 0)
			return -1;
		a->owned[a->nowned++] = kv;
		arg(a, "--env");
		arg(a, kv);
	}
	return 0;
}

int mcp_tool_create(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_arg_str(args, "name"), *image = mcp_arg_str(args, "image");
	const char *mem = mcp_arg_str(args, "memory");
	const cJSON *allow = cJSON_GetObjectItemCaseSensitive(args, "allow"), *e;
	struct mcp_buf o = { .cap = ERR_CAP }, err = { .cap = ERR_CAP };
	struct argv_b a = { .n = 0 };
	char cpus[16];
	cJSON *net;
	int st;

	arg(&a, "mvm");
	arg(&a, "create");
	arg(&a, name);
	if (image) {
		arg(&a, "--image");
		arg(&a, image);
	}
	if (mem) {
		arg(&a, "--memory");
		arg(&a, mem);
	}
	if (cJSON_GetObjectItem(args, "cpus")) {
		snprintf(cpus, sizeof(cpus), "%d", (int)mcp_arg_num(args, "cpus", 1));
		arg(&a, "--cpus");
		arg(&a, cpus);
	}
	/* No rules: no network device at all. Rules come only from the caller. */
	if (cJSON_GetArraySize(allow) == 0) {
		arg(&a, "--net");
		arg(&a, "none");
	}
	cJSON_ArrayForEach(e, allow) {
		arg(&a, "--allow");
		arg(&a, e->valuestring);
	}
	st = env_args(c, &a, cJSON_GetObjectItemCaseSensitive(args, "env"));
	if (!st) {
		a.v[a.n] = NULL;
		st = mcp_spawn(c, a.v, &o, &err);
		st = st ? mcp_child_failed(c, "create", st, &err) : 0;
	}
	argv_free(&a);
	mcp_buf_free(&o);
	mcp_buf_free(&err);
	if (st)
		return st;
	cJSON_AddStringToObject(out, "name", name);
	cJSON_AddStringToObject(out, "status", sb_status(name, NULL));
	net = cJSON_AddObjectToObject(out, "network");
	cJSON_AddStringToObject(net, "mode", cJSON_GetArraySize(allow) ? "allowlist" : "none");
	cJSON_AddItemToObject(net, "allow", allow ? cJSON_Duplicate(allow, 1) : cJSON_CreateArray());
	return 0;
}

int mcp_tool_list(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	cJSON *arr = cJSON_AddArrayToObject(out, "sandboxes");
	char **names;
	int n = sb_list(&names);

	if (n < 0) {
		snprintf(c->err, sizeof(c->err), "cannot list sandboxes: %s", strerror(-n));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		struct sb_config cfg;
		pid_t pid;

		cJSON_AddStringToObject(o, "name", names[i]);
		cJSON_AddStringToObject(o, "status", sb_status(names[i], &pid));
		if (!sb_config_load(names[i], &cfg)) {
			cJSON_AddNumberToObject(o, "cpus", cfg.cpus);
			cJSON_AddNumberToObject(o, "memory", (double)cfg.mem);
			cJSON_AddStringToObject(o, "image", cfg.image);
			sb_config_free(&cfg);
		}
		cJSON_AddItemToArray(arr, o);
		free(names[i]);
	}
	free(names);
	return 0;
}

/* Run `mvm VERB ARGS...` for a tool whose only output is success. */
static int simple_child(struct mcp_call *c, char *const argv[])
{
	struct mcp_buf o = { .cap = ERR_CAP }, err = { .cap = ERR_CAP };
	int st = mcp_spawn(c, argv, &o, &err);

	st = st ? mcp_child_failed(c, argv[1], st, &err) : 0;
	mcp_buf_free(&o);
	mcp_buf_free(&err);
	return st;
}

int mcp_tool_remove(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_arg_str(args, "name");
	char *argv[] = { "mvm", "rm", "-f", (char *)name, NULL };

	if (mcp_need_sandbox(c, name) || simple_child(c, argv))
		return -1;
	cJSON_AddStringToObject(out, "name", name);
	cJSON_AddTrueToObject(out, "removed");
	return 0;
}

/* One control API call; the reply when it says ok, else NULL with c->err. */
static cJSON *api(struct mcp_call *c, const char *name, const char *op, const char *tag)
{
	cJSON *req = cJSON_CreateObject(), *resp = NULL;
	char *text, *reply = NULL;
	int ret;

	cJSON_AddStringToObject(req, "op", op);
	if (tag)
		cJSON_AddStringToObject(req, "tag", tag);
	text = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	ret = text ? api_call(name, text, &reply, API_MS) : -ENOMEM;
	free(text);
	if (ret) {
		snprintf(c->err, sizeof(c->err), "sandbox %s is not running (%s)", name, strerror(-ret));
		return NULL;
	}
	resp = cJSON_Parse(reply);
	free(reply);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		const char *e = mcp_arg_str(resp, "error");

		snprintf(c->err, sizeof(c->err), "%s: %.900s", op, e ? e : "the VMM refused");
		cJSON_Delete(resp);
		return NULL;
	}
	return resp;
}

int mcp_tool_checkpoint(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_arg_str(args, "name"), *tag;
	cJSON *r;

	if (mcp_need_sandbox(c, name))
		return -1;
	mcp_progress(c, "checkpoint: saving memory, devices and disk");
	r = api(c, name, "checkpoint", mcp_arg_str(args, "tag"));
	if (!r)
		return -1;
	tag = mcp_arg_str(r, "tag");
	cJSON_AddStringToObject(out, "tag", tag ? tag : "");
	cJSON_Delete(r);
	return 0;
}

int mcp_tool_rollback(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_arg_str(args, "name"), *tag = mcp_arg_str(args, "tag");
	cJSON *r;
	int ret;

	if (mcp_need_sandbox(c, name))
		return -1;
	r = api(c, name, "rollback", tag);
	if (!r)
		return -1;
	cJSON_Delete(r);
	/* The guest clock is the checkpoint's: step it and reseed, as mvm rollback does. */
	ret = agent_sync(name, 60 * 1000);
	if (ret) {
		snprintf(c->err, sizeof(c->err), "rolled back, but the guest agent did not take the clock sync: %s",
			 strerror(-ret));
		return -1;
	}
	cJSON_AddStringToObject(out, "tag", tag);
	return 0;
}

int mcp_tool_diff(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_arg_str(args, "name"), *path = mcp_arg_str(args, "path");
	struct mcp_buf o = { .cap = PATCH_CAP }, err = { .cap = ERR_CAP };
	char *argv[] = { "mvm", "diff", (char *)name, (char *)path, NULL };
	int st;

	if (mcp_need_sandbox(c, name))
		return -1;
	st = mcp_spawn(c, argv, &o, &err);
	if (st) {
		st = mcp_child_failed(c, "diff", st, &err);
	} else {
		mcp_add_text(out, "patch", o.p, o.len, o.total);
		cJSON_AddNumberToObject(out, "bytes", (double)o.total);
		cJSON_AddBoolToObject(out, "truncated", o.total > o.len);
		mcp_add_text(out, "notes", err.p, err.len, err.total);
	}
	mcp_buf_free(&o);
	mcp_buf_free(&err);
	return st;
}
