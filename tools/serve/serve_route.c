/* Routing and body parsing of `mvm serve` (tools/serve/serve_route.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/serve/serve_route.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), 400)

/* [A-Za-z0-9][A-Za-z0-9_.-]*, at most @max: the store's names. */
static bool store_name_ok(const char *n, size_t max)
{
	size_t len = strlen(n);

	if (len == 0 || len > max)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = n[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');

		if (!alnum && (i == 0 || !strchr("_.-", ch)))
			return false;
	}
	return true;
}

bool sv_name_ok(const char *n)
{
	return store_name_ok(n, SV_NAME_MAX);
}

bool sv_tpl_name_ok(const char *n)
{
	return store_name_ok(n, SV_TPL_MAX);
}

bool sv_tenant_ok(const char *t)
{
	size_t len = strlen(t);

	if (len == 0 || len > SV_TENANT_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = t[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (!alnum && (i == 0 || !strchr("_-", ch)))
			return false;
	}
	return true;
}

int sv_host_name(const char *tenant, const char *name, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s.%s", tenant, name);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

bool sv_own_name(const char *tenant, const char *host, char *name, size_t cap)
{
	size_t tl = strlen(tenant);

	if (strncmp(host, tenant, tl) || host[tl] != '.' || !sv_name_ok(host + tl + 1))
		return false;
	snprintf(name, cap, "%s", host + tl + 1);
	return true;
}

bool sv_guest_path_ok(const char *p)
{
	size_t len = strlen(p);

	if (p[0] != '/' || len >= SV_PATH_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return false;
	return true;
}

struct sub {
	const char *path, *method;	/* path after /v1/sandboxes/NAME */
	enum sv_op op;
	bool body, json;
	const char *verb;
};

static const struct sub subs[] = {
	{ "", "GET", SV_GET, false, false, "get" },
	{ "", "DELETE", SV_DELETE, false, false, "delete" },
	{ "/exec", "POST", SV_EXEC, true, true, "exec" },
	{ "/files", "GET", SV_FILE_GET, false, false, "file_get" },
	{ "/files", "PUT", SV_FILE_PUT, true, false, "file_put" },
	{ "/tree", "GET", SV_TREE_GET, false, false, "tree_get" },
	{ "/tree", "PUT", SV_TREE_PUT, true, false, "tree_put" },
	{ "/workspace", "PUT", SV_WORKSPACE_PUT, true, false, "workspace_put" },
	{ "/diff", "GET", SV_DIFF, false, false, "diff" },
	{ "/promote", "POST", SV_PROMOTE, true, true, "promote" },
	{ "/stop", "POST", SV_STOP, false, false, "stop" },
	{ "/start", "POST", SV_START, false, false, "start" },
	{ "/checkpoints", "POST", SV_CHECKPOINT, true, true, "checkpoint" },
	{ "/checkpoints", "GET", SV_CHECKPOINTS, false, false, "checkpoints" },
	{ "/rollback", "POST", SV_ROLLBACK, true, true, "rollback" },
	{ "/network", "GET", SV_NET_SHOW, false, false, "net_show" },
	{ "/network", "POST", SV_NET_EDIT, true, true, "net_edit" },
	{ "/events", "GET", SV_EVENTS, false, false, "events" },
	{ "/fork", "POST", SV_FORK, true, true, "fork" },
	{ "/template", "POST", SV_TEMPLATE_MAKE, true, true, "template_make" },
};

/* 405 with the methods @path takes (RFC 9110 15.5.6: an Allow header goes with it). */
static int not_allowed(struct sv_route *r, const char *methods, char *err, size_t errlen)
{
	snprintf(r->allow, sizeof(r->allow), "%s", methods);
	snprintf(err, errlen, "method not allowed (this path takes %s)", methods);
	return 405;
}

static int set(struct sv_route *r, enum sv_op op, bool body, bool json, const char *verb)
{
	r->op = op;
	r->allow[0] = '\0';		/* methods gathered before the match are no 405's */
	r->has_body = body;
	r->json_body = json;
	r->verb = verb;
	return 0;
}

static int route_sandbox(const char *method, const char *rest, struct sv_route *r, char *err,
			 size_t errlen)
{
	const char *slash = strchr(rest, '/');
	size_t nlen = slash ? (size_t)(slash - rest) : strlen(rest);
	const char *sub = rest + nlen;
	size_t al = 0;

	if (nlen == 0 || nlen > SV_NAME_MAX)
		return ERR("invalid sandbox name");
	memcpy(r->name, rest, nlen);
	r->name[nlen] = '\0';
	if (!sv_name_ok(r->name))
		return ERR("invalid sandbox name: [A-Za-z0-9][A-Za-z0-9_.-]{0,%d}", SV_NAME_MAX - 1);
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		if (strcmp(sub, subs[i].path))
			continue;
		if (!strcmp(method, subs[i].method))
			return set(r, subs[i].op, subs[i].body, subs[i].json, subs[i].verb);
		al += (size_t)snprintf(r->allow + al, sizeof(r->allow) - al, "%s%s", al ? ", " : "", subs[i].method);
	}
	if (al) {
		char methods[sizeof(r->allow)];

		snprintf(methods, sizeof(methods), "%s", r->allow);
		return not_allowed(r, methods, err, errlen);
	}
	snprintf(err, errlen, "no such path");
	return 404;
}

/* /v1/templates/NAME: GET a template's bundle, DELETE one of the tenant's own. */
static int route_template(const char *method, const char *name, struct sv_route *r, char *err,
			  size_t errlen)
{
	if (!sv_tpl_name_ok(name))
		return ERR("invalid template name: [A-Za-z0-9][A-Za-z0-9_.-]{0,%d}", SV_TPL_MAX - 1);
	snprintf(r->tpl, sizeof(r->tpl), "%s", name);
	if (!strcmp(method, "DELETE"))
		return set(r, SV_TEMPLATE_RM, false, false, "template_rm");
	if (strcmp(method, "GET"))
		return not_allowed(r, "GET, DELETE", err, errlen);
	return set(r, SV_TEMPLATE_GET, false, false, "template_get");
}

int sv_route(const char *method, const char *path, struct sv_route *r, char *err, size_t errlen)
{
	static const char pre[] = "/v1/sandboxes/", tpre[] = "/v1/templates/";

	memset(r, 0, sizeof(*r));
	r->verb = "?";
	if (!strcmp(path, "/v1/health") || !strcmp(path, "/v1/capacity")) {
		if (strcmp(method, "GET"))
			return not_allowed(r, "GET", err, errlen);
		return path[4] == 'h' ? set(r, SV_HEALTH, false, false, "health")
				      : set(r, SV_CAPACITY, false, false, "capacity");
	}
	if (!strcmp(path, "/v1/sandboxes")) {
		if (!strcmp(method, "GET"))
			return set(r, SV_LIST, false, false, "list");
		if (!strcmp(method, "POST"))
			return set(r, SV_CREATE, true, true, "create");
		return not_allowed(r, "GET, POST", err, errlen);
	}
	if (!strcmp(path, "/v1/mcp")) {
		/* GET would open a server stream (SSE) for messages the server starts;
		 * this server starts none (no sampling, no list_changed), and the
		 * Streamable HTTP transport lets a server without one answer 405. */
		if (!strcmp(method, "POST"))
			return set(r, SV_MCP, true, true, "mcp");
		if (!strcmp(method, "DELETE"))
			return set(r, SV_MCP_END, false, false, "mcp_end");
		return not_allowed(r, "POST, DELETE", err, errlen);
	}
	if (!strncmp(path, pre, sizeof(pre) - 1))
		return route_sandbox(method, path + sizeof(pre) - 1, r, err, errlen);
	if (!strncmp(path, tpre, sizeof(tpre) - 1))
		return route_template(method, path + sizeof(tpre) - 1, r, err, errlen);
	snprintf(err, errlen, "no such path");
	return 404;
}

/* Parse @len bytes as one JSON object. NULL with 400 in *st. */
static cJSON *parse_obj(const char *body, size_t len, char *err, size_t errlen)
{
	cJSON *j;

	if (len > SV_JSON_MAX) {
		snprintf(err, errlen, "request body larger than %u bytes", SV_JSON_MAX);
		return NULL;
	}
	if (memchr(body, '\0', len)) {
		snprintf(err, errlen, "request body is not JSON (NUL byte)");
		return NULL;
	}
	j = cJSON_ParseWithLength(body, len);
	if (!cJSON_IsObject(j)) {
		snprintf(err, errlen, "request body is not a JSON object");
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static bool key_in(const char *k, const char *const *keys)
{
	for (; *keys; keys++)
		if (!strcmp(k, *keys))
			return true;
	return false;
}

/* Refuse any key not in @keys. 0 or 400. */
static int only_keys(const cJSON *o, const char *const *keys, char *err, size_t errlen)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, o)
		if (!key_in(e->string, keys))
			return ERR("unknown key '%.64s'", e->string);
	return 0;
}

/* {"K": "V", ...} into K=V strings. 0 or 400. */
static int env_parse(const cJSON *o, char **env, int *n, char *err, size_t errlen)
{
	const cJSON *e;

	if (!o)
		return 0;
	if (!cJSON_IsObject(o))
		return ERR("env must be an object of strings");
	cJSON_ArrayForEach(e, o) {
		size_t kl = strlen(e->string);

		if (!cJSON_IsString(e))
			return ERR("env value of '%.64s' must be a string", e->string);
		if (!kl || kl > 255 || strchr(e->string, '='))
			return ERR("env name '%.64s' is empty, too long or has '='", e->string);
		if (strlen(e->valuestring) > 32768)
			return ERR("env value of '%.64s' is longer than 32768 bytes", e->string);
		if (*n >= SV_MAX_ENV)
			return ERR("more than %d env entries", SV_MAX_ENV);
		if (asprintf(&env[*n], "%s=%s", e->string, e->valuestring) < 0)
			return ERR("out of memory");
		(*n)++;
	}
	return 0;
}

/* A short string key into @out (cap bytes, pattern sv_name_ok); absent leaves "". 0 or 400. */
static int name_key(const cJSON *o, const char *key, char *out, size_t cap, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return 0;
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= cap || !sv_name_ok(v->valuestring))
		return ERR("%s must be a name: [A-Za-z0-9][A-Za-z0-9_.-]{0,%zu}", key, cap - 2);
	snprintf(out, cap, "%s", v->valuestring);
	return 0;
}

static int memory_parse(const cJSON *v, uint64_t *out, char *err, size_t errlen)
{
	if (!v)
		return 0;
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 1 || v->valuedouble > 1024 * 1024 || v->valuedouble != (int)v->valuedouble)
			return ERR("memory: a whole number of MiB from 1 to 1048576");
		*out = (uint64_t)v->valuedouble << 20;
		return 0;
	}
	if (!cJSON_IsString(v) || strlen(v->valuestring) > 24 || cli_parse_size(v->valuestring, out) ||
	    *out < (1u << 20) || *out > (1ull << 40))
		return ERR("memory: \"512M\", \"2G\" or MiB as a number");
	return 0;
}

