/* The tools that work inside a running sandbox through its agent: exec, file_read, file_write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mcp/mcp_guest.h"
#include "tools/mcp/mcp_tools.h"
#include "tools/sandbox/sandbox.h"

#define OUT_CAP        (512u << 10)	/* each of stdout and stderr: a reply stays a few MiB even when every byte needs escaping */
#define EXEC_TIMEOUT_S 300
#define READ_DEFAULT   (256u << 10)
#define MAX_ENV        (SB_MAX_ENV + 64)

static int need_running(struct mcp_call *c, const char *name)
{
	if (mcp_need_sandbox(c, name))
		return -1;
	if (sb_vmm_pid(name) > 0)
		return 0;
	snprintf(c->err, sizeof(c->err), "sandbox %s is not running", mcp_caller_name(c, name));
	return -1;
}

/* create's env, minus what the call overrides, then the call's. MCP_INVALID_PARAMS on a bad key. */
static int merge_env(struct mcp_call *c, const struct sb_config *cfg, const cJSON *env, char **out, int *n)
{
	const cJSON *e;

	*n = 0;
	for (int i = 0; i < cfg->nenv; i++) {
		size_t klen = strcspn(cfg->env[i], "=");
		bool over = false;

		cJSON_ArrayForEach(e, env)
			over |= strlen(e->string) == klen && !strncmp(e->string, cfg->env[i], klen);
		if (!over && !(out[(*n)++] = strdup(cfg->env[i])))
			return -1;
	}
	cJSON_ArrayForEach(e, env) {
		if (!e->string[0] || strchr(e->string, '=')) {
			snprintf(c->err, sizeof(c->err), "invalid arguments: env name '%.64s' is empty or has '='", e->string);
			return MCP_INVALID_PARAMS;
		}
		if (*n >= MAX_ENV || asprintf(&out[(*n)++], "%s=%s", e->string, e->valuestring) < 0)
			return -1;
	}
	out[*n] = NULL;
	return 0;
}

static void exec_result(cJSON *out, const struct ap_exit *x, const struct mcp_buf *o, const struct mcp_buf *e)
{
	bool sig = x->kind == AP_SIGNALED;

	cJSON_AddItemToObject(out, "exit_code", sig ? cJSON_CreateNull() : cJSON_CreateNumber(x->code));
	cJSON_AddItemToObject(out, "signal", sig ? cJSON_CreateNumber(x->code) : cJSON_CreateNull());
	cJSON_AddBoolToObject(out, "timed_out", x->timed_out);
	mcp_add_text(out, "stdout", o->p, o->len, o->total);
	mcp_add_text(out, "stderr", e->p, e->len, e->total);
	cJSON_AddNumberToObject(out, "stdout_bytes", (double)o->total);
	cJSON_AddNumberToObject(out, "stderr_bytes", (double)e->total);
}

int mcp_tool_exec(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_name(c, args), *cwd = mcp_arg_str(args, "cwd");
	char *argv[] = { "sh", "-c", (char *)mcp_arg_str(args, "command"), NULL };
	struct mcp_buf o = { .cap = OUT_CAP }, e = { .cap = OUT_CAP };
	struct ap_exec ex = { .argc = 3, .argv = argv, .cwd = (char *)(cwd ? cwd : "") };
	char *env[MAX_ENV + 1] = { NULL };
	struct ap_exit x = { 0 };
	struct sb_config cfg;
	int ret, n = 0;

	if (need_running(c, name))
		return -1;
	if (sb_config_load(name, &cfg)) {
		snprintf(c->err, sizeof(c->err), "sandbox %s: unreadable config.json", name);
		return -1;
	}
	ret = merge_env(c, &cfg, cJSON_GetObjectItemCaseSensitive(args, "env"), env, &n);
	sb_config_free(&cfg);
	if (!ret) {
		ex.env = env;
		ex.envc = n;
		ex.timeout_ms = (uint32_t)mcp_arg_num(args, "timeout", EXEC_TIMEOUT_S) * 1000u;
		ret = mcp_guest_exec(c, name, &ex, &o, &e, &x);
	}
	if (!ret)
		exec_result(out, &x, &o, &e);
	for (int i = 0; i < n; i++)
		free(env[i]);
	mcp_buf_free(&o);
	mcp_buf_free(&e);
	return ret;
}

int mcp_tool_file_read(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_name(c, args), *path = mcp_arg_str(args, "path");
	struct mcp_buf d = { .cap = (size_t)mcp_arg_num(args, "max_bytes", READ_DEFAULT) };
	bool text;

	if (need_running(c, name) || mcp_guest_read(c, name, path, &d)) {
		mcp_buf_free(&d);
		return -1;
	}
	text = mcp_utf8_valid(d.p, d.len);
	cJSON_AddStringToObject(out, "path", path);
	cJSON_AddNumberToObject(out, "size", (double)d.total);
	cJSON_AddBoolToObject(out, "truncated", d.total > d.len);
	cJSON_AddStringToObject(out, "encoding", text ? "utf-8" : "base64");
	if (text) {
		mcp_add_text(out, "content", d.p, d.len, d.len);
	} else {
		char *b = mcp_base64_encode(d.p, d.len);

		cJSON_AddStringToObject(out, "content", b ? b : "");
		free(b);
	}
	mcp_buf_free(&d);
	return 0;
}

int mcp_tool_file_write(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_name(c, args), *path = mcp_arg_str(args, "path");
	const char *content = mcp_arg_str(args, "content"), *enc = mcp_arg_str(args, "encoding");
	uint8_t *bytes = (uint8_t *)content;
	size_t n = strlen(content);
	int ret;

	if (enc && !strcmp(enc, "base64") && mcp_base64_decode(content, &bytes, &n)) {
		snprintf(c->err, sizeof(c->err), "invalid arguments for file_write: content is not valid base64");
		return MCP_INVALID_PARAMS;
	}
	ret = need_running(c, name) ? -1 :
	      mcp_guest_write(c, name, path, bytes, n, (uint32_t)mcp_arg_num(args, "mode", 0644));
	if (bytes != (uint8_t *)content)
		free(bytes);
	if (ret)
		return -1;
	cJSON_AddStringToObject(out, "path", path);
	cJSON_AddNumberToObject(out, "bytes", (double)n);
	return 0;
}
