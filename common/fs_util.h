/* Small filesystem helpers: mkdir -p, rm -r and where this binary lives, each in one place. */
#ifndef MVM_FS_UTIL_H
#define MVM_FS_UTIL_H

#include <stddef.h>
#include <sys/types.h>

/*
 * mkdir -p: create @path beneath @dfd (AT_FDCWD, or ignored for an absolute
 * path) and its missing parents with @mode. Existing directories are fine;
 * an existing non-directory at @path is -ENOTDIR. 0 or -errno.
 */
int mkdir_p_at(int dfd, const char *path, mode_t mode);
/* mkdir_p_at(AT_FDCWD, ...). */
int mkdir_p(const char *path, mode_t mode);

/*
 * rm -r of @name beneath @dfd (AT_FDCWD for a path): a file, a symlink or a
 * whole tree. Never follows a symlink (a link is removed, never what it
 * points to) and never enters another filesystem (-EXDEV, nothing there is
 * touched). Holds a constant number of descriptors whatever the depth, so a
 * hostile deep tree is removed too. Stops at the first error. 0 or -errno
 * (-ENOENT when @name does not exist).
 */
int rm_tree_at(int dfd, const char *name);
/* rm_tree_at(AT_FDCWD, ...). */
int rm_tree(const char *path);

#endif
