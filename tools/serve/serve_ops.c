/*
 * The sandbox lifecycle over HTTP: list, get, create, delete, stop, start,
 * with the tenant's scope (its sandboxes are TENANT.NAME on the host; any
 * other name is "not found") and quotas.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/sandbox/baseline.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_quota.h"

void sv_dispatch(struct sv_call *c, struct sv_out *o)
{
	static void (*const ops[])(struct sv_call *, struct sv_out *) = {
		[SV_HEALTH] = sv_op_health, [SV_CAPACITY] = sv_op_capacity, [SV_LIST] = sv_op_list,
		[SV_CREATE] = sv_op_create, [SV_GET] = sv_op_get, [SV_DELETE] = sv_op_delete,
		[SV_EXEC] = sv_op_exec, [SV_FILE_GET] = sv_op_file_get, [SV_FILE_PUT] = sv_op_file_put,
		[SV_TREE_GET] = sv_op_tree_get, [SV_TREE_PUT] = sv_op_tree_put,
		[SV_WORKSPACE_PUT] = sv_op_workspace_put, [SV_DIFF] = sv_op_diff, [SV_PROMOTE] = sv_op_promote,
		[SV_STOP] = sv_op_stop, [SV_START] = sv_op_start, [SV_CHECKPOINT] = sv_op_checkpoint,
		[SV_CHECKPOINTS] = sv_op_checkpoints, [SV_ROLLBACK] = sv_op_rollback,
		[SV_NET_SHOW] = sv_op_net_show, [SV_NET_EDIT] = sv_op_net_edit, [SV_EVENTS] = sv_op_events,
		[SV_FORK] = sv_op_fork, [SV_TEMPLATE_GET] = sv_op_template_get,
		[SV_TEMPLATE_MAKE] = sv_op_template_make, [SV_TEMPLATE_RM] = sv_op_template_rm,
		[SV_MCP] = sv_op_mcp, [SV_MCP_END] = sv_op_mcp_end,
	};

	if (c->r.op <= SV_NONE || c->r.op >= sizeof(ops) / sizeof(ops[0]) || !ops[c->r.op]) {
		sv_reply_error(o, 404, "no such path");
		return;
	}
	/* A name routed for a sandbox must be one of this tenant's: anything
	 * else reads "no sandbox named NAME", existing or not. */
	if (c->r.name[0] && !sv_owns(&c->s->pol, c->tenant.name, c->host, NULL, 0)) {
		sv_reply_error(o, 404, "no sandbox named %s", c->r.name);
		return;
	}
	ops[c->r.op](c, o);
}

bool sv_owns(const struct op_policy *pol, const char *tenant, const char *host, char *name, size_t cap)
{
	char own[SV_NAME_MAX + 1], owner[OP_OWNER_MAX], err[128];

	return sv_own_name(tenant, host, own, sizeof(own)) &&
	       !op_owner_make("tenant", tenant, owner, sizeof(owner)) &&
	       !op_sandbox_access(pol, owner, host, err, sizeof(err)) &&
	       (!name || snprintf(name, cap, "%s", own) >= 0);
}

/* The API's view of host sandbox @host (the tenant's @name). */
static cJSON *sandbox_json(const char *host, const char *name)
{
	cJSON *j = cJSON_CreateObject();
	struct sb_config cfg;

	cJSON_AddStringToObject(j, "name", name);
	cJSON_AddStringToObject(j, "status", sb_status(host, NULL));
	if (!sb_config_load(host, &cfg)) {
		const char *slash = strrchr(cfg.image, '/');

		cJSON_AddNumberToObject(j, "cpus", cfg.cpus);
		cJSON_AddNumberToObject(j, "memory", (double)cfg.mem);
		cJSON_AddNumberToObject(j, "disk", (double)cfg.disk_size);
		/* The image's store name, never a host path. */
		cJSON_AddStringToObject(j, "image", slash ? slash + 1 : cfg.image);
		cJSON_AddStringToObject(j, "template", cfg.template_name);
		cJSON_AddNumberToObject(j, "created", cfg.created);
		sb_config_free(&cfg);
	}
	return j;
}

void sv_op_health(struct sv_call *c, struct sv_out *o)
{
	cJSON *j = cJSON_CreateObject();

	(void)c;
	cJSON_AddBoolToObject(j, "ok", true);
	cJSON_AddStringToObject(j, "api", "v1");
	sv_reply_json(o, 200, j);
}

void sv_op_list(struct sv_call *c, struct sv_out *o)
{
	cJSON *j = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(j, "sandboxes");
	char **names, name[SV_NAME_MAX + 1];
	int n = sb_list(&names);

	if (n < 0) {
		cJSON_Delete(j);
		sv_reply_error(o, 500, "cannot list sandboxes: %s", strerror(-n));
		return;
	}
	for (int i = 0; i < n; i++) {
		if (sv_owns(&c->s->pol, c->tenant.name, names[i], name, sizeof(name)))
			cJSON_AddItemToArray(arr, sandbox_json(names[i], name));
		free(names[i]);
	}
	free(names);
	sv_reply_json(o, 200, j);
}

void sv_reply_sandbox(struct sv_call *c, struct sv_out *o, int status)
{
	sv_reply_json(o, status, sandbox_json(c->host, c->r.name));
}

void sv_op_get(struct sv_call *c, struct sv_out *o)
{
	sv_reply_sandbox(c, o, 200);
}

void sv_op_delete(struct sv_call *c, struct sv_out *o)
{
	cJSON *j;

	if (sb_vmm_pid(c->host) > 0 && sb_stop(c->host, 10)) {
		sv_reply_error(o, 500, "could not stop %s", c->r.name);
		return;
	}
	relay_stop(c->host);
	if (baseline_remove(c->host) || sb_remove_state(c->host)) {
		sv_reply_error(o, 500, "could not remove all of %s", c->r.name);
		return;
	}
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "name", c->r.name);
	cJSON_AddTrueToObject(j, "removed");
	sv_reply_json(o, 200, j);
}

void sv_op_stop(struct sv_call *c, struct sv_out *o)
{
	if (sb_vmm_pid(c->host) > 0 && sb_stop(c->host, 30)) {
		sv_reply_error(o, 500, "could not stop %s", c->r.name);
		return;
	}
	sv_reply_sandbox(c, o, 200);
}

/* Through `mvm start` (sv_run_mvm: no fork() in this threaded process). */
void sv_op_start(struct sv_call *c, struct sv_out *o)
{
	char *argv[] = { "mvm", "start", c->host, NULL }, err[1024] = "", *nl;
	int st;

	if (sb_vmm_pid(c->host) > 0) {
		sv_reply_error(o, 409, "%s is already running", c->r.name);
		return;
	}
	st = sv_run_mvm(argv, -1, err, sizeof(err));
	if (st) {
		while ((nl = strrchr(err, '\n')) && !nl[1])
			*nl = '\0';
		sv_reply_error(o, 500, "start %s: %s", c->r.name, st < 0 ? strerror(-st) : err);
		return;
	}
	sv_reply_sandbox(c, o, 200);
}
