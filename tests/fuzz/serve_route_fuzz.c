/*
 * libFuzzer target: what `mvm serve` itself does with a client's bytes
 * (tools/serve/serve_route.h): the path routed, the create, exec and tag
 * bodies parsed, output classified as text. The first byte picks which.
 * Beyond "no overrun" (ASan's): a route is 0 or one of the documented
 * statuses, and a routed sandbox name is always a valid one; a parsed body
 * holds only what the checks promise; a refusal always says why. MCP over
 * HTTP: the header rules (NUL-separated header values) and the initialize
 * test never crash; a pass never lets a malformed session id through.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/serve/serve_mcp.h"
#include "tools/serve/serve_route.h"

static void route(const char *s)
{
	static const char *const methods[] = { "GET", "POST", "PUT", "DELETE" };
	struct sv_route r;
	char err[256] = "";
	int st = sv_route(methods[(unsigned char)s[0] & 3], s[0] ? s + 1 : s, &r, err, sizeof(err));

	if (st != 0 && st != 400 && st != 404 && st != 405)
		abort();
	if (st && !err[0])
		abort();
	if (!st && (r.op == SV_NONE || (r.name[0] && !sv_name_ok(r.name))))
		abort();
	if ((st == 405) != (r.allow[0] != '\0'))	/* a 405, and only a 405, names the allowed methods */
		abort();
}

static void create(const char *s, size_t n)
{
	struct sv_create c;
	char err[256] = "";
	int st = sv_create_parse(s, n, &c, err, sizeof(err));

	if (st == 400 && !err[0])
		abort();
	if (st == 0) {
		if (!sv_name_ok(c.name) || (c.image[0] && !sv_name_ok(c.image)) || (c.cpus && (c.cpus < 1 || c.cpus > 64)))
			abort();
		for (int i = 0; i < c.nenv; i++)
			if (!strchr(c.env[i], '=') || c.env[i][0] == '=')
				abort();
		for (int i = 0; i < c.nallow; i++)
			if (c.allow[i][0] == '-' || !c.allow[i][0])
				abort();
		sv_create_free(&c);
	} else if (st != 400) {
		abort();
	}
}

/* The promote body: checks non-empty, a workspace absolute, nothing kept on a refusal. */
static void promote(const char *s, size_t n)
{
	struct sv_promote p;
	char err[256] = "";
	int st = sv_promote_parse(s, n, &p, err, sizeof(err));

	if (st == 0) {
		if (p.nchecks > SV_MAX_CHECKS || (p.workspace[0] && p.workspace[0] != '/'))
			abort();
		for (int i = 0; i < p.nchecks; i++)
			if (!p.checks[i][0])
				abort();
		sv_promote_free(&p);
	} else if (st != 400 || !err[0] || p.nchecks) {
		abort();
	}
}

static void exec(const char *s, size_t n)
{
	struct sv_exec x;
	char err[256] = "";
	int st = sv_exec_parse(s, n, &x, err, sizeof(err));

	if (st == 0) {
		if (x.argc < 1 || x.argv[x.argc] || !x.argv[0][0] || (x.cwd[0] && x.cwd[0] != '/'))
			abort();
		sv_exec_free(&x);
	} else if (st != 400 || !err[0]) {
		abort();
	}
}

/* @s: Accept, Content-Type, Mcp-Session-Id, MCP-Protocol-Version, Origin,
 * Host as NUL-separated values (an empty one: absent); then the body. */
static void mcp(const char *s, size_t n)
{
	const char *v[6] = { 0 }, *p = s, *end = s + n;
	struct svm_hdrs h;
	char err[256] = "";
	int st;

	for (int i = 0; i < 6 && p < end; i++) {
		v[i] = *p ? p : NULL;
		p += strlen(p) + 1;
	}
	h = (struct svm_hdrs){ v[0], v[1], v[2], v[3], v[4], v[5] };
	st = svm_check_post(&h, p < end && svm_is_initialize(p, (size_t)(end - p)), err, sizeof(err));
	if (st && !err[0])
		abort();
	if (!st && h.session && !svm_id_ok(h.session))
		abort();
	st = svm_check_delete(&h, err, sizeof(err));
	if (!st && !svm_id_ok(h.session))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char tag[48], err[256], rule[256];
	const char *verb = NULL;
	char *s;

	if (size < 1 || size > 64 << 10)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 6) {
	case 0: route(s); break;
	case 1: create(s, size - 1); break;
	case 2: exec(s, size - 1); break;
	case 3:
		if (!sv_tag_parse(s, size - 1, true, tag, sizeof(tag), err, sizeof(err)) && !sv_name_ok(tag))
			abort();
		if (!sv_fork_parse(s, size - 1, tag, sizeof(tag), err, sizeof(err)) && !sv_name_ok(tag))
			abort();
		if (!sv_net_parse(s, size - 1, &verb, rule, sizeof(rule), err, sizeof(err)) &&
		    (!verb || !rule[0] || rule[0] == '-'))
			abort();
		promote(s, size - 1);
		break;
	case 5: mcp(s, size - 1); break;
	default: sv_utf8_text((const uint8_t *)s, size - 1); free(sv_error_json(s)); break;
	}
	free(s);
	return 0;
}
