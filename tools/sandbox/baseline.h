/*
 * A sandbox's workspace baseline: what `mvm create --copy HOST:GUEST` put in,
 * kept on the host in the state directory as baseline/N.json (one manifest
 * per --copy, in order) and baseline/blobs/SHA256 (the contents), so diffs
 * are computed against exactly what went in, whatever happens to HOST later.
 */
#ifndef MVM_BASELINE_H
#define MVM_BASELINE_H

#include <stddef.h>

#include "tools/sandbox/manifest.h"

#define BASELINE_MAX 64

/* Record @host_src, then copy it into sandbox @name at @guest_dst (like mvm cp). 0 or -errno (printed). */
int baseline_copy_in(const char *name, const char *host_src, const char *guest_dst);
/* Remove @name's baseline/ and any tmp-diff-* a killed diff left behind (for mvm rm). 0 or -errno. */
int baseline_remove(const char *name);
/* Every manifest of @name, in --copy order. Count (0: none), or -errno with @err set. */
int baseline_load(const char *name, struct manifest **out, char *err, size_t errlen);
void baseline_free(struct manifest *ms, int n);
/* The blob store of @name. 0 or -ENAMETOOLONG. */
int baseline_blob_dir(const char *name, char *out, size_t cap);
/* "/a//b/" -> "/a/b", in place. */
void baseline_clean_path(char *p);
/*
 * The manifest whose guest root holds @gpath (NULL: the only one) and
 * @gpath's path below that root ("" = the root). Index, or -1 with @err set.
 */
int baseline_pick(const struct manifest *ms, int n, const char *gpath, const char **rel,
		  char *err, size_t errlen);

#endif
