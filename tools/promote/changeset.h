/*
 * What changed between a baseline manifest and a scan of the workspace as
 * it is now, in git's terms: files and symlinks only (directories are not
 * content), exact renames paired up, git metadata (.git) left out. Pure.
 */
#ifndef MVM_CHANGESET_H
#define MVM_CHANGESET_H

#include <stddef.h>

#include "tools/sandbox/manifest.h"

enum chg_kind { CHG_ADD, CHG_DEL, CHG_MOD, CHG_RENAME };

struct change {
	int kind;			/* enum chg_kind */
	const struct mf_entry *old;	/* NULL for CHG_ADD */
	const struct mf_entry *new;	/* NULL for CHG_DEL */
};

struct changeset {
	struct change *c;		/* sorted by path (the new one for renames) */
	size_t n;
};

/*
 * Compare @base with @cur, both sorted. Only paths equal to @prefix or
 * below it count ("" = everything). A file that became a symlink (or the
 * reverse) is a deletion and an addition. A deleted and an added entry of
 * the same kind, mode and hash form a rename. 0 or -ENOMEM.
 */
int changes_compute(const struct manifest *base, const struct manifest *cur, const char *prefix,
		    struct changeset *out);
void changes_free(struct changeset *cs);

#endif