static int allow_parse(const cJSON *a, struct sv_create *c, char *err, size_t errlen)
{
	const cJSON *e;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a))
		return ERR("allow must be an array of rule strings");
	c->net_given = true;
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) > 255)
			return ERR("allow: each rule is a non-empty string of at most 255 bytes");
		if (e->valuestring[0] == '-')
			return ERR("allow: a rule cannot start with '-'");
		if (c->nallow >= SV_MAX_ALLOW)
			return ERR("allow: more than %d rules", SV_MAX_ALLOW);
		if (!(c->allow[c->nallow] = strdup(e->valuestring)))
			return ERR("out of memory");
		c->nallow++;
	}
	return 0;
}

static int create_fields(const cJSON *j, struct sv_create *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "name", "image", "template", "cpus", "memory", "env",
					    "allow", "timeout", NULL };
	const cJSON *v;
	int st = only_keys(j, keys, err, errlen);

	if (st)
		return st;
	v = cJSON_GetObjectItemCaseSensitive(j, "name");
	if (!cJSON_IsString(v) || !sv_name_ok(v->valuestring))
		return ERR("name is required: [A-Za-z0-9][A-Za-z0-9_.-]{0,%d}", SV_NAME_MAX - 1);
	snprintf(c->name, sizeof(c->name), "%s", v->valuestring);
	if ((st = name_key(j, "image", c->image, sizeof(c->image), err, errlen)) ||
	    (st = name_key(j, "template", c->template_name, sizeof(c->template_name), err, errlen)))
		return st;
	if (c->image[0] && c->template_name[0])
		return ERR("give image or template, not both");
	v = cJSON_GetObjectItemCaseSensitive(j, "cpus");
	if (v) {
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 64 ||
		    v->valuedouble != (int)v->valuedouble)
			return ERR("cpus: a whole number from 1 to 64");
		c->cpus = (int)v->valuedouble;
	}
	if ((st = memory_parse(cJSON_GetObjectItemCaseSensitive(j, "memory"), &c->memory, err, errlen)))
		return st;
	if ((st = env_parse(cJSON_GetObjectItemCaseSensitive(j, "env"), c->env, &c->nenv, err, errlen)))
		return st;
	if ((st = allow_parse(cJSON_GetObjectItemCaseSensitive(j, "allow"), c, err, errlen)))
		return st;
	v = cJSON_GetObjectItemCaseSensitive(j, "timeout");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > SV_LIFETIME_MAX ||
		    v->valuedouble != (double)(uint32_t)v->valuedouble)
			return ERR("timeout (the sandbox's lifetime): whole seconds from 1 to %u", SV_LIFETIME_MAX);
		c->lifetime_s = (uint32_t)v->valuedouble;
	}
	return 0;
}

