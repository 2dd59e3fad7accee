/*
 * The lifecycle tools: create, list, remove (through `mvm VERB` children
 * until the CLI's create/rm logic is a runtime function), checkpoint and
 * rollback (the control API, docs/api.md), diff and promote (children).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "guest/agent/proto.h"
#include "tools/mcp/mcp_spawn.h"
#include "tools/mcp/mcp_tools.h"
#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/api_client.h"
#include "tools/sandbox/sandbox.h"

#define MAX_ARGV    (16 + 2 * 64)
#define ERR_CAP     (64u << 10)
#define PATCH_CAP   (1u << 20)
#define API_MS      (600 * 1000)	/* a checkpoint of a big guest under emulation is slow */

struct argv_b {
	char *v[MAX_ARGV + 1];
	int n;
};

static void arg(struct argv_b *a, const char *s)
{
	if (a->n < MAX_ARGV)
		a->v[a->n++] = (char *)s;
}

/*
 * The env object as NUL-ended K=V records in a memfd, for `--env-fd N`:
 * values never appear on a command line (every local user reads
 * /proc/PID/cmdline). The fd (inherited by the child) in *fd; the caller
 * closes it. 0, MCP_INVALID_PARAMS for a bad key, or -1.
 */
static int env_fd(struct mcp_call *c, const cJSON *env, int *fd)
{
	const cJSON *e;

	*fd = -1;
	if (cJSON_GetArraySize(env) == 0)
		return 0;
	cJSON_ArrayForEach(e, env) {
		if (!e->string[0] || strchr(e->string, '=')) {
			snprintf(c->err, sizeof(c->err), "invalid arguments: env name '%.64s' is empty or has '='", e->string);
			return MCP_INVALID_PARAMS;
		}
	}
	/* Close-on-exec: in mvm serve, other threads' children must not inherit
	 * it; mcp_spawn's child opens it to the one named by --env-fd. */
	*fd = memfd_create("mvm-env", MFD_CLOEXEC);
	if (*fd < 0)
		goto fail;
	cJSON_ArrayForEach(e, env) {
		if (ap_write_all(*fd, e->string, strlen(e->string)) || ap_write_all(*fd, "=", 1) ||
		    ap_write_all(*fd, e->valuestring, strlen(e->valuestring) + 1))
			goto fail;
	}
	if (lseek(*fd, 0, SEEK_SET) == 0)
		return 0;
fail:
	snprintf(c->err, sizeof(c->err), "cannot pass the environment: %s", strerror(errno));
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return -1;
}

/* The operator's policy on create's arguments: images and templates by
 * name, allow rules under the ceiling. @image_path gets what --image takes. */
static int create_policy(struct mcp_call *c, const cJSON *args, char *image_path, size_t cap)
{
	const struct mcp_app *a = mcp_app_of(c);
	const char *image = mcp_arg_str(args, "image"), *tpl = mcp_arg_str(args, "template");
	const char *name = mcp_name(c, args);
	const cJSON *e;

	if (!a) {
		snprintf(c->err, sizeof(c->err), "no operator policy");
		return -1;
	}
	if (tpl && (image || cJSON_GetObjectItem(args, "memory") || cJSON_GetObjectItem(args, "cpus"))) {
		snprintf(c->err, sizeof(c->err), "invalid arguments: a template fixes the machine: "
			 "leave out image, memory and cpus");
		return MCP_INVALID_PARAMS;
	}
	if (image && op_image_resolve(&a->pol, image, image_path, cap, c->err, sizeof(c->err)))
		return -1;
	if (tpl && op_check_template(&a->pol, tpl, c->err, sizeof(c->err)))
		return -1;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(args, "allow"))
		if (op_check_allow_rule(&a->pol, e->valuestring, c->err, sizeof(c->err)))
			return -1;
	/* Names are one namespace per user: a taken one is said to be taken,
	 * whoever has it, and nothing else of it is told. */
	if (name && sb_name_ok(name) && sb_exists(name)) {
		snprintf(c->err, sizeof(c->err), "the name %s is taken: choose another", mcp_caller_name(c, name));
		return -1;
	}
	return 0;
}

/* Run create's child @argv within the caller's quota, when it has one. */
static int create_spawn(struct mcp_call *c, const cJSON *args, const char *name, char **argv,
			struct mcp_buf *o, struct mcp_buf *err)
{
	const struct mcp_app *a = mcp_app_of(c);
	const char *mem = mcp_arg_str(args, "memory");
	uint64_t bytes = 512ull << 20;
	int slot = -1, st;

	if (a->create_reserve) {
		if (mem && cli_parse_size(mem, &bytes)) {
			snprintf(c->err, sizeof(c->err), "invalid arguments: memory %s", mem);
			return MCP_INVALID_PARAMS;
		}
		slot = a->create_reserve(a->hook_ctx, name, (int)mcp_arg_num(args, "cpus", 1), bytes, c->err,
					 sizeof(c->err));
		if (slot < 0)
			return -1;
	}
	st = mcp_spawn(c, argv, o, err);
	st = st ? mcp_child_failed(c, "create", st, err) : 0;
	if (a->create_done && a->create_done(a->hook_ctx, slot, name, !st, c->err, sizeof(c->err)) && !st)
		st = -1;
	return st;
}

