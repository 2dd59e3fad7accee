/* One OCI layer applied to the staging tree (oci_layer.h). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "common/sha256.h"
#include "images/oci_layer.h"
#include "images/oci_path.h"

const struct oci_limits oci_limits_default = {
	.max_bytes = 16ULL << 30,
	.max_file = 8ULL << 30,
	.max_entries = 2000000,
	.max_ratio = 200,
	.ratio_floor = 64ULL << 20,
};

/* The decompressed stream: libarchive's raw reader with gzip/zstd filters
 * underneath, libarchive's tar reader on top; every byte between them is
 * hashed and counted here. */
struct stream {
	struct archive *outer;
	struct sha256_ctx sha;
	struct oci_stage *s;
	const struct oci_limits *lim;
	uint64_t out, total;	/* this layer's bytes; before it, all layers' */
	bool counted;		/* pass 1 counts; pass 2 reads the same bytes again */
	int ret;		/* why the stream stopped: -E2BIG (a limit), -EIO */
	char why[160];
	char buf[65536];
};

static la_ssize_t stream_read(struct archive *a, void *ctx, const void **buf)
{
	struct stream *st = ctx;
	la_ssize_t n = archive_read_data(st->outer, st->buf, sizeof(st->buf));
	int64_t in;

	if (n < 0) {
		snprintf(st->why, sizeof(st->why), "%s", archive_error_string(st->outer));
		st->ret = -EIO;
		if (a)
			archive_set_error(a, EIO, "%s", st->why);
		return -1;
	}
	st->out += (uint64_t)n;
	if (st->counted) {
		sha256_update(&st->sha, (size_t)n, (const uint8_t *)st->buf);
		in = archive_filter_bytes(st->outer, -1);
		if (st->total + st->out > st->lim->max_bytes)
			snprintf(st->why, sizeof(st->why), "the layers unpack to over %llu bytes",
				 (unsigned long long)st->lim->max_bytes);
		else if (st->out > st->lim->ratio_floor && in > 0 &&
			 st->out / (uint64_t)in > st->lim->max_ratio)
			snprintf(st->why, sizeof(st->why),
				 "expands over %llu times (a decompression bomb?)",
				 (unsigned long long)st->lim->max_ratio);
		if (st->why[0]) {
			st->ret = -E2BIG;
			if (a)
				archive_set_error(a, E2BIG, "%s", st->why);
			return -1;
		}
	}
	*buf = st->buf;
	return n;
}

static int open_stream(struct stream *st, struct archive **inner, int fd)
{
	if (lseek(fd, 0, SEEK_SET))
		return -errno;
	st->outer = archive_read_new();
	*inner = archive_read_new();
	if (!st->outer || !*inner)
		return -ENOMEM;
	/* Only what layers use: plain, gzip, zstd; tar (ustar, pax, GNU). */
	archive_read_support_filter_gzip(st->outer);
	archive_read_support_filter_zstd(st->outer);
	archive_read_support_format_raw(st->outer);
	archive_read_support_format_tar(*inner);
	archive_read_support_format_empty(*inner);
	sha256_init(&st->sha);
	st->out = 0;
	if (archive_read_open_fd(st->outer, fd, 65536) != ARCHIVE_OK) {
		snprintf(st->why, sizeof(st->why), "%s", archive_error_string(st->outer));
		return -EINVAL;
	}
	struct archive_entry *raw;

	if (archive_read_next_header(st->outer, &raw) != ARCHIVE_OK) {
		snprintf(st->why, sizeof(st->why), "no data");
		return -EINVAL;
	}
	if (archive_read_open(*inner, st, NULL, stream_read, NULL) != ARCHIVE_OK) {
		snprintf(st->why, sizeof(st->why), "not a tar: %s", archive_error_string(*inner));
		return -EINVAL;
	}
	return 0;
}

static void close_stream(struct stream *st, struct archive *inner)
{
	if (inner)
		archive_read_free(inner);
	if (st->outer)
		archive_read_free(st->outer);
	st->outer = NULL;
}

/* Everything a layer entry must satisfy before either pass acts on it. */
struct item {
	char path[OCI_PATH_MAX];
	char link[OCI_PATH_MAX];	/* hard link target, clean */
	enum oci_path_kind kind;
	mode_t type, mode;
	uint32_t uid, gid;
	int64_t size;
	const char *why;
};

static bool setid_ok(const struct item *it)
{
	mode_t id = it->mode & (S_ISUID | S_ISGID);

	if (it->type == S_IFDIR)
		return !(it->mode & S_ISUID);
	if (!id)
		return true;
	return it->type == S_IFREG && it->uid == 0 && !(it->mode & (S_IWGRP | S_IWOTH));
}

