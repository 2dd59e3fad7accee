/*
 * qcow2 open: header, tables and the backing chain, treating the image as
 * hostile (a guest may have written it). The backing format is never
 * probed: it comes from the "backing file format name" extension or from
 * the caller. Backing paths resolve against the image's own directory and
 * must stay inside the allowed root unless the caller trusts the chain.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/qcow2_int.h"
#include "common/io_census.h"
#include "common/log.h"

static int open_one(const char *path, bool ro, struct qcow2_chain_ctx *ctx,
		    struct qcow2 **out);

/* The header, its extensions and the backing name all live in cluster 0. */
static int read_header(struct qcow2 *q, uint64_t fsize)
{
	size_t len = fsize < 4096 ? (size_t)fsize : 4096;
	uint8_t peek[4096], *buf;
	uint32_t bits;
	int err;

	err = file_pread(q->fd, peek, len, 0);
	if (!err)
		err = qcow2_hdr_peek_cluster_bits(peek, len, q->path, &bits);
	if (err)
		return err;
	len = fsize < (1ULL << bits) ? (size_t)fsize : (size_t)1 << bits;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	err = file_pread(q->fd, buf, len, 0);
	if (!err)
		err = qcow2_hdr_parse(buf, len, fsize, q->path, &q->h);
	free(buf);
	return err;
}

static int load_l1(struct qcow2 *q)
{
	size_t bytes = (size_t)q->h.l1_size * 8;
	int err;

	q->l1 = malloc(bytes ? bytes : 8);
	if (!q->l1)
		return -ENOMEM;
	err = file_pread(q->fd, q->l1, bytes, q->h.l1_off);
	for (uint32_t i = 0; !err && i < q->h.l1_size; i++)
		q->l1[i] = be64toh(q->l1[i]);
	return err;
}

/* Default cache: enough tables to map 16 GiB, within 8..1024 tables. */
static unsigned cache_slots(const struct qcow2 *q, const struct qcow2_open_opts *o)
{
	uint64_t span = q->cs << q->l2_bits, n = (16ULL << 30) / span;

	if (o && o->l2_cache_tables)
		n = o->l2_cache_tables;
	return n < 8 ? 8 : n > 1024 ? 1024 : (unsigned)n;
}

/* A writable image: refcounts, allocator, and autoclear bits we do not
 * maintain (e.g. bitmaps) must be cleared before we change anything. */
static int prepare_write(struct qcow2 *q, uint64_t fsize)
{
	uint8_t zero[8] = { 0 };
	int err;

	if (q->h.nb_snapshots) {
		log_error("qcow2 %s: writing images with internal snapshots is not "
			  "supported", q->path);
		return -ENOTSUP;
	}
	q->next_free = (fsize + q->cs - 1) & ~(q->cs - 1);
	q->file_bound = q->next_free;
	err = qcow2_rc_load(q);
	if (err || !q->h.autoclear)
		return err;
	err = qcow2_write_at(q, zero, 8, QH_AUTOCLEAR);
	return err ? err : qcow2_sync_q(q);
}

static int setup(struct qcow2 *q, bool ro, const struct qcow2_open_opts *opts)
{
	struct stat st;
	int err;

	if (fstat(q->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		log_error("qcow2 %s: not a regular file", q->path);
		return -EINVAL;
	}
	err = read_header(q, (uint64_t)st.st_size);
	if (err)
		return err;
	q->cs = 1ULL << q->h.cluster_bits;
	q->l2_bits = q->h.cluster_bits - 3;
	q->v3 = q->h.version >= 3;
	q->file_bound = ((uint64_t)st.st_size + q->cs - 1) & ~(q->cs - 1);
	q->b.ops = &qcow2_ops;
	q->b.size = q->h.size;
	q->b.read_only = ro;
	q->b.priv = q;
	err = load_l1(q);
	if (!err)
		err = qcow2_l2_init(q, cache_slots(q, opts));
	if (!err && !ro)
		err = prepare_write(q, (uint64_t)st.st_size);
	return err;
}

static int pick_backing_fmt(struct qcow2 *q, struct qcow2_chain_ctx *ctx,
			    const char **fmt)
{
	const char *hdr = q->h.backing_fmt[0] ? q->h.backing_fmt : NULL;
	const char *given = ctx->depth == 1 && ctx->opts ? ctx->opts->backing_fmt : NULL;

	if (hdr && given && strcmp(hdr, given)) {
		log_error("qcow2 %s: backing format '%s' in the image differs from "
			  "the requested '%s'", q->path, hdr, given);
		return -EINVAL;
	}
	*fmt = hdr ? hdr : given;
	if (!*fmt) {
		log_error("qcow2 %s: backing format extension missing; refusing to "
			  "probe the format of '%s'", q->path, q->h.backing);
		return -EINVAL;
	}
	if (strcmp(*fmt, "raw") && strcmp(*fmt, "qcow2")) {
		log_error("qcow2 %s: backing format '%s' not supported", q->path, *fmt);
		return -ENOTSUP;
	}
	return 0;
}

static bool under_root(const char *root, const char *p)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return true;
	return !strncmp(root, p, n) && p[n] == '/';
}

