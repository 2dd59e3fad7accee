/* The checkpoint calls of the control API. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <nettle/base16.h>

#include "common/events.h"
#include "snapshots/checkpoint.h"
#include "snapshots/snapshot_dir.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/snap_api.h"

bool snap_api_handles(const char *op)
{
	return !strcmp(op, "checkpoint") || !strcmp(op, "checkpoints") || !strcmp(op, "rollback") ||
	       !strcmp(op, "snapshot");
}

static cJSON *ok_reply(void)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddBoolToObject(r, "ok", 1);
	return r;
}

static cJSON *list(struct vm *vm)
{
	cJSON *r = ok_reply(), *a = cJSON_AddArrayToObject(r, "checkpoints");

	for (int i = 0; i < snap_count(vm); i++) {
		struct snap_ckpt_info in;
		cJSON *o;

		if (snap_info(vm, i, &in))
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "tag", in.tag);
		cJSON_AddStringToObject(o, "parent", in.parent);
		cJSON_AddNumberToObject(o, "time", in.time);
		cJSON_AddNumberToObject(o, "pages_changed", (double)in.pages_covered);
		cJSON_AddNumberToObject(o, "pages_stored", (double)in.pages_stored);
		cJSON_AddNumberToObject(o, "pause_s", in.seconds);
		cJSON_AddBoolToObject(o, "current", in.current);
		cJSON_AddItemToArray(a, o);
	}
	return r;
}

/* @key of @req as exactly @n bytes of lowercase hex into @out. */
static bool hex_field(const cJSON *req, const char *key, uint8_t *out, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);
	struct base16_decode_ctx c;
	size_t got = n;

	if (!cJSON_IsString(v) || strlen(v->valuestring) != 2 * n ||
	    strspn(v->valuestring, "0123456789abcdef") != 2 * n)
		return false;
	base16_decode_init(&c);
	return base16_decode_update(&c, &got, out, 2 * n, v->valuestring) && got == n &&
	       base16_decode_final(&c);
}

/* A snapshot into @dir, its files tagged under the CLI's key for this
 * snapshot (snapshots/snap_mac.h): the VMM never holds the host key. */
static int snapshot(struct vm *vm, const cJSON *req, const char *dir, const char **err,
		    char *ebuf, size_t elen)
{
	uint8_t k[SNAP_KEY_LEN], salt[SNAP_SALT_LEN];
	int ret;

	if (!hex_field(req, "key", k, sizeof(k)) || !hex_field(req, "salt", salt, sizeof(salt))) {
		*err = "expected {\"op\":\"snapshot\",\"dir\":ABSOLUTE_EMPTY_DIR,"
		       "\"key\":HEX32,\"salt\":HEX32}";
		return -EINVAL;
	}
	ret = snap_export(vm, dir, k, salt, ebuf, elen);
	explicit_bzero(k, sizeof(k));
	if (ret)
		*err = ebuf;
	return ret;
}

cJSON *snap_api_event(const char *type, const char *tag)
{
	cJSON *ev = event_new(type, 0);

	cJSON_AddStringToObject(ev, "tag", tag);
	return ev;
}

cJSON *snap_api_op(struct vm *vm, const char *name, const char *op, const cJSON *req,
		   const char **err, char *ebuf, size_t elen)
{
	const cJSON *tag = cJSON_GetObjectItemCaseSensitive(req, "tag");
	char taken[SNAP_TAG_MAX];
	double secs = 0;
	cJSON *r;

	if (!strcmp(op, "checkpoints"))
		return list(vm);
	if (!strcmp(op, "snapshot")) {
		const cJSON *dir = cJSON_GetObjectItemCaseSensitive(req, "dir");

		if (!cJSON_IsString(dir) || dir->valuestring[0] != '/') {
			*err = "expected {\"op\":\"snapshot\",\"dir\":ABSOLUTE_EMPTY_DIR}";
			return NULL;
		}
		if (snapshot(vm, req, dir->valuestring, err, ebuf, elen))
			return NULL;
		sb_event(name, "snapshot");
		return ok_reply();
	}
	if (tag && !cJSON_IsString(tag)) {
		*err = "\"tag\" must be a string";
		return NULL;
	}
	if (!strcmp(op, "checkpoint")) {
		if (snap_checkpoint(vm, tag ? tag->valuestring : NULL, taken, sizeof(taken), ebuf, elen)) {
			*err = ebuf;
			return NULL;
		}
		sb_event_put(name, snap_api_event("checkpoint", taken));
		r = ok_reply();
		cJSON_AddStringToObject(r, "tag", taken);
		return r;
	}
	if (!tag) {
		*err = "expected {\"op\":\"rollback\",\"tag\":TAG}";
		return NULL;
	}
	if (snap_rollback(vm, tag->valuestring, &secs, ebuf, elen)) {
		*err = ebuf;
		return NULL;
	}
	sb_event_put(name, snap_api_event("rollback", tag->valuestring));
	r = ok_reply();
	cJSON_AddStringToObject(r, "tag", tag->valuestring);
	cJSON_AddNumberToObject(r, "seconds", secs);
	return r;
}
