/*
 * POST and DELETE /v1/mcp (tools/serve/serve_mcp.h): the header rules,
 * the session, then one message through tools/mcp's own dispatch and tool
 * table, acting as the tenant. Answers are JSON (never an SSE stream):
 * the transport allows either, and no tool here sends anything to the
 * client before its result, so progress notifications are not sent.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mono_time.h"
#include "tools/mcp/mcp_rpc.h"
#include "tools/mcp/mcp_tools.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_mcp.h"
#include "tools/serve/serve_quota.h"

/* A refusal as the transport's clients read it: a JSON-RPC error, id null. */
static void refuse(struct sv_out *o, int status, const char *msg)
{
	char *body = mcp_error_reply(NULL, -32000, msg);

	free(o->body);
	o->status = status;
	o->body = NULL;
	o->len = 0;
	if (body && asprintf(&o->body, "%s\n", body) > 0)
		o->len = strlen(o->body);
	free(body);
	snprintf(o->outcome, sizeof(o->outcome), "%s", msg);
}

/* sandbox_create's quota (mcp_app.create_reserve): as POST /v1/sandboxes. */
static int reserve(void *ctx, const char *host, int cpus, uint64_t memory, char *err, size_t cap)
{
	struct sv_call *c = ctx;
	struct sv_quota add = { .sandboxes = 1, .cpus = cpus, .memory = memory, .disk = 1ull << 30 };
	char why[256];
	int slot = sv_quota_reserve(c->s, c->tenant.name, host, &c->tenant.quota, &add, why, sizeof(why));

	if (slot == -2)
		snprintf(err, cap, "too many creates in flight: try again");
	else if (slot == -3)
		snprintf(err, cap, "the name is taken: choose another");
	else if (slot < 0)
		snprintf(err, cap, "%s", why);
	return slot < 0 ? -1 : slot;
}

/* After the create: the slot back; never a half-made sandbox, none over quota. */
static int create_done(void *ctx, int slot, const char *host, bool ok, char *err, size_t cap)
{
	struct sv_call *c = ctx;
	struct sv_quota use, none = { 0 };
	char why[256];
	int ret = 0;

	if (!ok)
		sv_remove_sandbox(host);
	sv_quota_release(c->s, slot);
	if (ok && !sv_quota_usage(c->tenant.name, &use) &&
	    sv_quota_check(&c->tenant.quota, &use, &none, why, sizeof(why))) {
		sv_remove_sandbox(host);
		snprintf(err, cap, "%s (the sandbox was removed)", why);
		ret = -1;
	}
	return ret;
}

/* checkpoint's quota: as POST /v1/sandboxes/NAME/checkpoints. */
static int ckpt_reserve(void *ctx, const char *host, char *err, size_t cap)
{
	struct sv_call *c = ctx;
	int slot = sv_quota_ckpt_reserve(c->s, c->tenant.name, host, &c->tenant.quota, err, cap);

	return slot < 0 ? -1 : slot;
}

static void ckpt_done(void *ctx, int slot)
{
	sv_quota_release(((struct sv_call *)ctx)->s, slot);
}

/* The tools' context for @c: the server's policy, as tenant:NAME in TENANT.* */
static struct mcp_app *tenant_app(struct sv_call *c)
{
	struct mcp_app *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	/* A shallow copy, never freed: the server's policy outlives every request. */
	a->pol = c->s->pol;
	a->pol.all_sandboxes = false;
	a->pol.allow_host_paths = false;
	a->pol.out_root[0] = '\0';
	if (op_owner_make("tenant", c->tenant.name, a->owner, sizeof(a->owner)) ||
	    snprintf(a->ns, sizeof(a->ns), "%s.", c->tenant.name) >= (int)sizeof(a->ns)) {
		free(a);
		return NULL;
	}
	a->create_reserve = reserve;
	a->create_done = create_done;
	a->checkpoint_reserve = ckpt_reserve;
	a->checkpoint_done = ckpt_done;
	a->hook_ctx = c;
	return a;
}

