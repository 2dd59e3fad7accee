/*
 * A tenant's templates (docs/api.md, "Templates"): POST
 * /v1/sandboxes/NAME/template {"name": T} runs `mvm template create
 * TENANT.T --from TENANT.NAME` (the source pauses briefly and runs on);
 * DELETE /v1/templates/T removes one of its own. Each holds a memory image
 * and disk layers on the server, so the tenant's quota counts them
 * (serve_quota.h): how many it holds, and their bytes in its disk. Before
 * one is made, the most it can hold (the source's memory and whole disk)
 * is reserved against the quota beside the creates in flight; after, it is
 * measured, and removed if it took the tenant past its disk after all.
 * Templates are made one at a time per server.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshots/template.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_quota.h"
#include "tools/serve/serve_tpl_scope.h"

#define ERR_CAP 4096

static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;

/* The checks before a template is made, and its reservation: a quota slot, or -1 with @o set. */
static int make_pre(struct sv_call *c, struct sv_out *o, const char *store, const char *name)
{
	struct sv_quota add = { .templates = 1 };
	struct sb_config cfg;
	char why[256];
	int slot;

	if (!tpl_name_ok(store)) {
		sv_reply_error(o, 400, "template name too long");
		return -1;
	}
	if (sb_vmm_pid(c->host) <= 0) {
		sv_reply_error(o, 409, "sandbox %s is not running", c->r.name);
		return -1;
	}
	if (tpl_exists(store)) {
		sv_reply_error(o, 409, "template %s exists", name);
		return -1;
	}
	if (sb_config_load(c->host, &cfg)) {
		sv_reply_error(o, 500, "cannot read the configuration of %s", c->r.name);
		return -1;
	}
	add.disk = sv_quota_tpl_bound(cfg.mem, cfg.disk_size);
	sb_config_free(&cfg);
	slot = sv_quota_reserve(c->s, c->tenant.name, NULL, &c->tenant.quota, &add, why, sizeof(why));
	if (slot < 0)
		sv_reply_error(o, slot == -1 ? 429 : 503, "template %s: %s", name, why);
	return slot < 0 ? -1 : slot;
}

/* Make @store from the sandbox within the reservation @slot; measured after. @o set on failure. */
static void make_run(struct sv_call *c, struct sv_out *o, char *store, int slot, char *err)
{
	char why[256];
	int st = sv_run_mvm((char *const[]){ "mvm", "template", "create", store, "--from", c->host, NULL }, -1,
			    err, ERR_CAP);

	sv_quota_release(c->s, slot);
	if (st) {
		sv_reply_error(o, st == 2 ? 400 : 500, "template: %s", st < 0 ? strerror(-st) : sv_child_reason(err));
		return;
	}
	if (!sv_quota_disk_recheck(c->tenant.name, &c->tenant.quota, why, sizeof(why)))
		return;
	/* Larger than its bound (layers it shares with others, say): never held over the quota. */
	sv_run_mvm((char *const[]){ "mvm", "template", "rm", store, NULL }, -1, err, ERR_CAP);
	sv_reply_error(o, 429, "%s (the template was removed)", why);
}

void sv_op_template_make(struct sv_call *c, struct sv_out *o)
{
	char name[SV_NAME_MAX + 1], store[SV_TENANT_MAX + SV_NAME_MAX + 2], msg[256], *err = malloc(ERR_CAP);
	int st = sv_fork_parse(c->body, c->len, name, sizeof(name), msg, sizeof(msg)), slot;
	cJSON *j;

	if (!err || st) {
		sv_reply_error(o, err ? st : 500, "%s", err ? msg : "out of memory");
		free(err);
		return;
	}
	snprintf(store, sizeof(store), "%s.%s", c->tenant.name, name);
	pthread_mutex_lock(&one_at_a_time);
	if ((slot = make_pre(c, o, store, name)) >= 0)
		make_run(c, o, store, slot, err);
	pthread_mutex_unlock(&one_at_a_time);
	if (!o->status) {
		j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", name);
		cJSON_AddStringToObject(j, "from", c->r.name);
		sv_reply_json(o, 201, j);
	}
	free(err);
}

void sv_op_template_rm(struct sv_call *c, struct sv_out *o)
{
	char store[SV_TENANT_MAX + SV_TPL_MAX + 2], *err = malloc(ERR_CAP);
	int st;
	cJSON *j;

	/* Only its own: an operator's template is not a tenant's to remove. */
	if (!err || snprintf(store, sizeof(store), "%s.%s", c->tenant.name, c->r.tpl) >= (int)sizeof(store) ||
	    !tpl_name_ok(store) || !tpl_exists(store) || !sv_tpl_owned(c->tenant.name, store)) {
		sv_reply_error(o, err ? 404 : 500, "no template of yours named %s", c->r.tpl);
		free(err);
		return;
	}
	st = sv_run_mvm((char *const[]){ "mvm", "template", "rm", store, NULL }, -1, err, ERR_CAP);
	if (st) {
		sv_reply_error(o, 409, "template %s: %s", c->r.tpl, st < 0 ? strerror(-st) : sv_child_reason(err));
	} else {
		j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", c->r.tpl);
		cJSON_AddBoolToObject(j, "removed", true);
		sv_reply_json(o, 200, j);
	}
	free(err);
}
