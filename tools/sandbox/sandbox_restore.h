/* Snapshots of a running sandbox, and sandboxes restored from them. */
#ifndef MVM_SANDBOX_RESTORE_H
#define MVM_SANDBOX_RESTORE_H

#include <stddef.h>

/* Ask NAME's VMM to write the snapshot into @dir (existing, empty,
 * absolute), with NAME's config.json beside it. 0 or -errno (printed). */
int sb_snapshot_into(const char *verb, const char *name, const char *dir);

/* NAME's new state directory into @dir (mkdir; the root too). 0, or -errno
 * after a message (bad name, NAME exists). */
int sb_new_state_dir(const char *verb, const char *name, char *dir, size_t cap);

/* Verify the snapshot in @snapdir (unless @verified: snap_verify_dir's
 * result for it, just made by the caller), make NAME from it in @sdir
 * (existing), start it and sync its clock. 0; <0: failed before anything
 * ran (the caller removes @sdir); 1: the VMM did not start (the sandbox
 * stays, stopped, for `mvm logs`). */
struct snap_dir_info;
int sb_restore_into(const char *verb, const char *snapdir, const struct snap_dir_info *verified,
		    const char *name, const char *sdir);

/* `mvm snapshot`: NAME's snapshot into @path (made, or existing and empty);
 * nothing is left in it on failure. 0, or -1 after a message. */
int sb_snapshot_to(const char *name, const char *path);
/* `mvm restore`: verify the snapshot at @path, then make and start NAME from
 * it. 0; -1 after a message, nothing created; 1 as sb_restore_into. */
int sb_restore_new(const char *path, const char *name);
/* `mvm fork`: snapshot NAME into NEWNAME's state directory and start
 * NEWNAME from it. 0; -1 after a message, nothing created; 1 as sb_restore_into. */
int sb_fork(const char *name, const char *newname);

#endif
