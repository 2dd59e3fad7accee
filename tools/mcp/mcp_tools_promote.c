/*
 * The promote tool: `mvm promote` writes the bundle; report.json comes back
 * as structured content. Its strings partly come from the guest (paths,
 * reasons), so every one is made valid UTF-8 again before it is sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/mcp/mcp_spawn.h"
#include "tools/mcp/mcp_tools.h"

#define MAX_CHECKS   64
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

static int build_argv(const cJSON *args, char **v, char *tmo, size_t tmocap)
{
	const cJSON *checks = cJSON_GetObjectItemCaseSensitive(args, "checks"), *e;
	const char *ws = mcp_arg_str(args, "workspace");
	int n = 0;

	v[n++] = "mvm";
	v[n++] = "promote";
	v[n++] = "--out";
	v[n++] = (char *)mcp_arg_str(args, "out");
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

int mcp_tool_promote(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const char *name = mcp_arg_str(args, "name"), *dir = mcp_arg_str(args, "out");
	struct mcp_buf o = { .cap = ERR_CAP }, err = { .cap = ERR_CAP };
	char *argv[8 + 2 * MAX_CHECKS + 1], tmo[16], path[4200];
	cJSON *report;
	int st;

	if (mcp_need_sandbox(c, name))
		return -1;
	build_argv(args, argv, tmo, sizeof(tmo));
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
		snprintf(c->err, sizeof(c->err), "promote: %s is missing or not JSON", path);
		st = -1;
		goto out;
	}
	clean_strings(report);
	cJSON_AddStringToObject(out, "out", dir);
	cJSON_AddBoolToObject(out, "checks_passed", st == 0);
	cJSON_AddItemToObject(out, "report", report);
	st = 0;
out:
	mcp_buf_free(&o);
	mcp_buf_free(&err);
	return st;
}
