/*
 * A tenant's quotas in `mvm serve`: sandboxes at once, vCPUs, memory and
 * disk summed over its sandboxes (their config.json) and the creates in
 * flight. The check is pure (unit-tested); the sums read the state dirs.
 */
#ifndef MVM_SERVE_QUOTA_H
#define MVM_SERVE_QUOTA_H

#include <stddef.h>

#include "tools/serve/serve_token.h"

/* What @use plus @add would be: 0 within @q, else -1 with the limit passed named in @why. */
int sv_quota_check(const struct sv_quota *q, const struct sv_quota *use, const struct sv_quota *add,
		   char *why, size_t cap);

/* The sums over @tenant's sandboxes on this host. 0 or -errno. */
int sv_quota_usage(const char *tenant, struct sv_quota *use);

struct sv_server;
/*
 * Reserve @add for @tenant against its quota @q (existing sandboxes plus
 * creates in flight), under the server's lock. A slot index >= 0, or -1
 * with @why (quota), -2 (too many creates in flight) or -3 (@host is
 * being created by another request, or exists).
 */
int sv_quota_reserve(struct sv_server *s, const char *tenant, const char *host, const struct sv_quota *q,
		     const struct sv_quota *add, char *why, size_t cap);
void sv_quota_release(struct sv_server *s, int slot);

#endif