int mcp_tool_create(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_name(c, args), *image = mcp_arg_str(args, "image");
	const char *mem = mcp_arg_str(args, "memory"), *tpl = mcp_arg_str(args, "template");
	const cJSON *allow = cJSON_GetObjectItemCaseSensitive(args, "allow"), *e;
	struct mcp_buf o = { .cap = ERR_CAP }, err = { .cap = ERR_CAP };
	struct argv_b a = { .n = 0 };
	char cpus[16], fdarg[16], *image_path = malloc(PATH_MAX);
	int st, efd = -1;
	cJSON *net;

	if (!image_path)
		return -1;
	st = create_policy(c, args, image_path, PATH_MAX);
	if (!st)
		st = env_fd(c, cJSON_GetObjectItemCaseSensitive(args, "env"), &efd);
	if (st)
		goto out;
	arg(&a, "mvm");
	arg(&a, "create");
	arg(&a, name);
	arg(&a, "--owner");
	arg(&a, mcp_app_of(c)->owner);
	if (image) {
		arg(&a, "--image");
		arg(&a, image_path);
	}
	if (tpl) {
		arg(&a, "--template");
		arg(&a, tpl);
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
	if (efd >= 0) {
		snprintf(fdarg, sizeof(fdarg), "%d", efd);
		arg(&a, "--env-fd");
		arg(&a, fdarg);
	}
	a.v[a.n] = NULL;
	st = create_spawn(c, args, name, a.v, &o, &err);
out:
	if (efd >= 0)
		close(efd);
	free(image_path);
	mcp_buf_free(&o);
	mcp_buf_free(&err);
	if (st)
		return st;
	cJSON_AddStringToObject(out, "name", mcp_arg_str(args, "name"));
	cJSON_AddStringToObject(out, "status", sb_status(name, NULL));
	net = cJSON_AddObjectToObject(out, "network");
	cJSON_AddStringToObject(net, "mode", cJSON_GetArraySize(allow) ? "allowlist" : "none");
	cJSON_AddItemToObject(net, "allow", allow ? cJSON_Duplicate(allow, 1) : cJSON_CreateArray());
	return 0;
}

int mcp_tool_list(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	/* Only what this server may see (tools/sandbox/operator_policy.h). */
	cJSON *arr = cJSON_AddArrayToObject(out, "sandboxes");
	char **names;
	int n = sb_list(&names);

	if (n < 0) {
		snprintf(c->err, sizeof(c->err), "cannot list sandboxes: %s", strerror(-n));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct mcp_app *a = mcp_app_of(c);
		struct sb_config cfg;
		cJSON *o;
		pid_t pid;

		/* Out of scope (another owner's, or unreadable): not listed at all. */
		if (!a || !mcp_caller_name(c, names[i]) || sb_config_load(names[i], &cfg)) {
			free(names[i]);
			continue;
		}
		if (!op_may_access(&a->pol, a->owner, cfg.owner)) {
			sb_config_free(&cfg);
			free(names[i]);
			continue;
		}
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", mcp_caller_name(c, names[i]));
		cJSON_AddStringToObject(o, "status", sb_status(names[i], &pid));
		cJSON_AddNumberToObject(o, "cpus", cfg.cpus);
		cJSON_AddNumberToObject(o, "memory", (double)cfg.mem);
		cJSON_AddStringToObject(o, "image", cfg.image);
		sb_config_free(&cfg);
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
	const char *name = mcp_name(c, args);
	char *argv[] = { "mvm", "rm", "-f", (char *)name, NULL };

	if (mcp_need_sandbox(c, name) || simple_child(c, argv))
		return -1;
	cJSON_AddStringToObject(out, "name", mcp_arg_str(args, "name"));
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
	const char *name = mcp_name(c, args), *tag;
	const struct mcp_app *a = mcp_app_of(c);
	int slot = -1;
	cJSON *r;

	if (mcp_need_sandbox(c, name))
		return -1;
	if (a->checkpoint_reserve && (slot = a->checkpoint_reserve(a->hook_ctx, name, c->err, sizeof(c->err))) < 0)
		return -1;
	mcp_progress(c, "checkpoint: saving memory, devices and disk");
	r = api(c, name, "checkpoint", mcp_arg_str(args, "tag"));
	if (a->checkpoint_done && slot >= 0)
		a->checkpoint_done(a->hook_ctx, slot);
	if (!r)
		return -1;
	tag = mcp_arg_str(r, "tag");
	cJSON_AddStringToObject(out, "tag", tag ? tag : "");
	cJSON_Delete(r);
	return 0;
}

int mcp_tool_rollback(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_name(c, args), *tag = mcp_arg_str(args, "tag");
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
	const char *name = mcp_name(c, args), *path = mcp_arg_str(args, "path");
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
