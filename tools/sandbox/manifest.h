/*
 * A workspace manifest: every file, directory and symlink of a tree with its
 * mode and the sha256 of its content (a link's: of its target). `mvm create
 * --copy` records one per copied tree in the sandbox's state directory
 * (baseline/N.json, contents kept as baseline/blobs/SHA256), and `mvm diff`
 * scans what it fetched back into the same shape to compare the two.
 */
#ifndef MVM_MANIFEST_H
#define MVM_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/sha256.h"

enum mf_kind { MF_FILE = 1, MF_DIR = 2, MF_LINK = 3 };

struct mf_entry {
	char *path;		/* relative to the root; "" is the root itself */
	int kind;		/* enum mf_kind */
	uint32_t mode;		/* permission bits (07777) */
	uint64_t size;		/* files: bytes */
	char sha[SHA256_HEX];	/* files: content; links: target; dirs: "" */
	char *target;		/* links; NULL otherwise */
};

struct manifest {
	char *guest_root;	/* the tree's path in the guest */
	char *host_src;		/* where it came from on the host; "" if fetched */
	struct mf_entry *e;	/* sorted by path (strcmp) after mf_sort */
	size_t n, cap;
};

/* Append a copy of @e (strings duplicated). 0 or -ENOMEM. */
int mf_add(struct manifest *m, const struct mf_entry *e);
/* Sort by path; mf_find needs it. */
void mf_sort(struct manifest *m);
/* After mf_sort: drop later entries with a path already present. */
void mf_dedupe(struct manifest *m);
const struct mf_entry *mf_find(const struct manifest *m, const char *path);
void mf_free(struct manifest *m);

/* git's view of an entry's mode: 0100644, 0100755, 0120000; 0 for directories. */
unsigned mf_git_mode(const struct mf_entry *e);

/* JSON on disk, written atomically (0600). 0 or -errno. */
int mf_save(const struct manifest *m, const char *path);
/* Loads and validates (safe relative paths, hex digests, known kinds). 0 or -errno, @err set. */
int mf_load(struct manifest *m, const char *path, char *err, size_t errlen);
/* The same from @text (named @path in messages). */
int mf_parse(struct manifest *m, const char *text, const char *path, char *err, size_t errlen);

struct mf_scan_opts {
	const char *blob_dir;	/* keep each file's content as blob_dir/SHA256; NULL: hash only */
	bool own_tree;		/* a tree mvm wrote: add u+r to unreadable files before reading */
	uint64_t max_entries;	/* 0: no limit */
	char err[512];
};

/*
 * Scan the tree at @root (followed if it is a symlink; inside, symlinks are
 * recorded as links and never followed; FIFOs, sockets and devices are left
 * out, as the agent's tree transfer leaves them out) into @m, then sort.
 * A regular file at @root gives one entry with path "". 0 or -errno, o->err set.
 */
int mf_scan(struct manifest *m, const char *root, struct mf_scan_opts *o);

#endif
