/* Workspace vs. baseline as one patch (tools/promote/workspace_diff.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "guest/agent/tree.h"
#include "tools/sandbox/baseline.h"
#include "tools/sandbox/cp.h"
#include "tools/sandbox/manifest.h"
#include "tools/sandbox/path_sanitize.h"
#include "tools/sandbox/sandbox.h"
#include "tools/promote/workspace_diff.h"

static void note(void *opaque, const char *path, const char *what)
{
	refusals_add(opaque, path, what);
}

/* mkdir -p of @rel's parents beneath @dfd (our own fresh directory), then open the last one. */
static int make_parents(int dfd, const char *rel, const char **leaf)
{
	const char *slash = strrchr(rel, '/');
	char part[8192];

	if (slash) {
		snprintf(part, sizeof(part), "%.*s", (int)(slash - rel), rel);
		mkdir_p_at(dfd, part, 0700);	/* a failure shows in tree_open_parent */
	}
	return tree_open_parent(dfd, rel, leaf);
}

/* The first entry whose path is not below @key in strcmp order. */
static size_t lower_bound(const struct manifest *m, const char *key)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(m->e[mid].path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool bsearch_fetched(const struct manifest *cur, size_t n, const char *path)
{
	struct manifest head = { .e = cur->e, .n = n };

	return mf_find(&head, path) != NULL;
}

/*
 * Left-out entries were not compared: take their baseline entries (and
 * those below a left-out directory) as they are, so they show no change.
 */
static int keep_unfetched(const struct manifest *base, struct manifest *cur, const char *prefix,
			  const struct refusals *r)
{
	size_t fetched = cur->n;
	char full[8192];

	for (size_t i = 0; i < r->n; i++) {
		size_t n;

		if (!r->r[i].path[0])
			continue;	/* a message, not an entry */
		snprintf(full, sizeof(full), "%s%s%s", prefix, prefix[0] && r->r[i].path[0] ? "/" : "",
			 r->r[i].path);
		n = strlen(full);
		/* Sorted: the entry itself, then everything below it, come first at or after @full. */
		for (size_t j = lower_bound(base, full); j < base->n; j++) {
			const struct mf_entry *e = &base->e[j];

			if (strncmp(e->path, full, n))
				break;
			if (e->path[n] && e->path[n] != '/')
				continue;
			/* Only the fetched part is sorted and searched; overlaps are dropped below. */
			if (!bsearch_fetched(cur, fetched, e->path) && mf_add(cur, e))
				return -ENOMEM;
		}
	}
	mf_sort(cur);
	mf_dedupe(cur);
	return 0;
}

/* A --copy of one file: its entry is the root (""); the patch names it by its guest name. */
static int name_file_root(struct manifest *m, const char *guest_root)
{
	const char *base = strrchr(guest_root, '/');
	char *n;

	if (m->n != 1 || m->e[0].path[0] || m->e[0].kind != MF_FILE)
		return 0;
	n = strdup(base ? base + 1 : guest_root);
	if (!n)
		return -ENOMEM;
	free(m->e[0].path);
	m->e[0].path = n;
	return 0;
}

static int compare(const char *name, struct wsdiff *w, const struct manifest *base, const char *rel,
		   const char *tmp)
{
	struct mf_scan_opts so = { .own_tree = true };
	struct patch_note pn = { note, &w->notes };
	struct manifest cur = { 0 };
	char blobs[PATH_MAX], root[PATH_MAX + 8];
	int ret;

	snprintf(root, sizeof(root), "%s/t", tmp);
	ret = mf_scan(&cur, root, &so);
	if (ret) {
		char e[sizeof(so.err) * 4];

		ps_escape(so.err, e, sizeof(e));	/* names a guest file */
		snprintf(w->err, sizeof(w->err), "scanning the fetched copy: %s", e);
		goto out;
	}
	ret = name_file_root(&cur, base->guest_root);
	if (!ret)
		ret = keep_unfetched(base, &cur, rel, &w->refused);
	if (!ret)
		ret = baseline_blob_dir(name, blobs, sizeof(blobs));
	if (!ret)
		ret = patch_build(&w->patch, base, blobs, &cur, root, rel, &pn, &w->st, w->err, sizeof(w->err));
out:
	mf_free(&cur);
	return ret;
}

static int fetch(const char *name, struct wsdiff *w, const char *gpath, const char *rel, const char *tmp)
{
	struct fetch_opts fo = { .max_file = PATCH_FILE_MAX, .max_total = w->max_total,
				 .max_entries = CP_MAX_ENTRIES, .refused = &w->refused };
	const char *leaf = "t";
	int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC), pfd, ret;
	char sub[8192];

	/* A subtree lands at the same relative place it has in the baseline. */
	snprintf(sub, sizeof(sub), "t%s%s", rel[0] ? "/" : "", rel);
	pfd = dfd >= 0 ? make_parents(dfd, sub, &leaf) : -errno;
	if (pfd < 0) {
		ret = pfd;
		snprintf(w->err, sizeof(w->err), "cannot prepare %s: %s", tmp, strerror(-ret));
	} else {
		ret = fetch_tree(name, gpath, pfd, leaf, &fo);
		if (ret)
			snprintf(w->err, sizeof(w->err), "%s", fo.err);
	}
	if (pfd >= 0)
		close(pfd);
	if (dfd >= 0)
		close(dfd);
	return ret;
}

