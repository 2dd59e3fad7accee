/* Payload codecs of the agent protocol: exec request, exit report, tree entry. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "guest/agent/proto.h"

long ap_exec_encode(const struct ap_exec *e, uint8_t *buf, size_t cap)
{
	struct ap_wr w = { .buf = buf, .cap = cap };

	ap_put_u32(&w, e->flags);
	ap_put_u32(&w, e->uid);
	ap_put_u32(&w, e->timeout_ms);
	ap_put_u16(&w, e->rows);
	ap_put_u16(&w, e->cols);
	ap_put_str(&w, e->cwd ? e->cwd : "");
	ap_put_u32(&w, (uint32_t)e->argc);
	for (int i = 0; i < e->argc; i++)
		ap_put_str(&w, e->argv[i]);
	ap_put_u32(&w, (uint32_t)e->envc);
	for (int i = 0; i < e->envc; i++)
		ap_put_str(&w, e->env[i]);
	return w.err || w.len > AP_MAX_PAYLOAD ? -ENOSPC : (long)w.len;
}

/* Take one string from @r into the arena at *@at (room is checked by the caller's sizing). */
static char *arena_str(struct ap_rd *r, char *arena, size_t *at, size_t cap)
{
	char *s = arena + *at;

	if (*at >= cap) {
		r->err = true;
		return NULL;
	}
	ap_get_str(r, s, cap - *at);
	if (r->err)
		return NULL;
	*at += strlen(s) + 1;
	return s;
}

static int decode_list(struct ap_rd *r, char *arena, size_t *at, size_t cap,
		       int *count, char ***out, bool env)
{
	uint32_t n = ap_get_u32(r);

	/* Each entry takes at least its 4-byte length: bound n before allocating. */
	if (r->err || n > AP_MAX_ARGS || n > (r->len - r->off) / 4)
		return -EPROTO;
	*out = calloc(n + 1, sizeof(char *));
	if (!*out)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		char *s = arena_str(r, arena, at, cap);

		if (!s || (env && (s[0] == '=' || !strchr(s, '='))))
			return -EPROTO;
		(*out)[i] = s;
	}
	*count = (int)n;
	return 0;
}

int ap_exec_decode(const uint8_t *p, size_t len, struct ap_exec *e)
{
	struct ap_rd r = { .p = p, .len = len };
	size_t at = 0, cap = len + 1;
	int ret;

	memset(e, 0, sizeof(*e));
	if (len > AP_MAX_PAYLOAD)
		return -EPROTO;
	e->flags = ap_get_u32(&r);
	e->uid = ap_get_u32(&r);
	e->timeout_ms = ap_get_u32(&r);
	e->rows = ap_get_u16(&r);
	e->cols = ap_get_u16(&r);
	if (r.err || (e->flags & ~AP_EXEC_FLAGS))
		return -EPROTO;
	e->arena = malloc(cap);
	if (!e->arena)
		return -ENOMEM;
	e->cwd = arena_str(&r, e->arena, &at, cap);
	ret = e->cwd ? decode_list(&r, e->arena, &at, cap, &e->argc, &e->argv, false) : -EPROTO;
	if (!ret)
		ret = decode_list(&r, e->arena, &at, cap, &e->envc, &e->env, true);
	if (!ret && (e->argc < 1 || !e->argv[0][0] || r.off != r.len))
		ret = -EPROTO;
	if (ret)
		ap_exec_free(e);
	return ret;
}

void ap_exec_free(struct ap_exec *e)
{
	free(e->argv);
	free(e->env);
	free(e->arena);
	memset(e, 0, sizeof(*e));
}

long ap_exit_encode(const struct ap_exit *x, uint8_t *buf, size_t cap)
{
	struct ap_wr w = { .buf = buf, .cap = cap };

	ap_put_u32(&w, x->kind);
	ap_put_u32(&w, x->code);
	ap_put_u32(&w, x->timed_out);
	return w.err ? -ENOSPC : (long)w.len;
}

int ap_exit_decode(const uint8_t *p, size_t len, struct ap_exit *x)
{
	struct ap_rd r = { .p = p, .len = len };

	x->kind = ap_get_u32(&r);
	x->code = ap_get_u32(&r);
	x->timed_out = ap_get_u32(&r);
	if (r.err || r.off != len || x->kind > AP_SIGNALED || x->timed_out > 1 ||
	    x->code > 255)
		return -EPROTO;
	return 0;
}

long ap_entry_encode(const struct ap_entry *en, uint8_t *buf, size_t cap)
{
	struct ap_wr w = { .buf = buf, .cap = cap };

	ap_put_u32(&w, en->kind);
	ap_put_u32(&w, en->mode);
	ap_put_u64(&w, en->size);
	ap_put_str(&w, en->path);
	ap_put_str(&w, en->kind == AP_SYMLINK || en->kind == AP_SKIPPED ? en->target : "");
	return w.err ? -ENOSPC : (long)w.len;
}

int ap_entry_decode(const uint8_t *p, size_t len, struct ap_entry *en)
{
	struct ap_rd r = { .p = p, .len = len };

	en->kind = ap_get_u32(&r);
	en->mode = ap_get_u32(&r) & 07777;
	en->size = ap_get_u64(&r);
	ap_get_str(&r, en->path, sizeof(en->path));
	ap_get_str(&r, en->target, sizeof(en->target));
	if (r.err || r.off != len || en->kind < AP_FILE || en->kind > AP_SKIPPED)
		return -EPROTO;
	if (en->kind != AP_FILE && en->kind != AP_SKIPPED && en->size)
		return -EPROTO;
	if (!ap_path_safe(en->path) ||
	    ((en->kind == AP_SYMLINK || en->kind == AP_SKIPPED) && !en->target[0]))
		return -EPROTO;
	return 0;
}

bool ap_path_safe(const char *path)
{
	const char *c = path;

	if (strlen(path) >= AP_PATH_MAX)
		return false;
	if (!*path)
		return true;
	if (*path == '/')
		return false;
	while (*c) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
		if (*c == '/')
			c++;
		if (*c == 0 && c[-1] == '/')
			return false;	/* trailing slash: an empty last component */
	}
	return true;
}

/*
 * Lexically: the depth of @linkpath's directory plus the target's walk never
 * goes below 0, and no ".." follows a name (that name may be a link).
 */
bool ap_link_inside(const char *linkpath, const char *target)
{
	bool named = false;
	int depth = 0;
	const char *c;

	if (!target[0] || target[0] == '/' || strlen(target) >= AP_PATH_MAX)
		return false;
	for (c = linkpath; *c; c++)
		depth += *c == '/';
	for (c = target; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (named || --depth < 0)
				return false;
		} else if (n && !(n == 1 && c[0] == '.')) {
			named = true;
		}
		c += n;
		if (*c == '/')
			c++;
	}
	return true;
}
