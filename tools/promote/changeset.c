/* Baseline vs. workspace, in git's terms (tools/promote/changeset.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/promote/changeset.h"
#include "tools/sandbox/path_sanitize.h"

static bool counts(const struct mf_entry *e, const char *prefix)
{
	size_t n = strlen(prefix);

	if (e->kind == MF_DIR || ps_is_git_meta(e->path))
		return false;
	return !n || (!strncmp(e->path, prefix, n) && (e->path[n] == 0 || e->path[n] == '/'));
}

static int push(struct changeset *cs, size_t *cap, int kind, const struct mf_entry *o,
		const struct mf_entry *n)
{
	if (cs->n == *cap) {
		struct change *c = realloc(cs->c, (*cap = *cap ? *cap * 2 : 32) * sizeof(*c));

		if (!c)
			return -ENOMEM;
		cs->c = c;
	}
	cs->c[cs->n++] = (struct change){ kind, o, n };
	return 0;
}

static const char *key(const struct change *c)
{
	return c->new ? c->new->path : c->old->path;
}

static int by_key(const void *a, const void *b)
{
	int r = strcmp(key(a), key(b));

	/* A deletion before an addition at the same path (file replaced by a link). */
	return r ? r : ((const struct change *)a)->kind == CHG_DEL ? -1 : 1;
}

/* Pair each deletion with an identical addition (first come, first paired). */
static void find_renames(struct changeset *cs)
{
	size_t w = 0;

	for (size_t i = 0; i < cs->n; i++) {
		struct change *d = &cs->c[i];

		if (d->kind != CHG_DEL)
			continue;
		for (size_t j = 0; j < cs->n; j++) {
			struct change *a = &cs->c[j];

			if (a->kind == CHG_ADD && a->new->kind == d->old->kind &&
			    mf_git_mode(a->new) == mf_git_mode(d->old) && !strcmp(a->new->sha, d->old->sha)) {
				a->kind = CHG_RENAME;
				a->old = d->old;
				d->old = NULL;	/* consumed */
				break;
			}
		}
	}
	for (size_t i = 0; i < cs->n; i++)
		if (cs->c[i].kind != CHG_DEL || cs->c[i].old)
			cs->c[w++] = cs->c[i];
	cs->n = w;
}

static bool same(const struct mf_entry *a, const struct mf_entry *b)
{
	return a->kind == b->kind && mf_git_mode(a) == mf_git_mode(b) && !strcmp(a->sha, b->sha);
}

int changes_compute(const struct manifest *base, const struct manifest *cur, const char *prefix,
		    struct changeset *out)
{
	size_t i = 0, j = 0, cap = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	while (!ret && (i < base->n || j < cur->n)) {
		const struct mf_entry *b = i < base->n ? &base->e[i] : NULL;
		const struct mf_entry *c = j < cur->n ? &cur->e[j] : NULL;
		int cmp = !b ? 1 : !c ? -1 : strcmp(b->path, c->path);

		if (cmp < 0) {
			if (counts(b, prefix))
				ret = push(out, &cap, CHG_DEL, b, NULL);
			i++;
		} else if (cmp > 0) {
			if (counts(c, prefix))
				ret = push(out, &cap, CHG_ADD, NULL, c);
			j++;
		} else {
			if (counts(b, prefix) && counts(c, prefix) && !same(b, c)) {
				if (b->kind == c->kind)
					ret = push(out, &cap, CHG_MOD, b, c);
				else if (!(ret = push(out, &cap, CHG_DEL, b, NULL)))
					ret = push(out, &cap, CHG_ADD, NULL, c);
			} else if (counts(b, prefix) != counts(c, prefix)) {
				/* A directory replaced by a file or link (or the reverse). */
				ret = counts(b, prefix) ? push(out, &cap, CHG_DEL, b, NULL)
							: push(out, &cap, CHG_ADD, NULL, c);
			}
			i++, j++;
		}
	}
	if (ret) {
		changes_free(out);
		return ret;
	}
	find_renames(out);
	if (out->n)
		qsort(out->c, out->n, sizeof(*out->c), by_key);
	return 0;
}

void changes_free(struct changeset *cs)
{
	free(cs->c);
	memset(cs, 0, sizeof(*cs));
}