/* One message: the reply (malloc'd) or NULL (202); @version in and out. */
static int handle(struct sv_call *c, char *version, char **reply)
{
	struct mcp_server srv = { 0 };
	struct mcp_app *a = tenant_app(c);
	int ret = -ENOMEM;

	*reply = NULL;
	if (!a)
		return ret;
	srv.app = a;
	if (mcp_server_init(&srv, mcp_tools, mcp_ntools))
		goto out;
	if (version[0])
		snprintf(srv.version, sizeof(srv.version), "%s", version);
	*reply = mcp_handle(&srv, c->body, c->len);
	snprintf(version, 16, "%s", srv.version);
	ret = 0;
out:
	mcp_server_free(&srv);
	free(a);
	return ret;
}

/* The reply's id is null: the message was not a request we could read. */
static bool unreadable(const char *reply)
{
	cJSON *r = cJSON_Parse(reply);
	bool yes = r && cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "id"));

	cJSON_Delete(r);
	return yes;
}

/* An initialize that did not succeed leaves no session behind. */
static bool succeeded(const char *reply)
{
	cJSON *r = reply ? cJSON_Parse(reply) : NULL;
	bool yes = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "result"));

	cJSON_Delete(r);
	return yes;
}

static void answer(struct sv_out *o, char *reply)
{
	if (!reply) {
		o->status = 202;
		snprintf(o->outcome, sizeof(o->outcome), "accepted");
		return;
	}
	o->status = unreadable(reply) ? 400 : 200;
	if (asprintf(&o->body, "%s\n", reply) < 0) {
		o->body = NULL;
		o->status = 500;
	}
	o->len = o->body ? strlen(o->body) : 0;
	snprintf(o->outcome, sizeof(o->outcome), "ok");
}

void sv_op_mcp(struct sv_call *c, struct sv_out *o)
{
	bool init = svm_is_initialize(c->body, c->len);
	char err[256], id[SVM_ID_HEX + 1], version[16] = "", *reply = NULL;
	int st = svm_check_post(&c->mcp, init, err, sizeof(err));

	if (st) {
		refuse(o, st, err);
		return;
	}
	pthread_mutex_lock(&c->s->lock);
	if (init)
		st = svm_open(c->s->mcp, c->tenant.name, mono_now_ms(), id);
	else
		st = svm_enter(c->s->mcp, c->tenant.name, c->mcp.session, mono_now_ms(), version);
	pthread_mutex_unlock(&c->s->lock);
	if (st == -ENOENT) {
		refuse(o, 404, "no such session (ended or expired): send initialize again");
		return;
	}
	if (st) {
		refuse(o, st == -EUSERS ? 429 : 503, st == -EUSERS ? "too many MCP sessions for this tenant: DELETE one"
				      : "no room for another MCP session");
		return;
	}
	if (!init)
		snprintf(id, sizeof(id), "%s", c->mcp.session);
	st = handle(c, version, &reply);
	pthread_mutex_lock(&c->s->lock);
	svm_leave(c->s->mcp, id, version, mono_now_ms());
	if (init && (st || !succeeded(reply)))
		svm_close(c->s->mcp, c->tenant.name, id);
	pthread_mutex_unlock(&c->s->lock);
	if (st) {
		refuse(o, 500, "out of memory");
		return;
	}
	answer(o, reply);
	if (init && succeeded(reply))
		snprintf(o->session, sizeof(o->session), "%s", id);
	free(reply);
}

void sv_op_mcp_end(struct sv_call *c, struct sv_out *o)
{
	char err[256];
	int st = svm_check_delete(&c->mcp, err, sizeof(err));

	if (st) {
		refuse(o, st, err);
		return;
	}
	pthread_mutex_lock(&c->s->lock);
	st = svm_close(c->s->mcp, c->tenant.name, c->mcp.session);
	pthread_mutex_unlock(&c->s->lock);
	if (st) {
		refuse(o, 404, "no such session");
		return;
	}
	sv_reply_json(o, 200, cJSON_CreateObject());
}
