/* `mvm export`: copy a guest tree out of a running sandbox into a new host directory. */
#ifndef MVM_EXPORT_H
#define MVM_EXPORT_H

#include "tools/sandbox/fetch.h"

/*
 * Fetch @gpath (a directory, or one file) of sandbox @name into a staging
 * directory beside @dst, then rename it to @dst (which must not exist, and
 * is never replaced if it appears meanwhile); a single file lands inside a
 * directory @dst. Left-out entries are listed in o->refused and on stderr,
 * errors on stderr as "mvm export: ...". 0, or -errno with nothing left behind.
 */
int sb_export(const char *name, const char *gpath, const char *dst, struct fetch_opts *o);

#endif
