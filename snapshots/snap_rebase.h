/*
 * A snapshot directory made to reference another copy of its base image
 * (snapshots/snap_base.h): a template unpacked from a bundle on another
 * host, whose image store holds the base under another path, inode and
 * time. The bottom disk layer's qcow2 backing name, that layer's size and
 * digest in the state's FILE section and the BASE section are rewritten;
 * every other section is copied byte for byte, and the state gets a new
 * checksum. The same rewrite of the FILE section alone re-tags an imported
 * template's files under this host's key (snapshots/snap_mac.h). The
 * directory is not yet trusted: the caller seals it after.
 */
#ifndef MVM_SNAP_REBASE_H
#define MVM_SNAP_REBASE_H

#include <stddef.h>

#include "snapshots/snapshot_dir.h"

/* @dir's state with @in's file list (its version: v3 under @in->salt, else
 * v2) and base in place of its own. 0 or -errno with @err. */
int snap_state_files(const char *dir, const struct snap_dir_info *in, char *err,
		     size_t errlen);

/* In @dir (a snapshot directory whose state has a BASE section and whose
 * bottom layer is a qcow2 image over a raw base), with @in its file list as
 * it is to be written (v3: @k the key of @in's salt): reference @path with
 * identity @id instead; @in gets the bottom layer's new size and digest and
 * the new base. 0 or -errno with @err. */
int snap_rebase(const char *dir, struct snap_dir_info *in, const uint8_t k[SNAP_KEY_LEN],
		const char *path, const struct snap_ident *id, char *err, size_t errlen);

#endif
