/*
 * `mvm serve`'s request routing and body parsing: pure functions over what
 * the HTTP library hands over (method, decoded path, query value, body
 * bytes), unit-tested and fuzzed (tests/fuzz/fuzz_serve_route.c). Every
 * input here comes from a network client holding at most a tenant's token.
 */
#ifndef MVM_SERVE_ROUTE_H
#define MVM_SERVE_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A tenant's sandbox name as the API shows it (the host's name is TENANT.NAME). */
#define SV_NAME_MAX   38
#define SV_TENANT_MAX 24
#define SV_TPL_MAX    63	/* a template's name (snapshots/template.h: TPL_NAME_MAX) */
#define SV_MAX_ENV    64
#define SV_MAX_ALLOW  64
#define SV_MAX_ARGV   256
#define SV_PATH_MAX   1024
#define SV_JSON_MAX   (256u << 10)	/* a JSON body */
#define SV_LIFETIME_MAX (366u * 86400)	/* create's "timeout": mvm create --lifetime's range */

enum sv_op {
	SV_NONE,
	SV_HEALTH,		/* GET /v1/health */
	SV_CAPACITY,		/* GET /v1/capacity */
	SV_LIST,		/* GET /v1/sandboxes */
	SV_CREATE,		/* POST /v1/sandboxes */
	SV_GET,			/* GET /v1/sandboxes/NAME */
	SV_DELETE,		/* DELETE /v1/sandboxes/NAME */
	SV_EXEC,		/* POST /v1/sandboxes/NAME/exec */
	SV_FILE_GET,		/* GET /v1/sandboxes/NAME/files?path=P */
	SV_FILE_PUT,		/* PUT /v1/sandboxes/NAME/files?path=P */
	SV_TREE_GET,		/* GET /v1/sandboxes/NAME/tree?path=P: a tar stream */
	SV_TREE_PUT,		/* PUT /v1/sandboxes/NAME/tree?path=P: a tar body, extracted beneath P */
	SV_WORKSPACE_PUT,	/* PUT /v1/sandboxes/NAME/workspace?path=P: a tar, the baseline of diff/promote */
	SV_DIFF,		/* GET /v1/sandboxes/NAME/diff[?path=P]: the workspace's patch */
	SV_PROMOTE,		/* POST /v1/sandboxes/NAME/promote {"checks"?...}: the bundle as a tar */
	SV_STOP,		/* POST /v1/sandboxes/NAME/stop */
	SV_START,		/* POST /v1/sandboxes/NAME/start */
	SV_CHECKPOINT,		/* POST /v1/sandboxes/NAME/checkpoints  {"tag": T}? */
	SV_CHECKPOINTS,		/* GET /v1/sandboxes/NAME/checkpoints */
	SV_ROLLBACK,		/* POST /v1/sandboxes/NAME/rollback  {"tag": T} */
	SV_NET_SHOW,		/* GET /v1/sandboxes/NAME/network */
	SV_NET_EDIT,		/* POST /v1/sandboxes/NAME/network  {"allow"|"deny"|"remove": RULE} */
	SV_EVENTS,		/* GET /v1/sandboxes/NAME/events */
	SV_FORK,		/* POST /v1/sandboxes/NAME/fork  {"name": NEW} */
	SV_TEMPLATE_GET,	/* GET /v1/templates/NAME: the template's bundle */
	SV_TEMPLATE_MAKE,	/* POST /v1/sandboxes/NAME/template {"name": T}: the tenant's template T */
	SV_TEMPLATE_RM,		/* DELETE /v1/templates/NAME: one of the tenant's own */
	SV_MCP,			/* POST /v1/mcp: one MCP JSON-RPC message (serve_mcp.h) */
	SV_MCP_END,		/* DELETE /v1/mcp: end the Mcp-Session-Id */
};

struct sv_route {
	enum sv_op op;
	char name[SV_NAME_MAX + 1];	/* "" for the ops without a sandbox */
	char tpl[SV_TPL_MAX + 1];	/* SV_TEMPLATE_GET's template */
	bool has_body;			/* the op reads a request body */
	bool json_body;			/* ...and it is JSON (else raw bytes, PUT files) */
	const char *verb;		/* short name for the request log */
	char allow[40];			/* after a 405: the path's methods, for the Allow header */
};

/*
 * Route @method and @path (decoded, without the query string). 0 with @r
 * filled, or an HTTP status (400 bad name, 404 unknown path, 405 method
 * not allowed, with the path's methods in r->allow) with a reason in @err.
 */
int sv_route(const char *method, const char *path, struct sv_route *r, char *err, size_t errlen);

