/*
 * The host disk a set of files takes, for a tenant's quota
 * (serve_quota.h): the blocks each regular file has allocated (a sparse
 * file counts what it uses, a hole nothing), a file linked in twice once.
 * Files are gathered from directories, then summed.
 */
#ifndef MVM_SERVE_BYTES_H
#define MVM_SERVE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sv_use {
	dev_t dev;
	ino_t ino;
	uint64_t bytes;
};

struct sv_uses {
	struct sv_use *v;
	size_t n, cap;
};

/*
 * The regular files in the directory @at (a descriptor, borrowed), and @depth levels
 * of directories below it, into @u; no symlink is followed. A file named
 * @skip directly in @at (NULL: none) is left out. 0 or -errno.
 */
int sv_uses_add_dir(struct sv_uses *u, int at, int depth, const char *skip);

/* The bytes of @u, each file once (sorts @u); UINT64_MAX past it. */
uint64_t sv_uses_sum(struct sv_uses *u);

void sv_uses_free(struct sv_uses *u);

#endif
