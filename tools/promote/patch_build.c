/* Baseline + workspace copy -> one git-style patch (tools/promote/patch_build.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/tree.h"
#include "tools/promote/changeset.h"
#include "tools/promote/diff_git.h"
#include "tools/promote/patch_build.h"

/* Open @rel beneath @dir_fd, never following a symlink on the way. fd or -errno. */
static int open_beneath(int dir_fd, const char *rel)
{
	const char *leaf;
	int pfd = tree_open_parent(dir_fd, rel, &leaf), fd;

	if (pfd < 0)
		return pfd;
	fd = openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(pfd);
	return fd < 0 ? -errno : fd;
}

/* Whole regular file at @fd, at most PATCH_FILE_MAX bytes. 0, -EFBIG or -errno. */
static int slurp(int fd, char **out, size_t *len)
{
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > PATCH_FILE_MAX)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			return r < 0 ? -errno : -EIO;
		}
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

struct ctx {
	int blob_fd, cur_fd;
	char *buf[2];
	struct dg_blob blob[2];
};

/* Content of one side: a link's target, or the file's bytes (side 0 from blobs, 1 from the copy). */
static int load(struct ctx *x, int side, const struct mf_entry *e)
{
	int fd, ret;

	if (!e)
		return 0;
	if (e->kind == MF_LINK) {
		x->blob[side] = (struct dg_blob){ e->target, strlen(e->target) };
		return 0;
	}
	fd = side ? open_beneath(x->cur_fd, e->path) : openat(x->blob_fd, e->sha, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return side ? fd : -errno;
	ret = slurp(fd, &x->buf[side], &x->blob[side].len);
	close(fd);
	x->blob[side].p = x->buf[side];
	return ret;
}

/* .gitattributes can name filter drivers, .gitmodules submodule URLs: worth a reviewer's eye. */
static bool git_behaviour(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, ".gitattributes") || !strcmp(base, ".gitmodules");
}

static void count(struct patch_stats *st, const struct change *c, bool binary)
{
	st->files++;
	st->added += c->kind == CHG_ADD;
	st->deleted += c->kind == CHG_DEL;
	st->modified += c->kind == CHG_MOD;
	st->renamed += c->kind == CHG_RENAME;
	st->binary += binary;
}

static int one(struct ctx *x, struct outbuf *o, const struct change *c, const struct patch_note *note,
	       struct patch_stats *st)
{
	bool need = c->kind != CHG_RENAME;
	int binary = DG_TEXT;
	const char *path = c->new ? c->new->path : c->old->path;
	int ret = 0;

	memset(x->blob, 0, sizeof(x->blob));
	if (need)
		ret = load(x, 0, c->old);
	if (need && !ret)
		ret = load(x, 1, c->new);
	if (ret == -EFBIG) {
		if (note && note->fn)
			note->fn(note->opaque, path, "left out of the patch: larger than 64 MiB");
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	ret = dg_write(o, c, c->old ? &x->blob[0] : NULL, c->new ? &x->blob[1] : NULL, &binary);
	if (git_behaviour(path) && note && note->fn)
		note->fn(note->opaque, path, "changes how git behaves on the host (attributes, submodules): review it");
	if (binary == DG_BINARY_MARKER && note && note->fn)
		note->fn(note->opaque, path, "binary, over 8 MiB: only marked in the patch, git apply will not apply it");
	count(st, c, binary != DG_TEXT);
out:
	free(x->buf[0]);
	free(x->buf[1]);
	x->buf[0] = x->buf[1] = NULL;
	return ret;
}

int patch_build(struct outbuf *o, const struct manifest *base, const char *blob_dir,
		const struct manifest *cur, const char *cur_dir, const char *prefix,
		const struct patch_note *note, struct patch_stats *st, char *err, size_t errlen)
{
	struct ctx x = { .blob_fd = open(blob_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC),
			 .cur_fd = open(cur_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) };
	struct changeset cs = { 0 };
	int ret;

	memset(st, 0, sizeof(*st));
	if (x.blob_fd < 0 || x.cur_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open %s: %s", x.blob_fd < 0 ? blob_dir : cur_dir, strerror(errno));
		goto out;
	}
	ret = changes_compute(base, cur, prefix, &cs);
	for (size_t i = 0; !ret && i < cs.n && !o->over; i++) {
		ret = one(&x, o, &cs.c[i], note, st);
		if (ret)
			snprintf(err, errlen, "%s: %s", cs.c[i].new ? cs.c[i].new->path : cs.c[i].old->path,
				 ret == -ENOENT ? "missing from the baseline's store or the copy" : strerror(-ret));
	}
	if (!ret && o->nomem)
		ret = -ENOMEM;
out:
	changes_free(&cs);
	if (x.blob_fd >= 0)
		close(x.blob_fd);
	if (x.cur_fd >= 0)
		close(x.cur_fd);
	return ret;
}
