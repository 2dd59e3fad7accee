/* Landlock: a process may touch only the files it was given. */
#ifndef MVM_CONFINE_LANDLOCK_H
#define MVM_CONFINE_LANDLOCK_H

/*
 * Restrict the calling thread, and every thread it creates later, so that
 * files and directories under each path in @ro (NULL-terminated; missing
 * paths are skipped) can only be read, those under each of @rw read and
 * written, and nothing else on the file system opened, created, removed or
 * renamed; no symlink is made even under @rw (a VMM's state directory: one
 * named like a disk would lead the next start anywhere). Call it before creating threads (Landlock is per thread). Needs
 * no_new_privs. Returns the Landlock ABI now in force (> 0), 0 if this
 * kernel has no Landlock (nothing changed), or -errno.
 */
int confine_landlock(const char *const *ro, const char *const *rw);
/* The same, but symlinks may be made under @rw: for a child whose @rw is a
 * staging tree nothing opens by name later without checking (the OCI
 * unpacker, images/oci_unpack.c). */
int confine_landlock_symlinks(const char *const *ro, const char *const *rw);

#endif
