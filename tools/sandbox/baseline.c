/* The --copy baseline of a sandbox: manifests and blobs in its state directory (tools/sandbox/baseline.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "guest/agent/proto.h"
#include "tools/sandbox/baseline.h"
#include "common/cli_util.h"
#include "common/fs_util.h"
#include "tools/sandbox/cp.h"
#include "tools/sandbox/fetch.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sb_seal.h"

int baseline_blob_dir(const char *name, char *out, size_t cap)
{
	return sb_path(name, "baseline/blobs", out, cap);
}

static int make_dirs(const char *name, char *blobs, size_t cap)
{
	char dir[PATH_MAX];

	if (sb_path(name, "baseline", dir, sizeof(dir)) || baseline_blob_dir(name, blobs, cap))
		return -ENAMETOOLONG;
	if ((mkdir(dir, 0700) && errno != EEXIST) || (mkdir(blobs, 0700) && errno != EEXIST))
		return -errno;
	return 0;
}

/* The next free N of baseline/N.json. */
static int next_index(const char *name)
{
	char f[32], p[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < BASELINE_MAX; i++) {
		snprintf(f, sizeof(f), "baseline/%d.json", i);
		if (sb_path(name, f, p, sizeof(p)) || stat(p, &st))
			break;
	}
	return i;
}

/* "/a//b/" -> "/a/b": the guest root as a clean absolute path. */
void baseline_clean_path(char *p)
{
	char *w = p;

	for (char *r = p; *r; r++)
		if (!(*r == '/' && (r[1] == '/' || (r[1] == 0 && r != p))))
			*w++ = *r;
	*w = 0;
}

int baseline_copy_in(const char *name, const char *host_src, const char *guest_dst)
{
	struct mf_scan_opts so = { 0 };
	struct manifest m = { 0 };
	char blobs[PATH_MAX], where[4096 + 256], f[32], p[PATH_MAX], real[PATH_MAX];
	int idx = next_index(name), ret;

	if (idx >= BASELINE_MAX) {
		cli_err("create", "at most %d --copy trees", BASELINE_MAX);
		return -E2BIG;
	}
	ret = make_dirs(name, blobs, sizeof(blobs));
	if (ret) {
		cli_err("create", "cannot create the baseline store of %s: %s", name, strerror(-ret));
		return ret;
	}
	/* Record first: the baseline is what was read, kept before anything reaches the guest. */
	so.blob_dir = blobs;
	ret = mf_scan(&m, host_src, &so);
	if (ret) {
		cli_err("create", "--copy %s: %s", host_src, so.err);
		goto out;
	}
	ret = cp_put_at(name, host_src, guest_dst, where, sizeof(where));
	if (ret)
		goto out;
	if (!where[0] || where[0] != '/') {
		cli_err("create", "--copy %s: the guest agent did not say where the copy landed", host_src);
		ret = -EPROTO;
		goto out;
	}
	baseline_clean_path(where);
	m.guest_root = strdup(where);
	m.host_src = strdup(realpath(host_src, real) ? real : host_src);
	snprintf(f, sizeof(f), "baseline/%d.json", idx);
	ret = sb_path(name, f, p, sizeof(p));
	if (!ret)
		ret = mf_save(&m, p);
	if (!ret)
		ret = sb_seal(name, f);	/* a VMM may write here, not forge this */
	if (ret)
		cli_err("create", "cannot save the baseline manifest of %s: %s", host_src, strerror(-ret));
out:
	mf_free(&m);
	return ret;
}

int baseline_remove(const char *name)
{
	char dir[PATH_MAX], p[PATH_MAX + 300];
	struct dirent *de;
	int ret = 0;
	DIR *d;

	if (sb_path(name, NULL, dir, sizeof(dir)))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, "baseline") && strncmp(de->d_name, "tmp-diff-", 9))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (rm_tree(p))
			ret = -EIO;
	}
	closedir(d);
	return ret;
}

int baseline_load(const char *name, struct manifest **out, char *err, size_t errlen)
{
	int n = next_index(name), ret = 0;
	struct manifest *ms = calloc((size_t)n + 1, sizeof(*ms));
	char f[32], p[PATH_MAX];

	*out = NULL;
	if (!ms)
		return -ENOMEM;
	for (int i = 0; i < n && !ret; i++) {
		char *text = NULL;

		snprintf(f, sizeof(f), "baseline/%d.json", i);
		ret = sb_path(name, f, p, sizeof(p));
		if (!ret)
			ret = sb_seal_read(name, f, SB_SEAL_BIG, &text, err, errlen);
		if (!ret)
			ret = mf_parse(&ms[i], text, p, err, errlen);
		free(text);
		if (ret)
			baseline_free(ms, i);
	}
	if (ret)
		return ret;
	*out = ms;
	return n;
}

void baseline_free(struct manifest *ms, int n)
{
	for (int i = 0; ms && i < n; i++)
		mf_free(&ms[i]);
	free(ms);
}

int baseline_pick(const struct manifest *ms, int n, const char *gpath, const char **rel,
		  char *err, size_t errlen)
{
	if (n == 0) {
		snprintf(err, errlen, "no baseline: the sandbox was created without --copy HOST:GUEST");
		return -1;
	}
	if (!gpath) {
		if (n > 1) {
			snprintf(err, errlen, "%d trees were copied in with --copy: name one (GUEST_PATH)", n);
			return -1;
		}
		*rel = "";
		return 0;
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(ms[i].guest_root);
		const char *r = gpath + len;

		if (strncmp(gpath, ms[i].guest_root, len) || (*r && *r != '/' && len > 1))
			continue;
		while (*r == '/')
			r++;
		if (!ap_path_safe(r)) {
			snprintf(err, errlen, "%s: name a path without '.' or '..' components", gpath);
			return -1;
		}
		*rel = r;
		return i;
	}
	snprintf(err, errlen, "%s is not inside a tree copied in with --copy (no baseline to compare with)",
		 gpath);
	return -1;
}