/* Backing names are relative to the directory of the image naming them. */
static int resolve_backing(struct qcow2 *q, struct qcow2_chain_ctx *ctx, char **out)
{
	char *dir = strdup(q->path), *joined = NULL;
	int err = 0;

	if (!dir)
		return -ENOMEM;
	if (asprintf(&joined, "%s/%s", q->h.backing[0] == '/' ? "" : dirname(dir),
		     q->h.backing) < 0) {
		free(dir);
		return -ENOMEM;
	}
	*out = realpath(joined, NULL);
	if (!*out) {
		err = -errno;
		log_error("qcow2 %s: backing file '%s': %s", q->path, q->h.backing,
			  strerror(errno));
	} else if (ctx->root && !under_root(ctx->root, *out) &&
		   !(ctx->file2 && !strcmp(ctx->file2, *out))) {
		log_error("qcow2 %s: backing file '%s' resolves outside the allowed "
			  "directory %s", q->path, *out, ctx->root);
		free(*out);
		*out = NULL;
		err = -EACCES;
	}
	free(joined);
	free(dir);
	return err;
}

static int open_backing(struct qcow2 *q, struct qcow2_chain_ctx *ctx)
{
	const char *fmt;
	struct qcow2 *bq;
	int err;

	if (!q->h.backing[0])
		return 0;
	err = pick_backing_fmt(q, ctx, &fmt);
	if (!err)
		err = resolve_backing(q, ctx, &q->backing_path);
	if (err)
		return err;
	snprintf(q->backing_fmt, sizeof(q->backing_fmt), "%s", fmt);
	if (!strcmp(fmt, "raw")) {
		struct stat st;

		/* blk_open_raw would block on a FIFO before checking the type. */
		if (stat(q->backing_path, &st) || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))) {
			log_error("qcow2 %s: backing '%s' is not a file", q->path,
				  q->backing_path);
			return -EINVAL;
		}
		err = blk_open_raw(q->backing_path, true, &q->backing);
		if (err)
			log_error("qcow2 %s: opening raw backing '%s': %s", q->path,
				  q->backing_path, strerror(-err));
		return err;
	}
	err = open_one(q->backing_path, true, ctx, &bq);
	if (!err)
		q->backing = &bq->b;
	return err;
}

static int note_in_chain(struct qcow2 *q, struct qcow2_chain_ctx *ctx)
{
	struct stat st;

	if (fstat(q->fd, &st))
		return -errno;
	for (unsigned i = 0; i < ctx->depth; i++) {
		if (ctx->dev[i] == st.st_dev && ctx->ino[i] == st.st_ino) {
			log_error("qcow2 %s: backing file loop", q->path);
			return -ELOOP;
		}
	}
	if (ctx->depth >= QCOW2_MAX_CHAIN) {
		log_error("qcow2 %s: backing chain longer than %d images", q->path,
			  QCOW2_MAX_CHAIN);
		return -ELOOP;
	}
	ctx->dev[ctx->depth] = st.st_dev;
	ctx->ino[ctx->depth++] = st.st_ino;
	return 0;
}

/* One writer or many readers: two VMs writing one overlay would each
 * append clusters at the same offsets and corrupt it. */
static int lock_image(struct qcow2 *q, bool ro)
{
	if (!flock(q->fd, (ro ? LOCK_SH : LOCK_EX) | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	log_error("qcow2 %s: image is in use by another process", q->path);
	return -EBUSY;
}

static int open_one(const char *path, bool ro, struct qcow2_chain_ctx *ctx,
		    struct qcow2 **out)
{
	struct qcow2 *q = calloc(1, sizeof(*q));
	int err;

	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->busy_cv, NULL);
	/* O_NONBLOCK: a FIFO planted as a backing file must not hang us;
	 * setup() then refuses anything but a regular file. */
	q->fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK);
	if (q->fd < 0) {
		err = -errno;
		log_error("qcow2 %s: %s", path, strerror(errno));
		goto fail;
	}
	io_census_disk_fd(q->fd, true);
	q->path = realpath(path, NULL);
	err = q->path ? 0 : -errno;
	if (!err)
		err = note_in_chain(q, ctx);
	if (!err)
		err = lock_image(q, ro);
	if (ctx->depth == 1 && ctx->opts)	/* only the top image is written */
		q->trace = ctx->opts->trace;
	if (!err)
		err = setup(q, ro, ctx->opts);
	if (!err)
		err = open_backing(q, ctx);
	if (err)
		goto fail;
	*out = q;
	return 0;
fail:
	qcow2_free(q);
	return err;
}

static int default_root(const char *path, char **root)
{
	char *rp = realpath(path, NULL), *dir;

	if (!rp)
		return -errno;
	dir = dirname(rp);
	*root = strdup(dir);
	free(rp);
	return *root ? 0 : -ENOMEM;
}

int blk_open_qcow2(const char *path, bool read_only,
		   const struct qcow2_open_opts *opts, struct blk_backend **out)
{
	struct qcow2_chain_ctx ctx = { .opts = opts };
	struct qcow2 *q;
	int err = 0;

	if (opts && opts->trust_backing)
		ctx.root = NULL;
	else if (opts && opts->allowed_root)
		ctx.root = realpath(opts->allowed_root, NULL), err = ctx.root ? 0 : -errno;
	else
		err = default_root(path, &ctx.root);
	if (err) {
		log_error("qcow2 %s: cannot resolve the allowed root: %s", path,
			  strerror(-err));
		return err;
	}
	if (!err && ctx.root && opts && opts->also_file) {
		ctx.file2 = realpath(opts->also_file, NULL);
		err = ctx.file2 ? 0 : -errno;
	}
	if (!err)
		err = open_one(path, read_only, &ctx, &q);
	free(ctx.root);
	free(ctx.file2);
	if (!err)
		*out = &q->b;
	return err;
}