int sv_create_parse(const char *body, size_t len, struct sv_create *c, char *err, size_t errlen)
{
	cJSON *j = parse_obj(body, len, err, errlen);
	int st;

	memset(c, 0, sizeof(*c));
	if (!j)
		return 400;
	st = create_fields(j, c, err, errlen);
	cJSON_Delete(j);
	if (st)
		sv_create_free(c);
	return st;
}

void sv_create_free(struct sv_create *c)
{
	for (int i = 0; i < c->nenv; i++)
		free(c->env[i]);
	for (int i = 0; i < c->nallow; i++)
		free(c->allow[i]);
	c->nenv = c->nallow = 0;
}

static int argv_add(struct sv_exec *x, const char *s, char *err, size_t errlen)
{
	if (x->argc >= SV_MAX_ARGV)
		return ERR("cmd: more than %d arguments", SV_MAX_ARGV);
	if (!(x->argv[x->argc] = strdup(s)))
		return ERR("out of memory");
	x->argc++;
	return 0;
}

static int exec_cmd(const cJSON *j, struct sv_exec *x, char *err, size_t errlen)
{
	const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(j, "cmd");
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(j, "command"), *e;
	int st = 0;

	if (!cmd == !sh)
		return ERR("give exactly one of cmd (an array of strings) and command (a shell string)");
	if (sh) {
		if (!cJSON_IsString(sh) || !sh->valuestring[0])
			return ERR("command must be a non-empty string");
		return argv_add(x, "sh", err, errlen) || argv_add(x, "-c", err, errlen) ||
		       argv_add(x, sh->valuestring, err, errlen) ? 400 : 0;
	}
	if (!cJSON_IsArray(cmd) || cJSON_GetArraySize(cmd) == 0)
		return ERR("cmd must be a non-empty array of strings");
	cJSON_ArrayForEach(e, cmd) {
		if (!cJSON_IsString(e))
			return ERR("cmd must be a non-empty array of strings");
		if ((st = argv_add(x, e->valuestring, err, errlen)))
			return st;
	}
	if (!x->argv[0][0])
		return ERR("cmd[0] is empty");
	return 0;
}

