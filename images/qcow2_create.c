/*
 * qcow2 image creation: a v3 image with refcount_order 4 laid out as
 * header | refcount table | refcount block | L1 table, every metadata
 * cluster counted in the one refcount block ("Header", "Host cluster
 * management"). The backing format always goes into the header extension
 * so that no reader ever has to probe it.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/qcow2_int.h"
#include "common/log.h"

struct layout {
	uint64_t cs, size, l1_entries, l1_clusters, total;
};

static int plan(uint64_t size, unsigned bits, struct layout *l)
{
	uint64_t span;

	if (bits < QCOW2_MIN_CLUSTER_BITS || bits > QCOW2_MAX_CLUSTER_BITS)
		return -EINVAL;
	if (size > QCOW2_MAX_VSIZE)
		return -EFBIG;
	l->cs = 1ULL << bits;
	l->size = (size + 511) & ~511ULL;
	span = l->cs * (l->cs / 8);
	l->l1_entries = (l->size + span - 1) / span;
	l->l1_clusters = (l->l1_entries * 8 + l->cs - 1) / l->cs;
	if (!l->l1_clusters)
		l->l1_clusters = 1;
	l->total = 3 + l->l1_clusters;
	/* Everything must be counted by refcount block 0 (16-bit entries). */
	if (l->l1_entries * 8 > QCOW2_MAX_L1_BYTES || l->total > l->cs * 8 / 16)
		return -EFBIG;
	return 0;
}

/* Header, backing format extension, end marker, then the backing name. */
static int build_header(uint8_t *h, const struct layout *l, unsigned bits,
			const char *bpath, const char *bfmt)
{
	size_t off = QCOW2_V3_HDR_LEN, blen = bpath ? strlen(bpath) : 0;

	put_be32(h + QH_MAGIC, QCOW2_MAGIC);
	put_be32(h + QH_VERSION, 3);
	put_be32(h + QH_CLUSTER_BITS, bits);
	put_be64(h + QH_SIZE, l->size);
	put_be32(h + QH_L1_SIZE, (uint32_t)l->l1_entries);
	put_be64(h + QH_L1_OFF, 3 * l->cs);
	put_be64(h + QH_RT_OFF, l->cs);
	put_be32(h + QH_RT_CLUSTERS, 1);
	put_be32(h + QH_REFCOUNT_ORDER, 4);
	put_be32(h + QH_HDR_LEN, QCOW2_V3_HDR_LEN);
	if (bpath) {
		put_be32(h + off, QCOW2_EXT_BACKING_FMT);
		put_be32(h + off + 4, (uint32_t)strlen(bfmt));
		memcpy(h + off + 8, bfmt, strlen(bfmt));
		off += 8 + ((strlen(bfmt) + 7) & ~7UL);
	}
	off += 8;	/* end-of-extensions marker: already zero */
	if (!bpath)
		return 0;
	if (blen > QCOW2_MAX_BACKING_NAME || off + blen > l->cs)
		return -ENAMETOOLONG;
	put_be64(h + QH_BACKING_OFF, off);
	put_be32(h + QH_BACKING_SIZE, (uint32_t)blen);
	memcpy(h + off, bpath, blen);
	return 0;
}

static int write_image(int fd, const uint8_t *hdr, const struct layout *l)
{
	uint8_t *c = calloc(1, l->cs);
	int err;

	if (!c)
		return -ENOMEM;
	err = file_pwrite(fd, hdr, l->cs, 0);
	put_be64(c, 2 * l->cs);
	if (!err)
		err = file_pwrite(fd, c, l->cs, l->cs);
	memset(c, 0, l->cs);
	for (uint64_t i = 0; i < l->total; i++)
		put_be16(c + 2 * i, 1);
	if (!err)
		err = file_pwrite(fd, c, l->cs, 2 * l->cs);
	free(c);
	if (!err && ftruncate(fd, (off_t)(l->total * l->cs)))
		err = -errno;
	return err ? err : qcow2_sync(fd);
}

/* The new directory entry must survive a crash as well as the contents. */
static void sync_parent(const char *path)
{
	char *tmp = strdup(path);
	int fd = tmp ? open(dirname(tmp), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(tmp);
}

static int create_image(const char *path, const char *bpath, const char *bfmt,
			uint64_t size, unsigned bits)
{
	struct layout l;
	uint8_t *hdr;
	int fd, err;

	bits = bits ? bits : 16;
	err = plan(size, bits, &l);
	if (err) {
		log_error("qcow2 %s: cannot create: size or cluster size out of range",
			  path);
		return err;
	}
	hdr = calloc(1, l.cs);
	if (!hdr)
		return -ENOMEM;
	err = build_header(hdr, &l, bits, bpath, bfmt);
	if (err) {
		log_error("qcow2 %s: backing file name too long", path);
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		log_error("qcow2 %s: %s", path, strerror(errno));
		goto out;
	}
	err = write_image(fd, hdr, &l);
	close(fd);
	if (err)
		unlink(path);
	else
		sync_parent(path);
out:
	free(hdr);
	return err;
}

int qcow2_create(const char *path, uint64_t size, unsigned cluster_bits)
{
	return create_image(path, NULL, NULL, size, cluster_bits);
}

/* The creator names the backing file, so it is trusted here; the size
 * comes from the backing file only when the caller gives none. */
static int backing_size(const char *path, const char *bpath, const char *bfmt,
			uint64_t *size)
{
	struct qcow2_open_opts o = { .trust_backing = true };
	char *dir = strdup(path), *full = NULL;
	struct blk_backend *b;
	int err;

	if (!dir || asprintf(&full, "%s/%s", bpath[0] == '/' ? "" : dirname(dir),
			     bpath) < 0) {
		free(dir);
		return -ENOMEM;
	}
	if (!strcmp(bfmt, "raw"))
		err = blk_open_raw(full, true, &b);
	else
		err = blk_open_qcow2(full, true, &o, &b);
	if (err)
		log_error("qcow2 %s: cannot open backing file %s: %s", path, full,
			  strerror(-err));
	else
		*size = b->size, blk_close(b);
	free(full);
	free(dir);
	return err;
}

int qcow2_create_overlay(const char *path, const char *backing_path,
			 const char *backing_fmt, uint64_t size_or_0,
			 unsigned cluster_bits)
{
	int err;

	if (!backing_path || !backing_path[0] || !backing_fmt ||
	    (strcmp(backing_fmt, "raw") && strcmp(backing_fmt, "qcow2"))) {
		log_error("qcow2 %s: backing format must be 'raw' or 'qcow2'", path);
		return -EINVAL;
	}
	if (!size_or_0) {
		err = backing_size(path, backing_path, backing_fmt, &size_or_0);
		if (err)
			return err;
	}
	return create_image(path, backing_path, backing_fmt, size_or_0, cluster_bits);
}
