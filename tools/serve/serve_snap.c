/*
 * Checkpoints over HTTP through the sandbox's control API (docs/api.md):
 * POST /checkpoints {"tag"?}, GET /checkpoints, POST /rollback {"tag"}.
 * The VMM's reply is passed on without its "ok" field.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/api_client.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_quota.h"

#define API_MS  (600 * 1000)	/* a checkpoint of a big guest under emulation is slow */
#define TAG_CAP 48

cJSON *sv_api(struct sv_call *c, struct sv_out *o, cJSON *req, int timeout_ms, int refused)
{
	const cJSON *op = cJSON_GetObjectItemCaseSensitive(req, "op"), *e;
	char *text = cJSON_PrintUnformatted(req), *reply = NULL, what[32];
	cJSON *resp;
	int ret = text ? api_call(c->host, text, &reply, timeout_ms) : -ENOMEM;

	snprintf(what, sizeof(what), "%s", cJSON_IsString(op) ? op->valuestring : "?");
	cJSON_Delete(req);
	free(text);
	if (ret) {
		sv_reply_error(o, 503, "sandbox %s: control API: %s", c->r.name, strerror(-ret));
		return NULL;
	}
	resp = cJSON_Parse(reply);
	free(reply);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		cJSON_DeleteItemFromObjectCaseSensitive(resp, "ok");
		return resp;
	}
	e = cJSON_GetObjectItemCaseSensitive(resp, "error");
	sv_reply_error(o, refused, "%s: %s", what, cJSON_IsString(e) ? e->valuestring : "the VMM refused");
	cJSON_Delete(resp);
	return NULL;
}

/* A checkpoint call (@tag if non-empty) on a running sandbox, or NULL with @o set. */
static cJSON *api(struct sv_call *c, struct sv_out *o, const char *op, const char *tag)
{
	cJSON *req;

	if (sb_vmm_pid(c->host) <= 0) {
		sv_reply_error(o, 409, "sandbox %s is not running", c->r.name);
		return NULL;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", op);
	if (tag && tag[0])
		cJSON_AddStringToObject(req, "tag", tag);
	return sv_api(c, o, req, API_MS, 409);
}

void sv_op_checkpoint(struct sv_call *c, struct sv_out *o)
{
	char tag[TAG_CAP], err[256];
	int st = sv_tag_parse(c->body, c->len, false, tag, sizeof(tag), err, sizeof(err)), slot;
	cJSON *r;

	if (st) {
		sv_reply_error(o, st, "%s", err);
		return;
	}
	/* Its count and the most it adds on the host, reserved before the VMM writes a byte. */
	slot = sv_quota_ckpt_reserve(c->s, c->tenant.name, c->host, &c->tenant.quota, err, sizeof(err));
	if (slot < 0) {
		sv_reply_error(o, slot == -1 ? 429 : 503, "checkpoint: %s", err);
		return;
	}
	r = api(c, o, "checkpoint", tag);
	sv_quota_release(c->s, slot);
	if (r)
		sv_reply_json(o, 201, r);
}

void sv_op_checkpoints(struct sv_call *c, struct sv_out *o)
{
	cJSON *r = api(c, o, "checkpoints", NULL);

	if (r)
		sv_reply_json(o, 200, r);
}

void sv_op_rollback(struct sv_call *c, struct sv_out *o)
{
	char tag[TAG_CAP], err[256];
	int st = sv_tag_parse(c->body, c->len, true, tag, sizeof(tag), err, sizeof(err));
	cJSON *r;

	if (st) {
		sv_reply_error(o, st, "%s", err);
		return;
	}
	if (!(r = api(c, o, "rollback", tag)))
		return;
	/* The guest clock is the checkpoint's: step it and reseed, as mvm rollback does. */
	st = agent_sync(c->host, 60 * 1000);
	if (st) {
		cJSON_Delete(r);
		sv_reply_error(o, 500, "rolled back, but the guest agent did not take the clock sync: %s",
			       strerror(-st));
		return;
	}
	cJSON_AddStringToObject(r, "tag", tag);
	sv_reply_json(o, 200, r);
}
