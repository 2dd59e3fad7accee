/*
 * The template store: named, read-only starting points for new sandboxes,
 * in ${MVM_TEMPLATE_DIR:-${XDG_DATA_HOME:-~/.local/share}/mvm/templates}/TPL/.
 * A template is a snapshot directory (snapshots/snapshot_dir.h: state,
 * memory, disk layers, config.json) verified once when it was written, then
 * sealed: every file made read-only and its identity (size, mtime, inode,
 * device, change time, checksum) recorded in template.json, and the whole
 * bound by a keyed seal (snapshots/snap_seal.h). A start compares those
 * identities (a stat per file) instead of reading the memory file again,
 * reads the (smaller) disk layers against their keyed tags (older
 * templates: their SHA-256s) when they changed since the last start read
 * them (snapshots/tpl_ledger.h), and refuses a
 * template whose files changed. template.json is hostile input
 * like the rest: bounded, parsed strictly, and checked against the state
 * file's own checksummed file list. A template of a sandbox made with
 * --image references that image's base in the image store (path, identity,
 * SHA-256 in "base"; snapshots/snap_base.h) instead of copying it.
 */
#ifndef MVM_TEMPLATE_H
#define MVM_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshots/snap_seal.h"
#include "snapshots/snapshot_dir.h"

#define TPL_META       "template.json"
#define TPL_META_MAX   (64 << 10)
#define TPL_NAME_MAX   63
#define TPL_MAX_FILES  (SNAP_MAX_FILES + 2)	/* + state, config.json */

struct tpl_file_id {
	char name[64];
	uint64_t size, ino, dev;
	int64_t mtime_ns;
	/* The inode's change time, which no owner can set back: kept for the
	 * files never hard-linked elsewhere (state, config.json, memory), so
	 * one edited in place with its mtime put back is still seen. 0: not
	 * kept (the disk layers, linked into each sandbox, change it). */
	int64_t ctime_ns;
	uint32_t crc;	/* the state's CRC-32C of it (0 for a v3 list: it has tags instead) */
};

struct tpl_meta {
	char name[TPL_NAME_MAX + 1];
	char source[64];		/* the sandbox it was taken from */
	double created;			/* seconds since the epoch */
	int nfiles;
	struct tpl_file_id f[TPL_MAX_FILES];
	bool has_base;			/* a template of an --image sandbox */
	struct snap_base base;		/* its image, referenced, never copied */
	char bundle[SNAP_SHA256_HEX];	/* the bundle it was imported from ("": made here) */
	uint8_t sha256[32];		/* of template.json's bytes as parsed */
	struct snap_seal seal;		/* the directory's seal, as tpl_check verified it */
};

/* The store's directory (not created). 0 or -ENAMETOOLONG. */
int tpl_root(char *out, size_t cap);
/* [A-Za-z0-9][A-Za-z0-9_.-]*, at most TPL_NAME_MAX. */
bool tpl_name_ok(const char *name);
/* TPL's directory in the store. 0, -EINVAL (bad name) or -ENAMETOOLONG. */
int tpl_dir(const char *name, char *out, size_t cap);

/* TPL is in the store. */
bool tpl_exists(const char *name);
/* Sorted names in the store (free each and the array). Count, or -errno. */
int tpl_list(char ***names);

/*
 * Seal the snapshot directory @dir (verified by the caller with
 * snap_verify_dir into @in, config.json present; a base's sha256 filled in)
 * as template @name taken from @source: files read-only, template.json
 * written last. 0 or -errno with @err filled.
 */
int tpl_seal(const char *dir, const char *name, const char *source,
	     const struct snap_dir_info *in, char *err, size_t errlen);

/* The same for a template imported from the bundle whose manifest digest
 * is @bundle (hex): template.json records it, so a re-import is seen. */
int tpl_seal_bundle(const char *dir, const char *name, const char *source,
		    const struct snap_dir_info *in, const char *bundle, char *err, size_t errlen);

/* template.json of @dir, parsed and validated. 0 or -errno with @err filled. */
int tpl_meta_load(const char *dir, struct tpl_meta *m, char *err, size_t errlen);

/*
 * The check before a start: the directory's keyed seal
 * (snapshots/snap_seal.h) naming the template.json and state bytes read
 * here (the state's file list carrying tags or SHA-256s), a stat of every file it
 * lists (same size, mtime, inode and device, still a regular file; the
 * change time too for state, config.json and memory), the state file
 * parsed and its file list equal to template.json's, the disk layers read
 * against their tags or SHA-256s (not the memory file: its size); a base
 * image recorded alike in both, acceptable and unchanged (snap_base_check).
 * Fills @info and @m. 0, or -EBADMSG / -errno with @err saying which file
 * changed and what to do.
 */
int tpl_check(const char *dir, struct snap_dir_info *info, struct tpl_meta *m,
	      char *err, size_t errlen);
/* The same for a start: the layers held under read leases in @hold and
 * read only when they changed since the last start that recorded them
 * (snapshots/tpl_ledger.h); the caller links the held inodes, then
 * tpl_hold_commit and tpl_hold_release (also after a failure). */
struct tpl_hold;
int tpl_check_held(const char *dir, struct snap_dir_info *info, struct tpl_meta *m,
		   struct tpl_hold *hold, char *err, size_t errlen);

/* Before a sandbox's state directory @sdir goes: unlink its links to the
 * layers of the template in @dir, keeping the ledger @ledger true (each
 * layer unchanged since its line, held under a lease, is recorded again
 * after its link went), so that the next start need not read them. Best
 * effort: the rest goes with the directory, and a layer not recorded is
 * read at the next start. */
void tpl_unlink_layers(const char *dir, const char *ledger, const char *sdir);

#endif