static int exec_fields(const cJSON *j, struct sv_exec *x, char *err, size_t errlen)
{
	static const char *const keys[] = { "cmd", "command", "env", "cwd", "timeout", "stdin", NULL };
	const cJSON *v;
	int st = only_keys(j, keys, err, errlen);

	if (st || (st = exec_cmd(j, x, err, errlen)))
		return st;
	if ((st = env_parse(cJSON_GetObjectItemCaseSensitive(j, "env"), x->env, &x->nenv, err, errlen)))
		return st;
	v = cJSON_GetObjectItemCaseSensitive(j, "cwd");
	if (v) {
		if (!cJSON_IsString(v) || !sv_guest_path_ok(v->valuestring))
			return ERR("cwd must be an absolute path");
		snprintf(x->cwd, sizeof(x->cwd), "%s", v->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "timeout");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 86400)
			return ERR("timeout: seconds from 1 to 86400");
		x->timeout_s = (uint32_t)v->valuedouble;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "stdin");
	if (v) {
		if (!cJSON_IsString(v) || strlen(v->valuestring) > SV_STDIN_MAX)
			return ERR("stdin: a string of at most %u bytes", SV_STDIN_MAX);
		x->stdin_len = strlen(v->valuestring);
		if (!(x->stdin_data = strdup(v->valuestring)))
			return ERR("out of memory");
	}
	return 0;
}

