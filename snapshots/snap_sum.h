/*
 * One pass over a snapshot file's contents: its digest stream (the file's
 * size, then every 4 KiB block that is not all zeros, with its offset:
 * defined by the contents, not by where the file system keeps holes) into
 * any of a CRC-32C and a SHA-256 (state FILE section v1/v2) and a keyed
 * UMAC-128 tag (v3, snapshots/snap_mac.h), optionally copying the file on
 * the way (zero blocks left as holes). Also the VMM's writer of guest
 * memory, which tags the pages while it writes them.
 */
#ifndef MVM_SNAP_SUM_H
#define MVM_SNAP_SUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nettle/sha2.h>

#include "snapshots/snap_mac.h"

struct snap_sum {
	bool want_crc;
	uint32_t crc;			/* when @want_crc */
	struct sha256_ctx *sha;		/* NULL: none */
	struct snap_mac *mac;		/* NULL: none; started by the caller */
};

/* @n bytes (at most 4 KiB) at offset @off: into @s unless all zeros. */
void snap_sum_block(struct snap_sum *s, uint64_t off, const uint8_t *p, size_t n);

/*
 * The regular file @fd through @s (its size first: @s->sha is initialised
 * here, @s->mac must have been started with the same size, so
 * snap_sum_size() first), into @out too unless it is -1. @size: the file's
 * size. 0 or -errno.
 */
int snap_sum_fd(int fd, int out, struct snap_sum *s, uint64_t *size);

/* @fd's size (the stream's first item). 0 or -errno. */
int snap_sum_size(int fd, uint64_t *size);

/* Checksum of a file's contents (holes read as zeroes), as in the FILE section v1. */
int snap_file_crc(int fd, uint64_t *size, uint32_t *crc);
/* The same and the SHA-256 of that stream (one read; v2). 0 or -errno. */
int snap_file_digest(int fd, uint64_t *size, uint32_t *crc, uint8_t sha256[32]);
/* The v3 tag of file @index under @k. 0 or -errno. */
int snap_file_tag(int fd, const uint8_t k[SNAP_KEY_LEN], uint32_t index, uint64_t *size,
		  uint8_t tag[SNAP_TAG_LEN]);

/*
 * Guest RAM (@ram, @size bytes) into the empty file @fd at its own offsets,
 * zero pages left as holes; @present (NULL: all) a bitmap of the pages that
 * may be non-zero. @mac (NULL: none), started with @size, gets each page
 * written, while it is hot. 0 or -errno.
 */
int snap_mem_write(int fd, const uint8_t *ram, uint64_t size, const uint64_t *present,
		   struct snap_mac *mac);

#endif
