/*
 * A tenant's templates (docs/api.md, "Templates"): POST
 * /v1/sandboxes/NAME/template {"name": T} runs `mvm template create
 * TENANT.T --from TENANT.NAME` (the source pauses briefly and runs on);
 * DELETE /v1/templates/T removes one of its own. At most as many templates
 * per tenant as its sandbox quota (each holds a memory image and disk
 * layers on the server); templates are made one at a time per server, so
 * two requests cannot both pass the count.
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
#include "tools/serve/serve_tpl_scope.h"

#define ERR_CAP 4096

static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;

/* The checks before a template is made: 0, or -1 with @o set. */
static int make_pre(struct sv_call *c, struct sv_out *o, const char *store, const char *name)
{
	int have;

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
	have = sv_tpl_count(c->tenant.name);
	if (have >= c->tenant.quota.sandboxes) {
		sv_reply_error(o, 429, "template quota: %d templates of %d (DELETE /v1/templates/NAME frees one)",
			       have, c->tenant.quota.sandboxes);
		return -1;
	}
	return 0;
}

void sv_op_template_make(struct sv_call *c, struct sv_out *o)
{
	char name[SV_NAME_MAX + 1], store[SV_TENANT_MAX + SV_NAME_MAX + 2], msg[256], *err = malloc(ERR_CAP);
	int st = sv_fork_parse(c->body, c->len, name, sizeof(name), msg, sizeof(msg));
	cJSON *j;

	if (!err || st) {
		sv_reply_error(o, err ? st : 500, "%s", err ? msg : "out of memory");
		free(err);
		return;
	}
	snprintf(store, sizeof(store), "%s.%s", c->tenant.name, name);
	pthread_mutex_lock(&one_at_a_time);
	if (!make_pre(c, o, store, name)) {
		st = sv_run_mvm((char *const[]){ "mvm", "template", "create", store, "--from", c->host, NULL }, -1,
				err, ERR_CAP);
		if (st)
			sv_reply_error(o, st == 2 ? 400 : 500, "template: %s", st < 0 ? strerror(-st) : sv_child_reason(err));
	}
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
