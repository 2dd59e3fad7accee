/* events.jsonl: one schema, one writer. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/events.h"
#include "common/rotlog.h"

/* string, number, string or null, number or null, boolean */
enum ev_type { S, N, S_OR_NULL, N_OR_NULL, B };

struct ev_field {
	const char *name;
	enum ev_type type;
};


#define EV_FIELDS_MAX 10

/* The schema (docs/api.md): every type and its fields beyond time and type. */
static const struct ev_kind {
	const char *type;
	struct ev_field f[EV_FIELDS_MAX];
} kinds[] = {
	{ .type = "created" },
	{ .type = "started" },
	{ .type = "stopping" },
	{ "stopped", { { "outcome", S }, { "message", S } } },
	{ .type = "paused" },
	{ .type = "resumed" },
	{ .type = "killed" },
	{ "checkpoint", { { "tag", S } } },
	{ "rollback", { { "tag", S } } },
	{ .type = "snapshot" },
	{ .type = "restored" },
	{ "net-deny", { { "proto", S }, { "dst", S_OR_NULL }, { "port", N }, { "name", S_OR_NULL },
			{ "reason", S } } },
	{ "net-deny-suppressed", { { "suppressed", N } } },
	{ "log-rotated", { { "file", S }, { "rotations", N }, { "dropped_bytes", N } } },
	/* What confines the VMM (tools/sandbox/sandbox_confine.c): namespaces as
	 * "user,mount,ipc" ("" for none), landlock its ABI (0: none),
	 * capabilities "none" or "kept"; cgroup_caller the cgroup it was started
	 * in, cgroup_note why it has no cgroup of its own (then it is charged to
	 * cgroup_caller). */
	{ "confined", { { "vmm_pid", N }, { "helper_pid", N_OR_NULL }, { "seccomp", S },
			{ "no_new_privs", B }, { "capabilities", S }, { "landlock", N },
			{ "namespaces", S }, { "cgroup", S_OR_NULL }, { "cgroup_caller", S_OR_NULL },
			{ "cgroup_note", S_OR_NULL } } },
};

uint64_t event_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void event_time_format(uint64_t ms, char *buf, size_t cap)
{
	time_t secs = (time_t)(ms / 1000);
	char t[32];
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%03uZ", t, (unsigned)(ms % 1000));
}

cJSON *event_new(const char *type, uint64_t ms)
{
	cJSON *ev = cJSON_CreateObject();
	char t[32];

	event_time_format(ms ? ms : event_now_ms(), t, sizeof(t));
	if (ev && (!cJSON_AddStringToObject(ev, "time", t) ||
		   !cJSON_AddStringToObject(ev, "type", type))) {
		cJSON_Delete(ev);
		return NULL;
	}
	return ev;
}

static const struct ev_kind *kind_of(const char *type)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].type, type))
			return &kinds[i];
	return NULL;
}

static bool type_ok(const cJSON *v, enum ev_type t)
{
	switch (t) {
	case N: return cJSON_IsNumber(v);
	case N_OR_NULL: return cJSON_IsNumber(v) || cJSON_IsNull(v);
	case B: return cJSON_IsBool(v);
	case S_OR_NULL: return cJSON_IsString(v) || cJSON_IsNull(v);
	default: return cJSON_IsString(v);
	}
}

/* The field @name of @k, NULL if it has none ("time", "type" are common). */
static const struct ev_field *field_of(const struct ev_kind *k, const char *name)
{
	static const struct ev_field common[] = { { .name = "time", .type = S }, { .name = "type", .type = S } };

	for (int i = 0; i < 2; i++)
		if (!strcmp(common[i].name, name))
			return &common[i];
	for (int i = 0; i < EV_FIELDS_MAX && k->f[i].name; i++)
		if (!strcmp(k->f[i].name, name))
			return &k->f[i];
	return NULL;
}

int event_check(const cJSON *ev, char *err, size_t errlen)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type"), *it;
	const struct ev_kind *k;
	int want = 2, have = 0;

	if (!cJSON_IsObject(ev) || !cJSON_IsString(type) || !(k = kind_of(type->valuestring))) {
		snprintf(err, errlen, "not an event of a known type");
		return -EINVAL;
	}
	for (int i = 0; i < EV_FIELDS_MAX && k->f[i].name; i++)
		want++;
	cJSON_ArrayForEach(it, ev) {
		const struct ev_field *f = field_of(k, it->string);

		if (!f || !type_ok(it, f->type)) {
			snprintf(err, errlen, "%s: %s field \"%s\"", k->type, f ? "mistyped" : "unknown",
				 it->string);
			return -EINVAL;
		}
		have++;
	}
	if (have != want) {
		snprintf(err, errlen, "%s: %d fields, expected %d", k->type, have, want);
		return -EINVAL;
	}
	return 0;
}

int event_format(const cJSON *ev, char *buf, size_t cap)
{
	char err[128];

	if (event_check(ev, err, sizeof(err)))
		return -EINVAL;
	if (cap > INT32_MAX || !cJSON_PrintPreallocated((cJSON *)ev, buf, (int)cap, 0))
		return -ENOSPC;
	return (int)strlen(buf);
}

/* events.jsonl's rotation marker is itself an event. */
static int rotated_mark(char *buf, size_t cap, const char *path, uint64_t dropped,
			uint64_t rotations, uint64_t max)
{
	const char *base = strrchr(path, '/');
	cJSON *ev = event_new("log-rotated", 0);
	int n = -ENOMEM;

	if (ev) {
		cJSON_AddStringToObject(ev, "file", base ? base + 1 : path);
		cJSON_AddNumberToObject(ev, "rotations", (double)rotations);
		cJSON_AddNumberToObject(ev, "dropped_bytes", (double)dropped);
		n = event_format(ev, buf, cap - 1);
		cJSON_Delete(ev);
	}
	if (n <= 0)
		return 0;
	buf[n++] = '\n';
	buf[n] = 0;
	return n;
}

int event_append(const char *path, cJSON *ev)
{
	char line[EVENT_LINE_MAX];
	int n;

	if (!ev)
		return -ENOMEM;
	n = event_format(ev, line, sizeof(line) - 1);
	cJSON_Delete(ev);
	if (n < 0)
		return n;
	line[n++] = '\n';
	/* One write per event under a lock: concurrent writers' lines stay whole. */
	return rotlog_append_line(path, rotlog_max_from_env(), rotated_mark, line, (size_t)n);
}