int sv_exec_parse(const char *body, size_t len, struct sv_exec *x, char *err, size_t errlen)
{
	cJSON *j = parse_obj(body, len, err, errlen);
	int st;

	memset(x, 0, sizeof(*x));
	if (!j)
		return 400;
	st = exec_fields(j, x, err, errlen);
	cJSON_Delete(j);
	if (st)
		sv_exec_free(x);
	return st;
}

void sv_exec_free(struct sv_exec *x)
{
	for (int i = 0; i < x->argc; i++)
		free(x->argv[i]);
	for (int i = 0; i < x->nenv; i++)
		free(x->env[i]);
	free(x->stdin_data);
	x->stdin_data = NULL;
	x->argc = x->nenv = 0;
}

int sv_tag_parse(const char *body, size_t len, bool required, char *tag, size_t cap, char *err,
		 size_t errlen)
{
	static const char *const keys[] = { "tag", NULL };
	cJSON *j;
	int st;

	tag[0] = '\0';
	if (len == 0 && !required)
		return 0;
	if (!(j = parse_obj(body, len, err, errlen)))
		return 400;
	st = only_keys(j, keys, err, errlen);
	if (!st)
		st = name_key(j, "tag", tag, cap, err, errlen);
	if (!st && required && !tag[0])
		st = ERR("tag is required");
	cJSON_Delete(j);
	return st;
}

char *sv_error_json(const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	char *s, *line = NULL;
	size_t n = strlen(msg);
	char clean[1024];

	/* Keep printable ASCII only: cJSON passes invalid UTF-8 through unchanged. */
	if (n >= sizeof(clean))
		n = sizeof(clean) - 1;
	for (size_t i = 0; i < n; i++)
		clean[i] = (unsigned char)msg[i] >= 0x20 && (unsigned char)msg[i] < 0x7f ? msg[i] : '?';
	clean[n] = '\0';
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "error", clean);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (s && asprintf(&line, "%s\n", s) < 0)
		line = NULL;
	free(s);
	return line;
}

