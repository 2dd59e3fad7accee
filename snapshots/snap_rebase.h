/*
 * A snapshot directory made to reference another copy of its base image
 * (snapshots/snap_base.h): a template unpacked from a bundle on another
 * host, whose image store holds the base under another path, inode and
 * time. The bottom disk layer's qcow2 backing name, that layer's size and
 * digests in the state's FILE section and the BASE section are rewritten;
 * every other section is copied byte for byte, and the state gets a new
 * checksum. The directory is not yet trusted: the caller seals it after.
 */
#ifndef MVM_SNAP_REBASE_H
#define MVM_SNAP_REBASE_H

#include <stddef.h>

#include "snapshots/snap_base.h"

/* In @dir (a snapshot directory whose state has a BASE section and whose
 * bottom layer is a qcow2 image over a raw base): reference @path with
 * identity @id instead. 0 or -errno with @err. */
int snap_rebase(const char *dir, const char *path, const struct snap_ident *id, char *err,
		size_t errlen);

#endif
