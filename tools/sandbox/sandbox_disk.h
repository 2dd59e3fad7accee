/* The data disk of a sandbox without a root image. */
#ifndef MVM_SANDBOX_DISK_H
#define MVM_SANDBOX_DISK_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* A sparse ext4 data disk of @size bytes. */
int sb_disk_create(const char *dst, uint64_t size, char *err, size_t errlen);

#endif