bool sv_utf8_text(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t b = p[i];
		uint32_t cp, min;
		size_t k;

		if (b == 0)
			return false;
		if (b < 0x80) {
			i++;
			continue;
		}
		if ((b & 0xe0) == 0xc0)
			k = 1, cp = b & 0x1f, min = 0x80;
		else if ((b & 0xf0) == 0xe0)
			k = 2, cp = b & 0x0f, min = 0x800;
		else if ((b & 0xf8) == 0xf0)
			k = 3, cp = b & 0x07, min = 0x10000;
		else
			return false;
		if (n - i <= k)
			return false;
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

int sv_net_parse(const char *body, size_t len, const char **verb, char *rule, size_t cap, char *err,
		 size_t errlen)
{
	static const char *const keys[] = { "allow", "deny", "remove", NULL };
	const cJSON *e = NULL;
	cJSON *j = parse_obj(body, len, err, errlen);
	int st;

	if (!j)
		return 400;
	st = only_keys(j, keys, err, errlen);
	if (!st && cJSON_GetArraySize(j) != 1)
		st = ERR("give exactly one of allow, deny, remove");
	if (!st) {
		e = j->child;
		if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) > 255 ||
		    strlen(e->valuestring) >= cap || e->valuestring[0] == '-')
			st = ERR("%s: a rule string of 1 to 255 bytes", e->string);
	}
	if (!st) {
		*verb = !strcmp(e->string, "allow") ? "allow" : !strcmp(e->string, "deny") ? "deny" : "remove";
		snprintf(rule, cap, "%s", e->valuestring);
	}
	cJSON_Delete(j);
	return st;
}

int sv_fork_parse(const char *body, size_t len, char *name, size_t cap, char *err, size_t errlen)
{
	static const char *const keys[] = { "name", NULL };
	cJSON *j = parse_obj(body, len, err, errlen);
	int st;

	name[0] = '\0';
	if (!j)
		return 400;
	st = only_keys(j, keys, err, errlen);
	if (!st)
		st = name_key(j, "name", name, cap, err, errlen);
	if (!st && !name[0])
		st = ERR("name (the new sandbox's) is required");
	cJSON_Delete(j);
	return st;
}

static int promote_fields(const cJSON *j, struct sv_promote *p, char *err, size_t errlen)
{
	static const char *const keys[] = { "checks", "workspace", "check_timeout", NULL };
	const cJSON *v, *e;
	int st = only_keys(j, keys, err, errlen);

	if (st)
		return st;
	v = cJSON_GetObjectItemCaseSensitive(j, "checks");
	if (v && !cJSON_IsArray(v))
		return ERR("checks must be an array of shell command strings");
	cJSON_ArrayForEach(e, v) {
		if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) > 4096)
			return ERR("checks: each is a command string of 1 to 4096 bytes");
		if (p->nchecks >= SV_MAX_CHECKS)
			return ERR("checks: at most %d", SV_MAX_CHECKS);
		if (!(p->checks[p->nchecks] = strdup(e->valuestring)))
			return ERR("out of memory");
		p->nchecks++;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "workspace");
	if (v) {
		if (!cJSON_IsString(v) || !sv_guest_path_ok(v->valuestring))
			return ERR("workspace must be an absolute guest path");
		snprintf(p->workspace, sizeof(p->workspace), "%s", v->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "check_timeout");
	if (v) {
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 86400 ||
		    v->valuedouble != (double)(uint32_t)v->valuedouble)
			return ERR("check_timeout: whole seconds from 1 to 86400");
		p->check_timeout = (uint32_t)v->valuedouble;
	}
	return 0;
}

int sv_promote_parse(const char *body, size_t len, struct sv_promote *p, char *err, size_t errlen)
{
	cJSON *j;
	int st;

	memset(p, 0, sizeof(*p));
	if (len == 0)
		return 0;
	if (!(j = parse_obj(body, len, err, errlen)))
		return 400;
	st = promote_fields(j, p, err, errlen);
	cJSON_Delete(j);
	if (st)
		sv_promote_free(p);
	return st;
}

void sv_promote_free(struct sv_promote *p)
{
	for (int i = 0; i < p->nchecks; i++)
		free(p->checks[i]);
	p->nchecks = 0;
}
