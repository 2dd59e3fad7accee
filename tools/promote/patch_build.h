/*
 * A whole patch: the changes between a baseline (manifest + its blob store)
 * and a scanned copy of the workspace (manifest + the directory mvm wrote
 * it to), each written by tools/promote/diff_git.c. Reads only files: blobs by
 * their hash, the copy beneath its directory with O_NOFOLLOW at every step.
 */
#ifndef MVM_PATCH_BUILD_H
#define MVM_PATCH_BUILD_H

#include <stdint.h>

#include "tools/sandbox/manifest.h"
#include "tools/promote/outbuf.h"

#define PATCH_FILE_MAX (64ull << 20)	/* a file larger than this is not diffed line by line */

struct patch_note {
	/* A change that is in the patch in a form git apply refuses (binary), or left out. */
	void (*fn)(void *opaque, const char *path, const char *what);
	void *opaque;
};

struct patch_stats {
	size_t files, added, deleted, modified, renamed, binary;
};

/*
 * Append to @o every change below @prefix ("" = all) between @base (blobs
 * in @blob_dir) and @cur (files beneath @cur_dir). 0, or -errno with @err set.
 * o->over after return means the patch hit its cap and is incomplete.
 */
int patch_build(struct outbuf *o, const struct manifest *base, const char *blob_dir,
		const struct manifest *cur, const char *cur_dir, const char *prefix,
		const struct patch_note *note, struct patch_stats *st, char *err, size_t errlen);

#endif
