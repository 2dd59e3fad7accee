/* `mvm cp` transfers, shared with `mvm create --copy`. */
#ifndef MVM_CP_H
#define MVM_CP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/sandbox/fetch.h"

#define CP_DEFAULT_MAX (16ull << 30)
#define CP_MAX_ENTRIES 1000000		/* files, directories, links per copy out */

/* Host file or tree @src to @dst inside sandbox @name. 0 or -errno (message printed). */
int cp_put(const char *name, const char *src, const char *dst);
/* cp_put, and where the copy landed in the guest (absolute; "" if the agent did not say). */
int cp_put_at(const char *name, const char *src, const char *dst, char *where, size_t cap);
struct cp_out {
	uint64_t max;			/* bytes in all, and per file */
	bool merge;			/* into an existing directory (never its .git, never through a symlink) */
	struct refusals *skipped;	/* what was left out, for the caller to print */
};

/*
 * @src inside sandbox @name to host @dst (like cp -r: inside @dst if it is
 * a directory). The copy is new: received beside its place and renamed
 * into it when complete, so an existing file or directory is never
 * touched; with o->merge it goes into an existing directory. Either way
 * the promotion gate's filters apply: no .git, no symlink into .git or out
 * of the tree, no control characters in names. 0 or -errno (message printed).
 */
int cp_get(const char *name, const char *src, const char *dst, const struct cp_out *o);

#endif
