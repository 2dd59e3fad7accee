/* git's extended diff headers around unified hunks (tools/promote/diff_git.h). */
#include <errno.h>
#include <string.h>

#include "tools/promote/diff_git.h"
#include "tools/promote/diff_unified.h"
#include "tools/promote/git_binary.h"
#include "common/sha1.h"

bool dg_is_binary(const struct dg_blob *b)
{
	return b && memchr(b->p, 0, b->len < 8000 ? b->len : 8000) != NULL;
}

/*
 * Bytes a path may hold unquoted. Anything else (a shell's metacharacters
 * ;|&$`<>(){}#, quotes, spaces, globs, ~, control and non-ASCII bytes)
 * makes git-style quoting: a changes.patch fed to a shell by mistake then
 * never runs a command hidden in a guest-chosen file name.
 */
static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("._-/+,:@%=", c));
}

void dg_quote(struct outbuf *o, const char *prefix, const char *path)
{
	bool quote = false;

	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		quote |= !plain_byte(*c);
	if (!quote) {
		ob_printf(o, "%s%s", prefix, path);
		return;
	}
	ob_printf(o, "\"%s", prefix);
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c == '"' || *c == '\\')
			ob_printf(o, "\\%c", *c);
		else if (*c == '\n')
			ob_put(o, "\\n", 2);
		else if (*c == '\t')
			ob_put(o, "\\t", 2);
		/* $ and ` still expand between a shell's double quotes: octal, which git reads back. */
		else if (*c < 0x20 || *c >= 0x7f || *c == '$' || *c == '`')
			ob_printf(o, "\\%03o", *c);
		else
			ob_put(o, c, 1);
	}
	ob_put(o, "\"", 1);
}

/* @what, then prefix+path (or /dev/null when @pa is NULL), then @end. */
static void named(struct outbuf *o, const char *what, const char *pa, const char *path, const char *end)
{
	ob_printf(o, "%s", what);
	if (pa)
		dg_quote(o, pa, path);
	else
		ob_put(o, "/dev/null", 9);
	ob_printf(o, "%s", end);
}

static void header(struct outbuf *o, const struct change *c)
{
	const struct mf_entry *a = c->old ? c->old : c->new, *b = c->new ? c->new : c->old;

	ob_put(o, "diff --git ", 11);
	dg_quote(o, "a/", a->path);
	ob_put(o, " ", 1);
	dg_quote(o, "b/", b->path);
	ob_put(o, "\n", 1);
	if (c->kind == CHG_ADD)
		ob_printf(o, "new file mode %06o\n", mf_git_mode(c->new));
	else if (c->kind == CHG_DEL)
		ob_printf(o, "deleted file mode %06o\n", mf_git_mode(c->old));
	else if (mf_git_mode(c->old) != mf_git_mode(c->new))
		ob_printf(o, "old mode %06o\nnew mode %06o\n", mf_git_mode(c->old), mf_git_mode(c->new));
	if (c->kind == CHG_RENAME) {
		ob_put(o, "similarity index 100%\n", 22);
		named(o, "rename from ", "", c->old->path, "\n");
		named(o, "rename to ", "", c->new->path, "\n");
	}
}

/* The full "index A..B" line git apply requires for binary patches, then the literals. */
static void binary_patch(struct outbuf *o, const struct change *c, const struct dg_blob *old,
			 const struct dg_blob *new)
{
	static const char zero[] = "0000000000000000000000000000000000000000";
	char a[41], b[41];

	git_blob_id(old->p, old->len, a);
	git_blob_id(new->p, new->len, b);
	ob_printf(o, "index %s..%s", c->kind == CHG_ADD ? zero : a, c->kind == CHG_DEL ? zero : b);
	if (c->kind == CHG_MOD && mf_git_mode(c->old) == mf_git_mode(c->new))
		ob_printf(o, " %06o", mf_git_mode(c->new));
	ob_put(o, "\n", 1);
	gb_write(o, new->p, new->len, old->p, old->len);
}

int dg_write(struct outbuf *o, const struct change *c, const struct dg_blob *old,
	     const struct dg_blob *new, int *binary)
{
	static const struct dg_blob empty = { "", 0 };
	const char *pa = c->kind == CHG_ADD ? NULL : "a/", *pb = c->kind == CHG_DEL ? NULL : "b/";
	const char *path = c->new ? c->new->path : c->old->path;
	const char *opath = c->old ? c->old->path : path;

	*binary = DG_TEXT;
	header(o, c);
	if (c->kind == CHG_RENAME || (c->kind == CHG_MOD && !strcmp(c->old->sha, c->new->sha)))
		return o->nomem ? -ENOMEM : 0;	/* mode or name only */
	old = old ? old : &empty;
	new = new ? new : &empty;
	if (!old->len && !new->len)
		return o->nomem ? -ENOMEM : 0;	/* an empty file added or deleted */
	if ((dg_is_binary(old) || dg_is_binary(new)) && old->len <= GB_MAX && new->len <= GB_MAX) {
		*binary = DG_BINARY_PATCH;
		binary_patch(o, c, old, new);
		return o->nomem ? -ENOMEM : 0;
	}
	if (dg_is_binary(old) || dg_is_binary(new)) {
		*binary = DG_BINARY_MARKER;
		named(o, "Binary files ", pa, opath, "");
		named(o, " and ", pb, path, " differ\n");
		return o->nomem ? -ENOMEM : 0;
	}
	named(o, "--- ", pa, opath, "\n");
	named(o, "+++ ", pb, path, "\n");
	return du_hunks(o, old->p, old->len, new->p, new->len, 3);
}