/* [A-Za-z0-9][A-Za-z0-9_.-]*, at most SV_NAME_MAX: a sandbox name. */
bool sv_name_ok(const char *name);
/* The same, at most SV_TPL_MAX: a template name. */
bool sv_tpl_name_ok(const char *name);
/* [a-z0-9][a-z0-9_-]*, at most SV_TENANT_MAX: a tenant (no '.', the host name's separator). */
bool sv_tenant_ok(const char *tenant);
/* The host's name of @tenant's sandbox @name: TENANT.NAME. 0 or -ENAMETOOLONG. */
int sv_host_name(const char *tenant, const char *name, char *out, size_t cap);
/* @host is one of @tenant's sandboxes: the API's name of it in @name, else false. */
bool sv_own_name(const char *tenant, const char *host, char *name, size_t cap);

/* An absolute guest path: starts with '/', no NUL, no control bytes, < SV_PATH_MAX. */
bool sv_guest_path_ok(const char *path);

struct sv_create {
	char name[SV_NAME_MAX + 1];
	char image[64];			/* a store name, "" = default */
	char template_name[64];		/* "" = boot */
	int cpus;			/* 0 = default */
	uint64_t memory;		/* bytes; 0 = default */
	uint32_t lifetime_s;		/* "timeout": mvm create --lifetime; 0 = none */
	int nenv;
	char *env[SV_MAX_ENV];		/* K=V, malloc'd */
	int nallow;
	char *allow[SV_MAX_ALLOW];	/* rules as given, malloc'd */
	bool net_given;			/* "allow" present (even empty) */
};

/*
 * The create body: {"name", "image", "template", "cpus", "memory" ("512M"
 * or MiB as a number), "env" {K: V}, "allow" [rule], "timeout" (the
 * sandbox's lifetime, seconds 1..SV_LIFETIME_MAX)}. Unknown
 * keys, wrong types and out-of-range values are refused. 0, or 400 with
 * @err (and nothing allocated). Free with sv_create_free.
 */
int sv_create_parse(const char *body, size_t len, struct sv_create *c, char *err, size_t errlen);
void sv_create_free(struct sv_create *c);

struct sv_exec {
	int argc;
	char *argv[SV_MAX_ARGV + 1];	/* malloc'd; {"command": S} becomes sh -c S */
	int nenv;
	char *env[SV_MAX_ENV];		/* K=V */
	char cwd[SV_PATH_MAX];		/* "" = / */
	uint32_t timeout_s;		/* 0 = none */
	char *stdin_data;		/* malloc'd, or NULL: stdin is /dev/null */
	size_t stdin_len;
};

#define SV_STDIN_MAX (64u << 10)	/* fits the stream's buffers before the command reads it */

/*
 * The exec body: {"cmd": [S...]} or {"command": S}, and optionally "env"
 * {K: V}, "cwd" (absolute), "timeout" (seconds, 1..86400), "stdin" (a string
 * of at most SV_STDIN_MAX bytes, then end of file). 0 or 400 with @err.
 */
int sv_exec_parse(const char *body, size_t len, struct sv_exec *x, char *err, size_t errlen);
void sv_exec_free(struct sv_exec *x);

#define SV_MAX_CHECKS 64	/* promote's checks (PROMOTE_MAX_CHECKS) */

struct sv_promote {
	int nchecks;
	char *checks[SV_MAX_CHECKS];	/* shell commands run in the guest, malloc'd */
	char workspace[SV_PATH_MAX];	/* "" = the only workspace */
	uint32_t check_timeout;		/* seconds; 0 = mvm promote's default */
};

/*
 * The promote body: empty, or {"checks": [S...] (each 1..4096 bytes),
 * "workspace": absolute path, "check_timeout": seconds 1..86400}. 0 or
 * 400 with @err (nothing allocated). Free with sv_promote_free.
 */
int sv_promote_parse(const char *body, size_t len, struct sv_promote *p, char *err, size_t errlen);
void sv_promote_free(struct sv_promote *p);

/* {"name": NEW}: fork's new sandbox. 0 or 400. */
int sv_fork_parse(const char *body, size_t len, char *name, size_t cap, char *err, size_t errlen);

/* {"tag": T} or an empty body (T = ""): checkpoint/rollback. 0 or 400. */
int sv_tag_parse(const char *body, size_t len, bool required, char *tag, size_t cap, char *err,
		 size_t errlen);

/* @p[0..n) is UTF-8 (RFC 3629: no overlongs, no surrogates) without NUL: a JSON string as is. */
bool sv_utf8_text(const uint8_t *p, size_t n);

/* The network edit body: exactly one of "allow", "deny", "remove" with a
 * rule string (1..255 bytes, not starting with '-'). @verb gets the key. 0 or 400. */
int sv_net_parse(const char *body, size_t len, const char **verb, char *rule, size_t cap, char *err,
		 size_t errlen);

/* `{"error": MSG}\n`, malloc'd (MSG made valid JSON whatever its bytes). NULL on ENOMEM. */
char *sv_error_json(const char *msg);

#endif
