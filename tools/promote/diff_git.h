/*
 * One change in git's extended diff format (what `git diff` prints and
 * `git apply` reads): "diff --git a/P b/P", then new/deleted file mode,
 * old/new mode, similarity index + rename from/to, and the hunks; binary
 * contents a "GIT binary patch" (up to GB_MAX, else "Binary files ...
 * differ", which git apply refuses). Written by mvm itself from bytes:
 * git never runs on anything the guest wrote. Pure.
 */
#ifndef MVM_DIFF_GIT_H
#define MVM_DIFF_GIT_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/promote/changeset.h"
#include "tools/promote/outbuf.h"

struct dg_blob {
	const char *p;		/* a file's bytes or a symlink's target */
	size_t len;
};

/* git's rule: a NUL byte in the first 8000 bytes. */
bool dg_is_binary(const struct dg_blob *b);
/*
 * @prefix + @path ("a/" + path), quoted as git's quote_c_style does ("..."
 * with C escapes, octal for control and non-ASCII bytes) when it holds any
 * byte outside [A-Za-z0-9._-/+,:@%=]: besides git's own cases, a shell's
 * metacharacters and spaces, with '$' and '`' as octal too, so no line of
 * the patch run by a shell expands or runs anything from a path. git apply
 * reads every form back.
 */
void dg_quote(struct outbuf *o, const char *prefix, const char *path);
enum dg_form { DG_TEXT, DG_BINARY_PATCH, DG_BINARY_MARKER };

/*
 * Append @c to @o. @old/@new are the contents (NULL where the change has
 * no such side; a rename needs none). *@binary says how the content went
 * in (enum dg_form; DG_BINARY_MARKER: git apply cannot apply it). 0 or -ENOMEM.
 */
int dg_write(struct outbuf *o, const struct change *c, const struct dg_blob *old,
	     const struct dg_blob *new, int *binary);

#endif
