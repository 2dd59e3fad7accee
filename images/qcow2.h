/* qcow2 block back-end: public API (open, create, info). */
#ifndef MVM_QCOW2_H
#define MVM_QCOW2_H

#include <stdbool.h>
#include <stdint.h>

#include "images/blk_backend.h"

#define QCOW2_MAX_CHAIN 16		/* images in a chain, top included */
#define QCOW2_MAX_VSIZE (64ULL << 40)	/* 64 TiB: refuse bigger disks */

/*
 * Observer of every host write and fdatasync on the top image, in order
 * (crash-consistency testing: replaying a prefix up to a sync plus any
 * subset of the writes after it must give a consistent image).
 * buf == NULL means the range was deallocated (reads back as zeroes).
 */
struct qcow2_io_trace {
	void *opaque;
	void (*write)(void *opaque, uint64_t off, const void *buf, size_t len);
	void (*sync)(void *opaque);
};

/*
 * How to open an image a guest may have written. NULL opts means: backing
 * files must lie under the top image's own directory, format from the
 * header extension only, default cache.
 */
struct qcow2_open_opts {
	/* Backing files must resolve (after symlinks) inside this directory.
	 * NULL: the directory holding the top image. */
	const char *allowed_root;
	/* One more file a backing name may resolve to, exactly (after
	 * symlinks; NULL: none): a sandbox's layers sit in its state
	 * directory above one base image, and no other file of that
	 * image's directory may be named. */
	const char *also_file;
	/* The caller vouches for the whole chain: skip the root check. */
	bool trust_backing;
	/* Format of the top image's backing file ("raw"/"qcow2") when its
	 * header lacks the backing-format extension; a mismatch is an error. */
	const char *backing_fmt;
	/* L2 tables kept in memory; 0 = default (enough for 16 GiB at 64K). */
	unsigned l2_cache_tables;
	/* Optional, top image only; must outlive the back-end. */
	const struct qcow2_io_trace *trace;
};

/* Open @path as qcow2 (v2 or v3). Errors are logged and returned as -errno. */
int blk_open_qcow2(const char *path, bool read_only,
		   const struct qcow2_open_opts *opts, struct blk_backend **out);

/*
 * Create a new v3 image (fails with -EEXIST if @path exists). cluster_bits
 * 0 means 16 (64 KiB). The backing name is stored as given: a relative name
 * is resolved against the overlay's directory when opened. size_or_0 == 0
 * takes the backing file's virtual size.
 */
int qcow2_create(const char *path, uint64_t size, unsigned cluster_bits);
int qcow2_create_overlay(const char *path, const char *backing_path,
			 const char *backing_fmt, uint64_t size_or_0,
			 unsigned cluster_bits);

/*
 * Point the qcow2 image @path at the backing file @name (stored as given),
 * its backing format, which must be @want_fmt, unchanged: the header parsed
 * as hostile, only the name's bytes and length written, within cluster 0.
 * 0, -EINVAL (not such an image), -ENAMETOOLONG (no room) or -errno.
 */
int qcow2_set_backing(const char *path, const char *name, const char *want_fmt);

struct qcow2_chain_elem {
	char *path;		/* resolved absolute path */
	char format[16];	/* "qcow2" or "raw" */
	uint64_t virtual_size;
};

struct qcow2_info {
	char format[16];		/* "qcow2" */
	uint32_t version;		/* 2 or 3 */
	uint32_t cluster_size;
	uint64_t virtual_size;
	uint64_t allocated_bytes;	/* host bytes used by the top file */
	unsigned chain_len;		/* backing files below the top */
	struct qcow2_chain_elem chain[QCOW2_MAX_CHAIN];
};

/* Read-only inspection of a qcow2 image and its backing chain. */
int qcow2_info_get(const char *path, const struct qcow2_open_opts *opts,
		   struct qcow2_info *out);
void qcow2_info_free(struct qcow2_info *info);

#endif