static int check_entry(struct archive_entry *e, struct item *it, const struct oci_limits *lim)
{
	const char *name = archive_entry_pathname(e), *hl = archive_entry_hardlink(e);
	const char *sym = archive_entry_symlink(e);

	memset(it, 0, sizeof(*it));
	it->why = "";
	if (!name)
		return it->why = "entry without a name", -EINVAL;
	if (oci_path_classify(name, it->path, sizeof(it->path), &it->kind, &it->why))
		return -EINVAL;
	it->type = archive_entry_filetype(e);
	it->mode = archive_entry_perm(e) & 07777;
	it->uid = (uint32_t)archive_entry_uid(e);
	it->gid = (uint32_t)archive_entry_gid(e);
	it->size = archive_entry_size(e);
	if (archive_entry_uid(e) < 0 || archive_entry_uid(e) > 0xfffffffe ||
	    archive_entry_gid(e) < 0 || archive_entry_gid(e) > 0xfffffffe)
		return it->why = "owner out of range", -EINVAL;
	if (hl) {
		if (oci_path_clean(hl, it->link, sizeof(it->link), &it->why) || !it->link[0])
			return it->why = *it->why ? it->why : "hard link to the root", -EINVAL;
		it->type = S_IFREG;
	}
	if (it->kind != OCI_PATH_ENTRY && it->kind != OCI_PATH_ROOT)
		return 0;
	switch (it->type) {
	case S_IFREG: case S_IFDIR: case S_IFIFO:
		break;
	case S_IFLNK:
		if (!sym || !*sym || strlen(sym) >= OCI_PATH_MAX)
			return it->why = "symlink without a target or with one too long", -EINVAL;
		break;
	case S_IFCHR: case S_IFBLK:
		return it->why = "device node (the guest's /dev is devtmpfs)", -EINVAL;
	default:
		return it->why = "socket or unknown entry type", -EINVAL;
	}
	if (it->kind == OCI_PATH_ROOT && it->type != S_IFDIR)
		return it->why = "the root is not a directory", -EINVAL;
	if (!setid_ok(it))
		return it->why = "setuid/setgid outside the policy (root-owned regular files, "
				 "not group/other-writable)", -EINVAL;
	if (it->size < 0 || (uint64_t)it->size > lim->max_file)
		return it->why = "entry over the size limit", -EFBIG;
	return 0;
}

static int fail(char *err, size_t errlen, int ret, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s%s%s", path ? path : "", path ? ": " : "", msg);
	return ret;
}

static const char *why_errno(int ret)
{
	return ret == -ELOOP ? "a parent is a symlink or not a directory (links are never followed)"
			     : strerror(-ret);
}

/* Pass 1: check every entry, hash and count the stream, apply whiteouts. */
static int pass_whiteouts(struct oci_stage *s, struct archive *in, const struct oci_limits *lim,
			  char *err, size_t errlen)
{
	struct archive_entry *e;
	struct item it;
	int r, ret;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		if (++s->entries > lim->max_entries)
			return fail(err, errlen, -E2BIG, NULL, "over %llu entries",
				    (unsigned long long)lim->max_entries);
		if ((ret = check_entry(e, &it, lim)))
			return fail(err, errlen, ret, archive_entry_pathname(e), "%s", it.why);
		if (it.kind == OCI_PATH_WHITEOUT)
			ret = oci_stage_remove(s, it.path);
		else if (it.kind == OCI_PATH_OPAQUE)
			ret = oci_stage_empty_dir(s, it.path);
		if (ret)
			return fail(err, errlen, ret, it.path, "whiteout: %s", why_errno(ret));
	}
	return r == ARCHIVE_EOF ? 0 : fail(err, errlen, -EINVAL, NULL, "%s",
					   archive_error_string(in));
}

static int write_data(struct archive *in, int fd, int64_t size)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	int r;

	while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK) {
		if (off < 0 || (uint64_t)off + len > (uint64_t)size)
			return -EFBIG;
		for (size_t done = 0; done < len;) {
			ssize_t w = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);

			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			done += (size_t)w;
		}
	}
	if (r != ARCHIVE_EOF)
		return -EIO;
	return ftruncate(fd, size) ? -errno : 0;
}

/* Make way for a new entry at @base in @dfd: an existing directory stays
 * for a directory (merged), anything else goes. */
static int make_way(int dfd, const char *base, mode_t type)
{
	struct stat st;

	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (type == S_IFDIR && S_ISDIR(st.st_mode))
		return 1;
	return rm_tree_at(dfd, base);
}

