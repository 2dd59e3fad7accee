/* Disks of sandboxes: image lookup, per-sandbox copies, fresh data disks. */
#ifndef MVM_SANDBOX_DISK_H
#define MVM_SANDBOX_DISK_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* IMG as a path, or a name under ${XDG_DATA_HOME:-~/.local/share}/mvm/images/
 * (tried as NAME, NAME.ext4, NAME.img, NAME.raw). 0 or -ENOENT. */
int sb_image_resolve(const char *arg, char *out, size_t cap);
/* The sandbox's own copy of a raw image (reflink when possible). */
int sb_disk_copy(const char *src, const char *dst, char *err, size_t errlen);
/* A sparse ext4 data disk of @size bytes. */
int sb_disk_create(const char *dst, uint64_t size, char *err, size_t errlen);

#endif
