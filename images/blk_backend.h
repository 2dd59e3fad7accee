/* Block back-end ops: what virtio-blk sees of a disk, whatever its format. */
#ifndef MVM_BLK_BACKEND_H
#define MVM_BLK_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct blk_backend;

/*
 * Every call returns 0 or -errno. read/write transfer exactly @len bytes at
 * byte offset @off; the caller guarantees off + len <= size (virtio-blk
 * checks the guest's sector numbers before calling). flush returns only once
 * every write completed before it is durable on the host disk.
 * discard is optional (NULL = unsupported). close frees @b.
 */
struct blk_backend_ops {
	const char *name;
	int (*read)(struct blk_backend *b, void *buf, uint64_t off, size_t len);
	int (*write)(struct blk_backend *b, const void *buf, uint64_t off, size_t len);
	int (*flush)(struct blk_backend *b);
	int (*discard)(struct blk_backend *b, uint64_t off, uint64_t len);
	void (*close)(struct blk_backend *b);
};

struct blk_backend {
	const struct blk_backend_ops *ops;
	uint64_t size;		/* virtual size in bytes */
	bool read_only;
	void *priv;
};

/* Open a raw image file. */
int blk_open_raw(const char *path, bool read_only, struct blk_backend **out);

static inline void blk_close(struct blk_backend *b)
{
	if (b)
		b->ops->close(b);
}

#endif