static int link_to(struct oci_stage *s, const struct item *it, int dfd, const char *base)
{
	const char *tbase;
	struct stat st;
	int tfd = oci_stage_parent(s, it->link, false, &tbase), ret = 0;

	if (tfd < 0)
		return tfd;
	if (fstatat(tfd, tbase, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		ret = -ENOENT;
	else if (linkat(tfd, tbase, dfd, base, 0))
		ret = -errno;
	close(tfd);
	return ret;
}

static int create(struct oci_stage *s, struct archive *in, struct archive_entry *e,
		  const struct item *it, int dfd, const char *base)
{
	int fd, ret = make_way(dfd, base, it->type);

	if (ret)
		return ret > 0 ? 0 : ret;
	if (it->link[0])
		return link_to(s, it, dfd, base);
	switch (it->type) {
	case S_IFDIR:
		return mkdirat(dfd, base, 0700) ? -errno : 0;
	case S_IFLNK:
		return symlinkat(archive_entry_symlink(e), dfd, base) ? -errno : 0;
	case S_IFIFO:
		return mkfifoat(dfd, base, 0600) ? -errno : 0;
	default:
		fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		ret = write_data(in, fd, it->size);
		close(fd);
		return ret;
	}
}

static int apply_entry(struct oci_stage *s, struct archive *in, struct archive_entry *e,
		       const struct item *it)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
	const char *base;
	int dfd, ret;

	if (it->kind == OCI_PATH_ROOT)
		return oci_stage_note(s, "", it->uid, it->gid, S_IFDIR | it->mode);
	if ((dfd = oci_stage_parent(s, it->path, true, &base)) < 0)
		return dfd;
	ret = create(s, in, e, it, dfd, base);
	if (!ret && it->type != S_IFDIR) {
		ts[1].tv_sec = archive_entry_mtime(e);
		utimensat(dfd, base, ts, AT_SYMLINK_NOFOLLOW);
	}
	close(dfd);
	return ret ? ret : oci_stage_note(s, it->path, it->uid, it->gid, it->type | it->mode);
}

static int pass_entries(struct oci_stage *s, struct archive *in, const struct oci_limits *lim,
			char *err, size_t errlen)
{
	struct archive_entry *e;
	struct item it;
	int r, ret;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		if ((ret = check_entry(e, &it, lim)))
			return fail(err, errlen, ret, archive_entry_pathname(e), "%s", it.why);
		if (it.kind == OCI_PATH_WHITEOUT || it.kind == OCI_PATH_OPAQUE)
			continue;
		if ((ret = apply_entry(s, in, e, &it)))
			return fail(err, errlen, ret, it.path, "%s",
				    ret == -ENOENT && it.link[0] ? "hard link to no regular file of the image"
								 : why_errno(ret));
	}
	return r == ARCHIVE_EOF ? 0 : fail(err, errlen, -EINVAL, NULL, "%s", archive_error_string(in));
}

/* The rest of the decompressed stream after the tar's end (padding): the
 * diff_id covers it too. */
static int drain(struct stream *st)
{
	const void *b;
	la_ssize_t n;

	while ((n = stream_read(NULL, st, &b)) > 0)
		;
	return n < 0 ? -EINVAL : 0;
}

int oci_layer_apply(struct oci_stage *s, int fd, const char *diff_id,
		    const struct oci_limits *lim, char *err, size_t errlen)
{
	struct stream *st = calloc(1, sizeof(*st));
	struct archive *in = NULL;
	char hex[SHA256_HEX];
	int ret = -ENOMEM;

	err[0] = 0;
	if (!st)
		return ret;
	st->s = s;
	st->lim = lim;
	st->total = s->stream_bytes;
	st->counted = true;
	if ((ret = open_stream(st, &in, fd)) || (ret = pass_whiteouts(s, in, lim, err, errlen)) ||
	    (ret = drain(st)))
		goto out;
	s->stream_bytes += st->out;
	sha256_hex(&st->sha, hex);
	if (diff_id && strcmp(hex, diff_id)) {
		ret = fail(err, errlen, -EINVAL, NULL, "uncompressed digest sha256:%.12s… is not the "
			   "config's diff_id sha256:%.12s…", hex, diff_id);
		goto out;
	}
	close_stream(st, in);
	in = NULL;
	st->counted = false;
	if (!(ret = open_stream(st, &in, fd)))
		ret = pass_entries(s, in, lim, err, errlen);
out:
	if (ret && st->why[0])
		snprintf(err, errlen, "%s", st->why);
	if (ret && st->ret)
		ret = st->ret;
	else if (ret && !err[0])
		snprintf(err, errlen, "%s", strerror(-ret));
	close_stream(st, in);
	free(st);
	return ret;
}
