/* A snapshot directory pointed at another copy of its base image (snapshots/snap_rebase.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/snap_buf.h"
#include "images/qcow2.h"
#include "snapshots/snap_rebase.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/state_file.h"

/* The state of @st again, with @in's file list and base in place of its own. */
static int rewrite(const struct snap_state *st, const struct snap_dir_info *in, struct snap_w *w)
{
	snap_state_begin(w, &st->h);
	for (uint32_t i = 0; i < st->nr_sections; i++) {
		const struct snap_section *s = &st->sec[i];

		if (s->type == SNAP_SEC_FILE)
			snap_files_section(w, in->f, in->nfiles, in->fver >= 3 ? in->salt : NULL);
		else if (s->type == SNAP_SEC_BASE)
			snap_base_section(w, &in->base);
		else
			snap_state_section(w, s->type, s->instance, s->version, s->data, s->len);
	}
	return snap_state_finish(w);
}

static int write_state(const char *dir, const struct snap_w *w)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int fd, ret = 0;

	snprintf(tmp, sizeof(tmp), "%s/.%s.new", dir, SNAP_DIR_STATE);
	snprintf(dst, sizeof(dst), "%s/%s", dir, SNAP_DIR_STATE);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = file_pwrite(fd, w->p, w->len, 0);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && rename(tmp, dst))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* The bottom layer (file 1 of @in) over @path, its new size and digest into @in. */
static int relink_bottom(const char *dir, struct snap_dir_info *in, const uint8_t *k,
			 const char *path)
{
	struct snap_file *f = &in->f[1];
	char p[PATH_MAX];
	int fd, ret;

	if (strcmp(f->format, "qcow2"))
		return -EINVAL;
	snprintf(p, sizeof(p), "%s/%s", dir, f->name);
	ret = qcow2_set_backing(p, path, "raw");
	if (ret)
		return ret;
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = in->fver >= 3 ? snap_file_tag(fd, k, 1, &f->size, f->tag) :
			      snap_file_digest(fd, &f->size, &f->crc, f->sha256);
	close(fd);
	return ret;
}

int snap_state_files(const char *dir, const struct snap_dir_info *in, char *err,
		     size_t errlen)
{
	struct snap_state *st = calloc(1, sizeof(*st));
	struct snap_w w = { 0 };
	char sp[PATH_MAX], *buf = NULL;
	size_t len = 0;
	int ret = st ? 0 : -ENOMEM;

	err[0] = 0;
	snprintf(sp, sizeof(sp), "%s/%s", dir, SNAP_DIR_STATE);
	if (!ret)
		ret = file_read_regular(sp, SNAP_STATE_MAX, &buf, &len);
	if (!ret)
		ret = snap_state_parse((const uint8_t *)buf, len, st, err, errlen);
	if (!ret && (ret = rewrite(st, in, &w)) == 0)
		ret = write_state(dir, &w);
	if (ret && !err[0])
		snprintf(err, errlen, "rewriting %s: %s", sp, strerror(-ret));
	snap_w_free(&w);
	free(buf);
	free(st);
	return ret;
}

int snap_rebase(const char *dir, struct snap_dir_info *in, const uint8_t k[SNAP_KEY_LEN],
		const char *path, const struct snap_ident *id, char *err, size_t errlen)
{
	int ret;

	if (!in->has_base || in->nfiles < 2 || strlen(path) >= sizeof(in->base.path)) {
		snprintf(err, errlen, "the template references no image its layers can be moved to");
		return -EINVAL;
	}
	ret = relink_bottom(dir, in, k, path);
	if (ret) {
		snprintf(err, errlen, "disk layer %s: cannot point it at %s: %s", in->f[1].name, path,
			 ret == -EINVAL ? "not a qcow2 layer over a raw image" : strerror(-ret));
		return ret;
	}
	snprintf(in->base.path, sizeof(in->base.path), "%s", path);
	in->base.id = *id;
	return snap_state_files(dir, in, err, errlen);
}
