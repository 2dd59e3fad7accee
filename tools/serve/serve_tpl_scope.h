/*
 * Whose template is it (docs/api.md, "Templates"): a template made through
 * the API is its tenant's, stored as TENANT.NAME and recorded as such by
 * the owner its source sandbox's config.json carries into the template
 * ("owner": "tenant:TENANT", the same scope as sandboxes,
 * tools/sandbox/operator_policy.h). A template with no tenant owner is
 * the operator's, visible to every tenant. Another tenant's template is
 * "no template named NAME" to every path.
 */
#ifndef MVM_SERVE_TPL_SCOPE_H
#define MVM_SERVE_TPL_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/sandbox/operator_policy.h"

/*
 * The store name of the template @name as @tenant sees it: its own
 * TENANT.@name first, else @name if that is the operator's or its own.
 * 0, or -ENOENT (-EPERM for a name the policy refuses) with @err.
 */
int sv_tpl_resolve(const struct op_policy *pol, const char *tenant, const char *name, char *store, size_t cap,
		   char *err, size_t errcap);

/* @store is visible to @tenant: true with the name it sees in @shown (own: without "TENANT."). */
bool sv_tpl_visible(const char *tenant, const char *store, char *shown, size_t cap);

/* @store is @tenant's own (its owner is tenant:@tenant). */
bool sv_tpl_owned(const char *tenant, const char *store);

/*
 * What @tenant's templates hold: how many in @count, and in @bytes the
 * host disk their files take (allocated blocks, so a sparse memory image
 * counts what it uses; a file linked into two of them counts once). 0, or
 * -errno when the store cannot be listed (@count and @bytes then 0).
 */
int sv_tpl_usage(const char *tenant, int *count, uint64_t *bytes);

#endif
