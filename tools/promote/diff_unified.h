/*
 * Line diff of two byte buffers, printed as unified hunks exactly as
 * `diff -u` prints the part after its ---/+++ lines: "@@ -l,n +l,n @@",
 * context lines, '-' before '+' in each change, "\ No newline at end of
 * file" after a last line without one. Pure. Myers' O(ND) algorithm in
 * linear space (memory O(lines), not O(edits^2)) on the part between the
 * common prefix and suffix; past DU_MAX_EDITS edits (or DU_MAX_WORK) the
 * middle is printed as one replacement (still a correct patch, not minimal).
 */
#ifndef MVM_DIFF_UNIFIED_H
#define MVM_DIFF_UNIFIED_H

#include <stddef.h>

#include "tools/promote/outbuf.h"

#define DU_MAX_EDITS 4000
#define DU_MAX_WORK  200000000L	/* edits x lines: past it, the middle is replaced whole */

/* Hunks with @context lines of context; nothing when equal. 0 or -ENOMEM. */
int du_hunks(struct outbuf *o, const char *a, size_t alen, const char *b, size_t blen, int context);

#endif
