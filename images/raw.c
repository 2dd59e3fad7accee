/* Raw image back-end: the file is the disk, byte for byte. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/blk_backend.h"
#include "common/file_io.h"
#include "common/io_census.h"

struct raw {
	struct blk_backend b;
	int fd;
};

static int raw_read(struct blk_backend *b, void *buf, uint64_t off, size_t len)
{
	struct raw *r = b->priv;

	return file_pread(r->fd, buf, len, off);
}

static int raw_write(struct blk_backend *b, const void *buf, uint64_t off, size_t len)
{
	struct raw *r = b->priv;

	if (b->read_only)
		return -EROFS;
	return file_pwrite(r->fd, buf, len, off);
}

static int raw_flush(struct blk_backend *b)
{
	struct raw *r = b->priv;

	return fdatasync(r->fd) ? -errno : 0;
}

static int raw_discard(struct blk_backend *b, uint64_t off, uint64_t len)
{
	struct raw *r = b->priv;

	if (b->read_only)
		return -EROFS;
	if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len))
		return -errno;
	return 0;
}

static void raw_close(struct blk_backend *b)
{
	struct raw *r = b->priv;

	io_census_disk_fd(r->fd, false);
	close(r->fd);
	free(r);
}

static const struct blk_backend_ops raw_ops = {
	.name = "raw",
	.read = raw_read,
	.write = raw_write,
	.flush = raw_flush,
	.discard = raw_discard,
	.close = raw_close,
};

int blk_open_raw(const char *path, bool read_only, struct blk_backend **out)
{
	struct raw *r;
	struct stat st;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(r->fd, &st)) {
		err = -errno;
		goto fail_fd;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		err = -EINVAL;
		goto fail_fd;
	}
	r->b.ops = &raw_ops;
	r->b.size = (uint64_t)st.st_size & ~511ULL;
	r->b.read_only = read_only;
	r->b.priv = r;
	io_census_disk_fd(r->fd, true);
	*out = &r->b;
	return 0;
fail_fd:
	close(r->fd);
fail:
	free(r);
	return err;
}