/* Load the baseline and pick the --copy tree (w->gpath's, or the only one). Index or -errno. */
static int locate(const char *name, struct wsdiff *w, struct manifest **ms, int *n, const char **rel,
		  char *gpath, size_t cap)
{
	int i;

	*n = baseline_load(name, ms, w->err, sizeof(w->err));
	if (*n < 0)
		return *n;
	if (w->gpath) {
		snprintf(gpath, cap, "%s", w->gpath);
		baseline_clean_path(gpath);
	}
	i = baseline_pick(*ms, *n, w->gpath ? gpath : NULL, rel, w->err, sizeof(w->err));
	if (i < 0) {
		baseline_free(*ms, *n);
		*ms = NULL;
		return -ENOENT;
	}
	if (name_file_root(&(*ms)[i], (*ms)[i].guest_root)) {
		baseline_free(*ms, *n);
		*ms = NULL;
		return -ENOMEM;
	}
	snprintf(w->guest_root, sizeof(w->guest_root), "%s", (*ms)[i].guest_root);
	snprintf(w->host_src, sizeof(w->host_src), "%s", (*ms)[i].host_src);
	if (!w->gpath)
		snprintf(gpath, cap, "%s", (*ms)[i].guest_root);
	return i;
}

int wsdiff_locate(const char *name, struct wsdiff *w)
{
	struct manifest *ms = NULL;
	char gpath[4096];
	const char *rel = "";
	int n, i = locate(name, w, &ms, &n, &rel, gpath, sizeof(gpath));

	if (i >= 0)
		baseline_free(ms, n);
	return i < 0 ? i : 0;
}

int wsdiff_run(const char *name, struct wsdiff *w)
{
	struct manifest *ms = NULL;
	char tmp[PATH_MAX], gpath[4096];
	const char *rel = "";
	int n, i, ret;

	w->patch.max = w->max_output ? w->max_output : WSDIFF_MAX_OUTPUT;
	w->max_total = w->max_total ? w->max_total : WSDIFF_MAX_TOTAL;
	i = locate(name, w, &ms, &n, &rel, gpath, sizeof(gpath));
	if (i < 0)
		return i;
	ret = sb_path(name, "tmp-diff-XXXXXX", tmp, sizeof(tmp));
	if (!ret && !mkdtemp(tmp))
		ret = -errno;
	if (ret) {
		snprintf(w->err, sizeof(w->err), "cannot create a private directory: %s", strerror(-ret));
		baseline_free(ms, n);
		return ret;
	}
	ret = fetch(name, w, gpath, rel, tmp);
	if (!ret)
		ret = compare(name, w, &ms[i], rel, tmp);
	rm_tree(tmp);
	baseline_free(ms, n);
	return ret;
}

void wsdiff_free(struct wsdiff *w)
{
	ob_free(&w->patch);
	refusals_free(&w->refused);
	refusals_free(&w->notes);
}
