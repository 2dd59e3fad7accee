/*
 * `mvm serve`'s tenants: one bearer token each, kept only as its SHA-256 in
 * an operator file (JSON, mode 0600, owned by the server's user), with the
 * tenant's quotas beside it:
 *   {"tenants": {"alice": {"sha256": HEX, "sandboxes": N, "cpus": N,
 *                          "memory": BYTES, "disk": BYTES, "templates": N,
 *                          "checkpoints": N}}}
 * ("templates" absent: as many as "sandboxes", the rule before it existed;
 * "checkpoints" absent: the default below).
 * A token is "mvm_" and 64 hex digits from getrandom(); it is printed once
 * by `mvm serve token add` and never stored.
 */
#ifndef MVM_SERVE_TOKEN_H
#define MVM_SERVE_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/sha256.h"
#include "tools/serve/serve_route.h"

#define SV_TOKEN_LEN 68			/* "mvm_" + 64 hex */
#define SV_MAX_TENANTS 1024

struct sv_quota {
	int sandboxes;			/* sandboxes at once */
	int cpus;			/* vCPUs over all of them */
	uint64_t memory;		/* bytes over all of them */
	/* Bytes of host disk: each sandbox's disk size, the bytes its
	 * checkpoints hold (sv_ckpt_held) and the bytes its templates hold
	 * (serve_tpl_scope.h, sv_tpl_usage). */
	uint64_t disk;
	int templates;			/* templates made through the API, held at once */
	/* Checkpoints held at once over all its sandboxes (each boot of a
	 * sandbox starts with none: docs/api.md, "Tokens"). */
	int checkpoints;
};

/* Defaults for `token add` without options. */
#define SV_QUOTA_DEFAULT ((struct sv_quota){ 4, 8, 8ull << 30, 64ull << 30, 4, 32 })

struct sv_tenant {
	char name[SV_TENANT_MAX + 1];
	char hash[SHA256_HEX];
	struct sv_quota quota;
};

struct sv_tokens {
	int n;
	struct sv_tenant t[SV_MAX_TENANTS];
};

/* The default file: $MVM_SERVE_TOKENS, else ${XDG_CONFIG_HOME:-~/.config}/mvm/serve-tokens.json. 0 or -errno. */
int sv_tokens_default_path(char *out, size_t cap);

/*
 * Load @path. A missing file is an empty table (0). Refused (-EPERM, with
 * @err) when it is readable or writable by group/others or not owned by
 * this user; -EINVAL with @err when it is not the format above.
 */
int sv_tokens_load(const char *path, struct sv_tokens *t, char *err, size_t errlen);

/* Parse the file's text (pure). 0 or -EINVAL with @err. */
int sv_tokens_parse(const char *text, struct sv_tokens *t, char *err, size_t errlen);
/* The file's text for @t (malloc'd), or NULL. */
char *sv_tokens_format(const struct sv_tokens *t);

/*
 * Add @tenant with quota @q under a lock on the file: a new token in @token
 * (NUL-terminated) and its hash recorded (0600). -EEXIST if the tenant has
 * one (remove it first), -EINVAL for a bad name; @err says why.
 */
int sv_token_add(const char *path, const char *tenant, const struct sv_quota *q,
		 char token[SV_TOKEN_LEN + 1], char *err, size_t errlen);
/* Remove @tenant's token. 0, -ENOENT, or -errno with @err. */
int sv_token_rm(const char *path, const char *tenant, char *err, size_t errlen);

/*
 * The tenant whose token is @token (the bearer value), or NULL. Every
 * entry is compared, each in constant time, so the time taken does not
 * depend on which (if any) matched or where two hashes differ.
 */
const struct sv_tenant *sv_token_find(const struct sv_tokens *t, const char *token);

/* "Bearer TOKEN" -> TOKEN (pointer into @header), or NULL. */
const char *sv_bearer(const char *header);

#endif
