/*
 * Self-contained snapshots on disk (`mvm snapshot`, `restore`, `fork`): a
 * directory holding
 *   state    the state file (snapshots/state_file.h), whose FILE section
 *            lists the other files with their sizes and checksums,
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

#define SNAP_SEC_FILE   0x454c4946u	/* "FILE" */
#define SNAP_DIR_STATE  "state"
#define SNAP_DIR_MEMORY "memory"
#define SNAP_MAX_FILES  20

struct vm;

struct snap_file {
	char name[64];
	char format[8];		/* "memory", "raw", "qcow2" */
	uint64_t size;
	uint32_t crc;
	uint8_t sha256[32];	/* of the same stream as @crc (state FILE section v2) */
};

struct snap_dir_info {
	uint64_t ram_size;
	int ncpus;
	int nfiles;		/* [0] memory, then disk layers base first */
	struct snap_file f[SNAP_MAX_FILES];
	bool has_base;		/* the layers end in @base, outside the directory */
	struct snap_base base;
	bool has_net;		/* the state has a network device (a NIC) */
	bool has_sha256;	/* the file list carries SHA-256s (written since seals) */
	uint8_t state_sha256[32]; /* of the state file's bytes as parsed */
};

/* The FILE section (version 2: SHA-256s) listing @f[0..@n). */
struct snap_w;
void snap_files_section(struct snap_w *w, const struct snap_file *f, int n);

/* VMM side: write a snapshot of the running @vm into the empty directory
 * @dir (absolute). The VM pauses for state and memory, then runs on a new
 * disk overlay while the frozen layers are copied. 0 or -errno. */
int snap_export(struct vm *vm, const char *dir, char *err, size_t errlen);
/* The state file of @dir parsed (hostile input) and its file list, without
 * reading the other files: for stores that identify them cheaply
 * (snapshots/template.h). 0 or -errno. */
int snap_dir_info(const char *dir, struct snap_dir_info *out, char *err, size_t errlen);
/* Check every file of the snapshot in @dir (and the identity of a base
 * outside it: snap_base_check); fill @out. 0 or -errno. */
int snap_verify_dir(const char *dir, struct snap_dir_info *out, char *err, size_t errlen);
/* Check the disk layers of @in (not the memory file) in @dir against
 * their sizes, checksums and SHA-256s. 0 or -errno with @err filled. */
int snap_verify_layers(const char *dir, const struct snap_dir_info *in, char *err,
		       size_t errlen);
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
/* Checksum of a file's contents (holes read as zeroes), as in the FILE section. */
int snap_file_crc(int fd, uint64_t *size, uint32_t *crc);
/* The same and the SHA-256 of that stream (one read). 0 or -errno. */
int snap_file_digest(int fd, uint64_t *size, uint32_t *crc, uint8_t sha256[32]);

#endif
