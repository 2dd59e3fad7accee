/*
 * Self-contained snapshots on disk (`mvm snapshot`, `restore`, `fork`): a
 * directory holding
 *   state    the state file (snapshots/state_file.h), whose FILE section
 *            lists the other files with their sizes and digests: version 3
 *            (written since keyed tags) a salt and a UMAC-128 tag per file
 *            (snapshots/snap_mac.h); version 2 a CRC-32C and a SHA-256 per
 *            file; version 1 (before keyed seals) a CRC-32C only,
 *   memory   guest RAM, RAM-sized and sparse (restore maps it MAP_PRIVATE:
 *            lazy, and forks share its page cache; it must not change while
 *            a restored sandbox lives),
 *   the disk layers (base first), under the names their qcow2 headers use,
 *   config.json  the sandbox's configuration (added by the CLI).
 * A sandbox made with --image has its chain end in the image store's raw
 * base: that one is not copied but referenced by path and identity in the
 * state's BASE section (snapshots/snap_base.h).
 * Everything is verified (state checksum, sizes, file checksums, the base's
 * identity) before a restore creates anything.
 */
#ifndef MVM_SNAPSHOT_DIR_H
#define MVM_SNAPSHOT_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshots/snap_base.h"
#include "snapshots/snap_mac.h"
#include "snapshots/snap_sum.h"

#define SNAP_SEC_FILE   0x454c4946u	/* "FILE" */
#define SNAP_DIR_STATE  "state"
#define SNAP_DIR_MEMORY "memory"
#define SNAP_MAX_FILES  20

struct vm;

struct snap_file {
	char name[64];
	char format[8];		/* "memory", "raw", "qcow2" */
	uint64_t size;
	uint32_t crc;		/* FILE section v1 and v2 */
	uint8_t sha256[32];	/* of the same stream as @crc (v2) */
	uint8_t tag[SNAP_TAG_LEN]; /* v3: keyed (snapshots/snap_mac.h), index = nonce */
};

struct snap_dir_info {
	uint64_t ram_size;
	int ncpus;
	int nfiles;		/* [0] memory, then disk layers base first */
	struct snap_file f[SNAP_MAX_FILES];
	bool has_base;		/* the layers end in @base, outside the directory */
	struct snap_base base;
	bool has_net;		/* the state has a network device (a NIC) */
	int fver;		/* the FILE section's version: 1 CRC, 2 + SHA-256, 3 tags */
	uint8_t salt[SNAP_SALT_LEN]; /* v3: the snapshot's key is derived from it */
	uint8_t state_sha256[32]; /* of the state file's bytes as parsed */
};

/* The file list carries digests a seal can bind (version 2 or 3): the
 * only kind a seal is accepted with (snap_seal_check_state). */
static inline bool snap_files_bound(const struct snap_dir_info *in)
{
	return in->fver >= 2;
}

/* The FILE section listing @f[0..@n): version 3 (@salt and the files'
 * tags) when @salt is not NULL, else version 2 (CRC-32Cs and SHA-256s; the
 * tests' old snapshots, and a rewrite of one). */
struct snap_w;
void snap_files_section(struct snap_w *w, const struct snap_file *f, int n,
			const uint8_t *salt);

/* VMM side: write a snapshot of the running @vm into the empty directory
 * @dir (absolute), its files tagged under @k (the CLI's key for @salt:
 * snapshots/snap_mac.h). The VM pauses for state and memory (tagged as it
 * is written), then runs on a new disk overlay while the frozen layers are
 * copied and tagged. 0 or -errno. */
int snap_export(struct vm *vm, const char *dir, const uint8_t k[SNAP_KEY_LEN],
		const uint8_t salt[SNAP_SALT_LEN], char *err, size_t errlen);
/* The state file of @dir parsed (hostile input) and its file list, without
 * reading the other files: for stores that identify them cheaply
 * (snapshots/template.h). 0 or -errno. */
int snap_dir_info(const char *dir, struct snap_dir_info *out, char *err, size_t errlen);
/* The same from the state file open at @fd (-1: "state" in @dir), its
 * SHA-256 taken only when @digest (else state_sha256 is zeros: the caller
 * knows the bytes unchanged since they were checked, snapshots/tpl_ledger.h). */
int snap_dir_info_held(const char *dir, int fd, bool digest, struct snap_dir_info *out,
		       char *err, size_t errlen);
/* The same from the state file's bytes @buf[0..@len) (hostile input; the
 * fuzz target's entry: tests/fuzz/snap_state_fuzz.c). 0 or -errno. */
int snap_dir_parse(const uint8_t *buf, size_t len, bool digest, struct snap_dir_info *out,
		   char *err, size_t errlen);
/* Check every file of the snapshot in @dir (and the identity of a base
 * outside it: snap_base_check); fill @out. 0 or -errno. */
int snap_verify_dir(const char *dir, struct snap_dir_info *out, char *err, size_t errlen);
/* Check the disk layers of @in (not the memory file) in @dir against
 * their sizes and digests (v3: tags under the key of @in's salt). 0 or
 * -errno with @err filled. */
int snap_verify_layers(const char *dir, const struct snap_dir_info *in, char *err,
		       size_t errlen);
/* The same, layer @i read through @fds[i] when that is not -1 (a descriptor
 * the caller holds: the inode it links), and not at all when @skip[i] (the
 * caller knows it unchanged since it was read: snapshots/tpl_ledger.h);
 * either may be NULL. The key is derived only if a layer is read. */
int snap_verify_layers_held(const char *dir, const struct snap_dir_info *in, const int *fds,
			    const bool *skip, char *err, size_t errlen);
/* Copy the disk layers of @in from @dir into @dst (a directory), checking
 * each checksum again on the way. 0 or -errno. */
int snap_copy_layers(const char *dir, const struct snap_dir_info *in, const char *dst,
		     char *err, size_t errlen);
/* In a new state dir @sdir holding the snapshot's layers: a fresh qcow2
 * overlay over the top one and the disk-top file naming it. 0 or -errno. */
int snap_new_top(const char *sdir, const struct snap_dir_info *in);
/* VMM side, after vm_create with restore_mem: load @dir's state. */
int snap_restore_state(struct vm *vm, const char *dir, char *err, size_t errlen);
/* A sandbox to be restored has SNAP_RESTORE_FILE in its state directory
 * naming the snapshot directory; the VMM (cwd: the state dir) reads it. */
#define SNAP_RESTORE_FILE "restore-from"
int snap_restore_pending(char *dir, size_t cap);
/* @in's key (v3; CLI side: under the host key) into @k. 0 or -errno with @err. */
int snap_dir_key(const struct snap_dir_info *in, uint8_t k[SNAP_KEY_LEN], char *err,
		 size_t errlen);

#endif
