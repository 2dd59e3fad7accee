/* Assemble report.json (tools/promote/promote_report.h). */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/arch/arch.h"
#include "common/events.h"
#include "tools/sandbox/api_client.h"
#include "common/cli_util.h"
#include "tools/sandbox/path_sanitize.h"
#include "tools/promote/promote_report.h"
#include "tools/sandbox/sandbox.h"

#define EVENTS_MAX 10000		/* per list; the rest only counted */

static cJSON *checks_json(const struct promote_report *r)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; i < r->nchecks; i++) {
		const struct check_result *c = &r->checks[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "command", c->cmd);
		cJSON_AddBoolToObject(o, "passed", check_passed(c));
		if (c->ran && !c->signal)
			cJSON_AddNumberToObject(o, "exit_code", c->exit_code);
		else
			cJSON_AddNullToObject(o, "exit_code");
		if (c->signal)
			cJSON_AddNumberToObject(o, "signal", c->signal);
		cJSON_AddBoolToObject(o, "timed_out", c->timed_out);
		cJSON_AddNumberToObject(o, "duration_s", (double)(long)(c->duration_s * 1000) / 1000);
		cJSON_AddStringToObject(o, "log", c->log);
		if (c->truncated)
			cJSON_AddBoolToObject(o, "log_truncated", true);
		if (!c->ran)
			cJSON_AddStringToObject(o, "error", c->err);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *list_json(const struct refusals *l)
{
	cJSON *a = cJSON_CreateArray();

	char buf[4 * 4096];

	for (size_t i = 0; i < l->n; i++) {
		cJSON *o = cJSON_CreateObject();

		/* Guest-chosen names: a report that is not valid UTF-8 would not parse. */
		ps_utf8_clean(l->r[i].path, buf, sizeof(buf));
		cJSON_AddStringToObject(o, "path", buf);
		ps_utf8_clean(l->r[i].why, buf, sizeof(buf));
		cJSON_AddStringToObject(o, "reason", buf);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *patch_json(const struct promote_report *r)
{
	const struct patch_stats *st = &r->diff->st;
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "file", "changes.patch");
	cJSON_AddStringToObject(o, "sha256", r->patch_sha);
	cJSON_AddNumberToObject(o, "bytes", (double)r->diff->patch.len);
	cJSON_AddNumberToObject(o, "files_changed", (double)st->files);
	cJSON_AddNumberToObject(o, "added", (double)st->added);
	cJSON_AddNumberToObject(o, "deleted", (double)st->deleted);
	cJSON_AddNumberToObject(o, "modified", (double)st->modified);
	cJSON_AddNumberToObject(o, "renamed", (double)st->renamed);
	cJSON_AddNumberToObject(o, "binary", (double)st->binary);
	cJSON_AddItemToObject(o, "notes", list_json(&r->diff->notes));
	cJSON_AddItemToObject(o, "not_compared", list_json(&r->diff->refused));
	if (r->diff->refused.dropped)
		cJSON_AddNumberToObject(o, "not_compared_unlisted", (double)r->diff->refused.dropped);
	return o;
}

static bool type_is(const char *t, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(t, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

/* Events of @path whose type starts with one of @prefixes, added to @a
 * (lines that do not parse are skipped); *@n counts them. */
static void events_from(const char *path, const char *const *prefixes, cJSON *a, size_t *n,
			size_t *more)
{
	char *line = malloc(EVENT_LINE_MAX + 2);
	FILE *f = line ? fopen(path, "re") : NULL;

	while (f && fgets(line, EVENT_LINE_MAX + 2, f)) {
		cJSON *e = cJSON_Parse(line);
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "type");

		if (cJSON_IsString(t) && type_is(t->valuestring, prefixes)) {
			if ((*n)++ < EVENTS_MAX) {
				cJSON_AddItemToArray(a, e);
				continue;
			}
			(*more)++;
		}
		cJSON_Delete(e);
	}
	if (f)
		fclose(f);
	free(line);
}

/* The same for events.jsonl after its rotated older part, as an array. */
static cJSON *events_json(const char *name, const char *const *prefixes, size_t *more)
{
	char p[PATH_MAX], old[PATH_MAX + 2];
	cJSON *a = cJSON_CreateArray();
	size_t n = 0;

	*more = 0;
	if (sb_path(name, "events.jsonl", p, sizeof(p)))
		return a;
	snprintf(old, sizeof(old), "%s.1", p);
	events_from(old, prefixes, a, &n, more);
	events_from(p, prefixes, a, &n, more);
	return a;
}

static cJSON *network_json(const char *name)
{
	static const char *const denied[] = { "net-deny", NULL };
	cJSON *o = cJSON_CreateObject(), *resp = NULL;
	char *reply = NULL;
	size_t more;

	if (!api_call(name, "{\"op\":\"net-show\"}", &reply, 10000))
		resp = cJSON_Parse(reply);
	free(reply);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok")))
		cJSON_AddItemToObject(o, "policy",
				      cJSON_DetachItemFromObjectCaseSensitive(resp, "policy"));
	else
		cJSON_AddNullToObject(o, "policy");
	cJSON_Delete(resp);
	cJSON_AddItemToObject(o, "denied", events_json(name, denied, &more));
	if (more)
		cJSON_AddNumberToObject(o, "denied_unlisted", (double)more);
	return o;
}

static void add_file(cJSON *o, const char *key, const char *path)
{
	char hex[SHA256_HEX] = "";
	cJSON *f = cJSON_CreateObject();
	int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC) : -1;

	cJSON_AddStringToObject(f, "path", path);
	if (fd >= 0 && !sha256_fd_hex(fd, hex))
		cJSON_AddStringToObject(f, "sha256", hex);
	if (fd >= 0)
		close(fd);
	cJSON_AddItemToObject(o, key, f);
}

static void add_machine(cJSON *o, const char *name)
{
	struct sb_config c = { 0 };
	char kernel[PATH_MAX] = "";
	const char *gd = cli_guest_dir();

	if (sb_config_load(name, &c))
		return;
	if (c.kernel[0])
		snprintf(kernel, sizeof(kernel), "%s", c.kernel);
	else if (gd)
		snprintf(kernel, sizeof(kernel), "%s/%s", gd, arch_kernel_name);
	if (c.image[0])
		add_file(o, "image", c.image);
	else
		cJSON_AddStringToObject(o, "image", "initramfs (built-in, with a /data disk)");
	add_file(o, "kernel", kernel);
	sb_config_free(&c);
}

char *promote_report_json(const struct promote_report *r)
{
	static const char *const history[] = { "checkpoint", "rollback", "restore", "snapshot", NULL };
	cJSON *o = cJSON_CreateObject(), *ws = cJSON_CreateObject();
	char *text, clean[4 * 4096];
	bool all = true;
	size_t more;

	for (int i = 0; i < r->nchecks; i++)
		all &= check_passed(&r->checks[i]);
	cJSON_AddNumberToObject(o, "version", 1);
	cJSON_AddStringToObject(o, "sandbox", r->name);
	cJSON_AddNumberToObject(o, "time", (double)time(NULL));
	ps_utf8_clean(r->diff->guest_root, clean, sizeof(clean));
	cJSON_AddStringToObject(ws, "guest_path", clean);
	cJSON_AddStringToObject(ws, "host_source", r->diff->host_src);
	cJSON_AddItemToObject(o, "workspace", ws);
	cJSON_AddBoolToObject(o, "checks_passed", all);
	cJSON_AddItemToObject(o, "checks", checks_json(r));
	cJSON_AddItemToObject(o, "patch", patch_json(r));
	cJSON_AddItemToObject(o, "network", network_json(r->name));
	cJSON_AddItemToObject(o, "checkpoints", events_json(r->name, history, &more));
	add_machine(o, r->name);
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}
