/*
 * The one file a snapshot's (or template's) disk chain may end in outside
 * its own directory: the raw base image of a sandbox made with `--image`,
 * in the image store (images/image_store.h). It is referenced by absolute
 * path, never copied, and identified (size, mtime, inode, device; a
 * template adds a SHA-256) so that a start detects a base that changed and
 * refuses it. Everything here reads the record as hostile input: the path
 * must name a file directly in the image store, spelled canonically, and
 * the qcow2 chain of a start accepts that exact file and nothing else
 * outside the sandbox's directory (images/qcow2.h also_file).
 */
#ifndef MVM_SNAP_BASE_H
#define MVM_SNAP_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_SEC_BASE  0x45534142u	/* "BASE" */
#define SNAP_BASE_PATH 1024		/* longest base path accepted, NUL included */
#define SNAP_SHA256_HEX 65

struct snap_ident {
	uint64_t size, ino, dev;
	int64_t mtime_ns;
};

struct snap_base {
	char path[SNAP_BASE_PATH];	/* absolute, canonical */
	struct snap_ident id;
	char sha256[SNAP_SHA256_HEX];	/* "" unless a template recorded it */
	char sha256_of[8];		/* "file" (the store's record) or "blocks" */
};

struct snap_w;
struct snap_section;

/* Identity of an open file (regular files only). 0 or -errno / -EINVAL. */
int snap_ident_fd(int fd, struct snap_ident *id);

/* Which part of the identity differs ("size", "modification time",
 * "inode", "device"), or NULL when @now is the file @was recorded. Pure. */
const char *snap_ident_differs(const struct snap_ident *was, const struct snap_ident *now);

/*
 * A base path as a record may name it: absolute, canonical (no empty, "."
 * or ".." component, no trailing '/'), shorter than SNAP_BASE_PATH, and a
 * file directly in @store (itself absolute and canonical). Pure.
 */
bool snap_base_path_ok(const char *path, const char *store);

/* The BASE section of a state file, and back (0 or -EBADMSG; the path is
 * only decoded here: snap_base_check decides whether it is acceptable). */
void snap_base_section(struct snap_w *w, const struct snap_base *b);
int snap_base_decode(const struct snap_section *sec, struct snap_base *b);

/* @path names a file directly in the image store, canonically, symlinks
 * resolved (snap_base_path_ok). 0, or -EACCES with @err saying so. */
int snap_base_in_store(const char *path, char *err, size_t errlen);

/*
 * The cheap check before a start: @b's path acceptable (snap_base_path_ok
 * against the image store's directory, symlinks resolved), still a regular
 * raw file (not qcow2), with the recorded identity: a stat, nothing read in
 * bulk. 0, or -errno / -EBADMSG with @err naming the image and what changed.
 */
int snap_base_check(const struct snap_base *b, char *err, size_t errlen);

/*
 * @b's SHA-256 (64 hex digits), once, when a template is made: the image
 * store's recorded "sha256" of the file (IMG.json beside IMG.ext4, written
 * after the image) when it has one (sha256_of "file"), else computed over
 * the size and every non-zero 4 KiB block with its offset, as snapshots
 * checksum their files (sha256_of "blocks"). 0 or -errno.
 */
int snap_base_sha256(struct snap_base *b);

#endif
