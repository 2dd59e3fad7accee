/*
 * The tool table of `mvm mcp`: names, descriptions and JSON Schemas
 * (input: what mcp_schema_check() enforces before a handler runs; output:
 * what structuredContent holds). Plus the helpers the handlers share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mcp/mcp_tools.h"
#include "tools/sandbox/sandbox.h"

#define OBJ(props, req) "{\"type\":\"object\",\"properties\":{" props "}," req "\"additionalProperties\":false}"
#define REQ(...) "\"required\":[" __VA_ARGS__ "],"
#define STR_MAP "{\"type\":\"object\",\"maxProperties\":64,\"additionalProperties\":{\"type\":\"string\",\"maxLength\":65536}"
#define ABS_PATH(what) "{\"type\":\"string\",\"pattern\":\"^/.*[^/]$\",\"maxLength\":4095,\"description\":\"" what "\"}"

static const char create_in[] = OBJ(MCP_NAME_SCHEMA ","
	"\"image\":{\"type\":\"string\",\"maxLength\":4095,\"description\":\"root image: a name from 'mvm image ls' (a host path only if the operator allows it); default: the built-in initramfs with a data disk at /data\"},"
	"\"template\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$\",\"description\":\"start from this template ('mvm template ls') instead of booting; not with image, memory or cpus\"},"
	"\"memory\":{\"type\":\"string\",\"pattern\":\"^[0-9]{1,9}[KMG]?$\",\"description\":\"guest RAM, e.g. 512M or 2G (default 512M)\"},"
	"\"cpus\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":64},"
	"\"allow\":{\"type\":\"array\",\"maxItems\":64,\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":512},"
		"\"description\":\"network allow rules HOST[:PORTS][/tcp|/udp], within the operator's ceiling (public addresses and names by default); none (the default): the sandbox has no network\"},"
	"\"env\":" STR_MAP ",\"description\":\"environment for every command\"}",
	REQ("\"name\""));
static const char create_out[] = OBJ("\"name\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"},"
	"\"network\":{\"type\":\"object\"}", REQ("\"name\",\"status\""));

static const char list_in[] = OBJ("", "");
static const char list_out[] = OBJ("\"sandboxes\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"properties\":{\"name\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"}},\"required\":[\"name\",\"status\"]}}",
	REQ("\"sandboxes\""));

static const char name_in[] = OBJ(MCP_NAME_SCHEMA, REQ("\"name\""));
static const char remove_out[] = OBJ("\"name\":{\"type\":\"string\"},\"removed\":{\"type\":\"boolean\"}",
	REQ("\"name\",\"removed\""));

static const char exec_in[] = OBJ(MCP_NAME_SCHEMA ","
	"\"command\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":131072,\"description\":\"a shell command line, run by sh -c\"},"
	"\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400,\"description\":\"seconds before the command is killed (default 300)\"},"
	"\"env\":" STR_MAP ",\"description\":\"extra environment variables\"},"
	"\"cwd\":{\"type\":\"string\",\"maxLength\":4095,\"description\":\"working directory (default /)\"}",
	REQ("\"name\",\"command\""));
static const char exec_out[] = OBJ(
	"\"exit_code\":{\"type\":[\"integer\",\"null\"],\"description\":\"null if a signal ended the command\"},"
	"\"signal\":{\"type\":[\"integer\",\"null\"]},\"timed_out\":{\"type\":\"boolean\"},"
	"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
	"\"stdout_bytes\":{\"type\":\"integer\"},\"stderr_bytes\":{\"type\":\"integer\"}",
	REQ("\"exit_code\",\"signal\",\"timed_out\",\"stdout\",\"stderr\""));

static const char read_in[] = OBJ(MCP_NAME_SCHEMA ",\"path\":" ABS_PATH("absolute path of a regular file in the guest") ","
	"\"max_bytes\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":2097152,\"description\":\"read at most this much (default 256 KiB, at most 2 MiB)\"}",
	REQ("\"name\",\"path\""));
static const char read_out[] = OBJ("\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
	"\"truncated\":{\"type\":\"boolean\"},\"encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"]},"
	"\"content\":{\"type\":\"string\"}", REQ("\"path\",\"size\",\"truncated\",\"encoding\",\"content\""));

static const char write_in[] = OBJ(MCP_NAME_SCHEMA ",\"path\":" ABS_PATH("absolute path in the guest; its directory must exist") ","
	"\"content\":{\"type\":\"string\",\"maxLength\":3145728},"
	"\"encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"],\"description\":\"how content is given (default utf-8)\"},"
	"\"mode\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4095,\"description\":\"permission bits (default 420 = 0644)\"}",
	REQ("\"name\",\"path\",\"content\""));
static const char write_out[] = OBJ("\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"}",
	REQ("\"path\",\"bytes\""));

static const char checkpoint_in[] = OBJ(MCP_NAME_SCHEMA ",\"tag\":{\"type\":\"string\",\"pattern\":\"" MCP_TAG_PATTERN "\","
	"\"description\":\"default: cp1, cp2, ...\"}", REQ("\"name\""));
static const char rollback_in[] = OBJ(MCP_NAME_SCHEMA ",\"tag\":{\"type\":\"string\",\"pattern\":\"" MCP_TAG_PATTERN "\"}",
	REQ("\"name\",\"tag\""));
static const char tag_out[] = OBJ("\"tag\":{\"type\":\"string\"}", REQ("\"tag\""));

static const char diff_in[] = OBJ(MCP_NAME_SCHEMA ",\"path\":{\"type\":\"string\",\"pattern\":\"^/\",\"maxLength\":4095,"
	"\"description\":\"a --copy tree in the guest, or a path in it (needed when there are several)\"}",
	REQ("\"name\""));
static const char diff_out[] = OBJ("\"patch\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"},"
	"\"truncated\":{\"type\":\"boolean\"},\"notes\":{\"type\":\"string\"}", REQ("\"patch\",\"bytes\",\"truncated\""));

static const char promote_in[] = OBJ(MCP_NAME_SCHEMA ","
	"\"out\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4095,\"description\":\"where the bundle goes, beneath the operator's output root: a relative path (or an absolute one inside the root) that must not exist; default NAME-promote-N\"},"
	"\"checks\":{\"type\":\"array\",\"maxItems\":64,\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536},"
		"\"description\":\"shell commands run in the workspace before the bundle is written\"},"
	"\"workspace\":{\"type\":\"string\",\"pattern\":\"^/\",\"maxLength\":4095},"
	"\"check_timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400}",
	REQ("\"name\""));
static const char promote_out[] = OBJ("\"out\":{\"type\":\"string\",\"description\":\"the absolute host path of the bundle\"},\"checks_passed\":{\"type\":\"boolean\"},"
	"\"report\":{\"type\":\"object\"}", REQ("\"out\",\"checks_passed\",\"report\""));

const struct mcp_tool mcp_tools[] = {
	{ "sandbox_create", "Create a sandbox",
	  "Create and boot a KVM microVM sandbox. It has no network unless allow rules are given.",
	  create_in, create_out, mcp_tool_create },
	{ "sandbox_list", "List sandboxes", "Every sandbox with its status.", list_in, list_out, mcp_tool_list },
	{ "sandbox_exec", "Run a command",
	  "Run a shell command line (sh -c) in a running sandbox; returns stdout, stderr and the exit code.",
	  exec_in, exec_out, mcp_tool_exec },
	{ "file_read", "Read a file", "Read a file from a sandbox (UTF-8 text, or base64 if it is not text).",
	  read_in, read_out, mcp_tool_file_read },
	{ "file_write", "Write a file", "Create or replace a file in a sandbox.", write_in, write_out,
	  mcp_tool_file_write },
	{ "checkpoint", "Checkpoint a sandbox", "Save memory, processes, devices and disk of a running sandbox.",
	  checkpoint_in, tag_out, mcp_tool_checkpoint },
	{ "rollback", "Roll back a sandbox", "Return a running sandbox to a checkpoint.", rollback_in, tag_out,
	  mcp_tool_rollback },
	{ "diff", "Diff the workspace",
	  "The changes made to a tree copied in at create (--copy), as a git-style patch.", diff_in, diff_out,
	  mcp_tool_diff },
	{ "promote", "Promote the workspace",
	  "Run checks in the sandbox, then write a review bundle (changes.patch, report.json) on the host, beneath the operator's output root; returns its path.",
	  promote_in, promote_out, mcp_tool_promote },
	{ "sandbox_remove", "Remove a sandbox", "Stop a sandbox and delete its state.", name_in, remove_out,
	  mcp_tool_remove },
};
const size_t mcp_ntools = sizeof(mcp_tools) / sizeof(mcp_tools[0]);

const char *mcp_arg_str(const cJSON *args, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *mcp_name(struct mcp_call *c, const cJSON *args)
{
	const struct mcp_app *a = mcp_app_of(c);
	const char *n = mcp_arg_str(args, "name");
	int len;

	if (!n || !a || !a->ns[0])
		return n;
	len = snprintf(c->sandbox, sizeof(c->sandbox), "%s%s", a->ns, n);
	if (len < 0 || (size_t)len >= sizeof(c->sandbox))
		c->sandbox[0] = '\0';
	return c->sandbox;
}

const char *mcp_caller_name(const struct mcp_call *c, const char *host)
{
	const struct mcp_app *a = mcp_app_of(c);
	size_t n = a ? strlen(a->ns) : 0;

	if (!a || !n)
		return host;
	return strncmp(host, a->ns, n) || !host[n] ? NULL : host + n;
}

double mcp_arg_num(const cJSON *args, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int mcp_need_sandbox(struct mcp_call *c, const char *name)
{
	struct mcp_app *a = mcp_app_of(c);

	const char *shown = name ? mcp_caller_name(c, name) : NULL;

	if (a && !op_sandbox_access(&a->pol, a->owner, name, c->err, sizeof(c->err)))
		return 0;
	/* The name as the caller gave it: a namespace is not the caller's to see. */
	snprintf(c->err, sizeof(c->err), "no sandbox named %.64s", shown ? shown : name ? name : "(none)");
	return -1;
}

int mcp_add_text(cJSON *o, const char *key, const uint8_t *p, size_t n, uint64_t total)
{
	char *t = mcp_utf8_clean(p, n, total);

	if (!t || !cJSON_AddStringToObject(o, key, t)) {
		free(t);
		return -1;
	}
	free(t);
	return 0;
}

int mcp_child_failed(struct mcp_call *c, const char *verb, int status, const struct mcp_buf *err)
{
	size_t n = err->len > 800 ? 800 : err->len;
	char *t = mcp_utf8_clean(err->p, n, n);

	if (status < 0)
		snprintf(c->err, sizeof(c->err), "mvm %s could not run: %s", verb, strerror(-status));
	else
		snprintf(c->err, sizeof(c->err), "mvm %s failed (status %d): %s", verb, status,
			 t && t[0] ? t : "no message");
	free(t);
	return -1;
}
