/*
 * The promote tool: `mvm promote` writes the bundle; report.json comes back
 * as structured content. Its strings partly come from the guest (paths,
 * reasons), so every one is made valid UTF-8 again before it is sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/mcp/mcp_spawn.h"
#include "tools/mcp/mcp_tools.h"

#define ERR_CAP      (64u << 10)
#define REPORT_CAP   (4u << 20)

/* @path's contents (at most REPORT_CAP) as JSON, or NULL. */
static cJSON *load_json(const char *path)
{
	struct mcp_buf b = { .cap = REPORT_CAP };
	char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;
	cJSON *j = NULL;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		mcp_buf_add(&b, buf, (size_t)n);
	close(fd);
	if (b.len && b.total == b.len)
		j = cJSON_ParseWithLength((const char *)b.p, b.len);
	mcp_buf_free(&b);
	return j;
}

/* Every string (and member name) in @j made valid UTF-8. */
static void clean_strings(cJSON *j)
{
	cJSON *e;

	cJSON_ArrayForEach(e, j) {
		if (e->string && !mcp_utf8_valid((uint8_t *)e->string, strlen(e->string))) {
			char *t = mcp_utf8_clean((uint8_t *)e->string, strlen(e->string), 0);

			if (t) {
				if (!(e->type & cJSON_StringIsConst))
					cJSON_free(e->string);
				e->string = t;
				e->type &= ~cJSON_StringIsConst;
			}
		}
		if (cJSON_IsString(e) && !mcp_utf8_valid((uint8_t *)e->valuestring, strlen(e->valuestring))) {
			char *t = mcp_utf8_clean((uint8_t *)e->valuestring, strlen(e->valuestring), 0);

			if (t) {
				cJSON_free(e->valuestring);
				e->valuestring = t;
			}
		}
		clean_strings(e);
	}
}

int mcp_promote_argv(const cJSON *args, const char *out, char **v, int cap, char *tmo, size_t tmocap)
{
	const cJSON *checks = cJSON_GetObjectItemCaseSensitive(args, "checks"), *e;
	const char *ws = mcp_arg_str(args, "workspace");
	int n = 0;

	/* Every entry, and the NULL after them, must fit: count first. */
	if (4 + 2 * cJSON_GetArraySize(checks) + (ws ? 2 : 0) +
	    (cJSON_GetObjectItem(args, "check_timeout") ? 2 : 0) + 1 + 1 > cap)
		return -E2BIG;
	v[n++] = "mvm";
	v[n++] = "promote";
	v[n++] = "--out";
	v[n++] = (char *)out;
	cJSON_ArrayForEach(e, checks) {
		v[n++] = "--check";
		v[n++] = e->valuestring;
	}
	if (ws) {
		v[n++] = "--workspace";
		v[n++] = (char *)ws;
	}
	if (cJSON_GetObjectItem(args, "check_timeout")) {
		snprintf(tmo, tmocap, "%d", (int)mcp_arg_num(args, "check_timeout", 3600));
		v[n++] = "--check-timeout";
		v[n++] = tmo;
	}
	v[n++] = (char *)mcp_arg_str(args, "name");
	v[n] = NULL;
	return n;
}

/*
 * Where the bundle goes: @args' out (or NAME-promote-N, the first free N)
 * beneath the operator's output root. *pfd: the parent directory, inherited
 * by the child; @out_path: what the child gets (through the descriptor, so
 * nothing is resolved by name again); @abs: what the caller is told.
 */
static int bundle_dir(struct mcp_call *c, const cJSON *args, int *pfd, char *out_path, char *abs)
{
	const struct mcp_app *a = mcp_app_of(c);
	const char *out = mcp_arg_str(args, "out");
	char leaf[NAME_MAX + 1], rel[128];
	int ret = -EEXIST;

	if (!a)
		return -1;
	if (out) {
		ret = op_out_resolve(&a->pol, out, true, pfd, leaf, abs, c->err, sizeof(c->err));
	} else {
		for (int i = 1; i <= 1000 && ret == -EEXIST; i++) {
			snprintf(rel, sizeof(rel), "%s-promote-%d", mcp_arg_str(args, "name"), i);
			ret = op_out_resolve(&a->pol, rel, true, pfd, leaf, abs, c->err, sizeof(c->err));
		}
	}
	if (ret)
		return -1;
	snprintf(out_path, PATH_MAX, "/proc/self/fd/%d/%s", *pfd, leaf);
	return 0;
}

int mcp_tool_promote(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_name(c, args);
	struct mcp_buf o = { .cap = ERR_CAP }, err = { .cap = ERR_CAP };
	char *argv[MCP_PROMOTE_ARGV_MAX], tmo[16], path[PATH_MAX + 16], dir[PATH_MAX], abs[PATH_MAX];
	cJSON *report;
	int st, pfd = -1;

	if (mcp_app_of(c) && mcp_app_of(c)->ns[0]) {
		/* A remote caller gets no host path: diff returns the patch inline. */
		snprintf(c->err, sizeof(c->err), "promote writes on the server's host and is not offered here: "
			 "use diff, which returns the patch");
		return -1;
	}
	if (mcp_need_sandbox(c, name) || bundle_dir(c, args, &pfd, dir, abs))
		return -1;
	st = mcp_promote_argv(args, dir, argv, MCP_PROMOTE_ARGV_MAX, tmo, sizeof(tmo));
	if (st < 0) {
		snprintf(c->err, sizeof(c->err), "too many checks");
		st = -1;
		goto out;
	}
	argv[st - 1] = (char *)name;	/* the host's name, the one just checked */
	st = mcp_spawn(c, argv, &o, &err);
	/* 1: a check failed, the bundle is written all the same. */
	if (st != 0 && st != 1) {
		mcp_child_failed(c, "promote", st, &err);
		st = -1;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/report.json", dir);
	report = load_json(path);
	if (!cJSON_IsObject(report)) {
		cJSON_Delete(report);
		snprintf(c->err, sizeof(c->err), "promote: %.900s/report.json is missing or not JSON", abs);
		st = -1;
		goto out;
	}
	clean_strings(report);
	cJSON_AddStringToObject(out, "out", abs);
	cJSON_AddBoolToObject(out, "checks_passed", st == 0);
	cJSON_AddItemToObject(out, "report", report);
	st = 0;
out:
	close(pfd);
	mcp_buf_free(&o);
	mcp_buf_free(&err);
	return st;
}
