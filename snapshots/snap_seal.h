/*
 * Keyed seals of snapshot and template directories. A directory someone
 * else could write (a shared disk, a copied snapshot, a template store a
 * VMM or another local user reaches) must not be accepted once edited: the
 * CRC-32C of the state file and the stat identities of a template are no
 * defence against a deliberate edit. The file "seal" in the directory holds
 *   mvm-seal 1 KIND            (snapshot or template)
 *   state SHA256               (the state file's bytes)
 *   config.json SHA256
 *   template.json SHA256       (templates only)
 *   memory DEV INO SIZE MTIME_NS CTIME_NS
 *                              (snapshots, when the memory file had settled)
 *   hmac HMAC-SHA256           (under the host key, of every line above)
 * The state file lists each other file (memory, disk layers) with a keyed
 * UMAC-128 tag of its contents under a key of that snapshot alone, derived
 * from the host key and the salt the list records (FILE section v3,
 * snapshots/snap_mac.h; snapshots written before: the SHA-256 of each, v2),
 * and template.json their identities: the seal binds them all, the salt
 * with the state. Each reader
 * checks the digest of the bytes it actually read against the seal
 * (snap_seal_expect), so a file swapped between a check and a use fails.
 *
 * The memory line spares a restore from reading the whole memory file (a
 * tag or SHA-256 over every non-zero page of guest memory: docs/benchmarks.md,
 * "Issue 27's cost"). It is the file's identity when it
 * was sealed: any write, truncation, chmod, link or replacement changes its
 * change time or inode, and no user can set a change time back. It is
 * written only once the file's change time lies strictly before the coarse
 * clock's now (the clock the kernel stamps inodes with), so a write in the
 * same clock tick as the seal cannot keep the recorded time. A file whose
 * identity differs (a copied snapshot, an edit) is read in full against its tag.
 */
#ifndef MVM_SNAP_SEAL_H
#define MVM_SNAP_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_SEAL_FILE "seal"
#define SNAP_SEAL_MAX  4096

struct snap_file_ident {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct snap_seal {
	char kind[16];
	int n;
	struct {
		char name[16];
		uint8_t sha256[32];
	} f[3];
	bool has_memory;		/* a snapshot's memory line */
	struct snap_file_ident memory;
};

/* Seal @dir (kind "snapshot" or "template") as its files are now; the seal
 * file is made read-only. 0, or -errno with @err filled. */
int snap_seal_write(const char *dir, const char *kind, char *err, size_t errlen);

/* Read @dir's seal and check its HMAC under the host key; @kind NULL takes
 * either. 0, or -EBADMSG (missing, malformed, forged) / -errno with @err
 * saying what to do. */
int snap_seal_load(const char *dir, const char *kind, struct snap_seal *s, char *err,
		   size_t errlen);

/* @name's bytes, digested as @sha256, are the ones @s sealed. 0 or
 * -EBADMSG with @err naming the file. */
int snap_seal_expect(const struct snap_seal *s, const char *dir, const char *name,
		     const uint8_t sha256[32], char *err, size_t errlen);

/* @dir's seal (of @kind, NULL: either) names the state @in was parsed from,
 * and that state lists tags or SHA-256s of its files (v3 or v2). 0 or
 * -EBADMSG with @err. */
struct snap_dir_info;
int snap_seal_check_state(const char *dir, const char *kind, const struct snap_dir_info *in,
			  char *err, size_t errlen);
/* The copy @copy of @dir's @name (config.json) is what @dir's seal names:
 * checked on the copy, so a swap after the check changes nothing. */
int snap_seal_check_copy(const char *dir, const char *kind, const char *name, const char *copy,
			 char *err, size_t errlen);

/* The memory file open at @fd is the one @s's memory line names, unchanged
 * since (dev, inode, size, modification and change time). False when @s
 * has no memory line. */
bool snap_seal_memory_unchanged(const struct snap_seal *s, int fd);

/* SHA-256 of the (small, at most @max bytes) regular file @path, opened
 * without following a symlink. 0 or -errno. */
int snap_seal_digest_file(const char *path, size_t max, uint8_t sha256[32]);

#endif
