/*
 * Publishing a finished staging directory or file under its final name
 * without ever replacing something that appeared there meanwhile (promote
 * bundles, exports, copies out, templates): renameat2(RENAME_NOREPLACE)
 * where the file system has it, and a no-clobber equivalent where it has
 * not (9p, some NFS and FUSE mounts).
 */
#ifndef MVM_DIR_PUBLISH_H
#define MVM_DIR_PUBLISH_H

#include <stddef.h>

/* The renameat2(2) signature, so tests can stand in a file system without it. */
typedef int (*dir_publish_rename_fn)(int olddirfd, const char *oldpath, int newdirfd,
				     const char *newpath, unsigned int flags);

/*
 * Move @stage (a directory, a file or a symlink) to @dst, which must not
 * exist: -EEXIST if it does (or appears while we work), and @dst is then
 * left untouched. Where RENAME_NOREPLACE is refused (EINVAL, ENOSYS,
 * EOPNOTSUPP): a directory @dst is created exclusively with mkdir(2),
 * @stage's entries are renamed into it, it gets @stage's mode and the then
 * empty @stage is removed, and if that fails half way the moved entries go
 * back to @stage and @dst is removed again; anything else is hard-linked to
 * @dst (link(2) never replaces) and @stage unlinked.
 * 0 or -errno, with a message in @err (@cap bytes) that names the file
 * system's limit when that is the cause.
 */
int dir_publish(const char *stage, const char *dst, char *err, size_t cap);
/* dir_publish with @rn in place of renameat2 (NULL: the real one). */
int dir_publish_with(const char *stage, const char *dst, dir_publish_rename_fn rn, char *err, size_t cap);

#endif
