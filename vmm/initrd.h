/*
 * The initrd handed to the guest: the base initramfs (busybox + mvm-init)
 * followed by a small cpio archive carrying this run's command under /mvm/.
 * The guest init (guest/init/init.c) reads exactly these files.
 */
#ifndef MVM_INITRD_H
#define MVM_INITRD_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/cpio.h"

#define INITRD_ARGV_MAX (1 << 20)	/* argv + env bytes */

struct run_spec {
	char *const *argv;	/* NULL-terminated, argv[0] required */
	char *const *env;	/* NULL-terminated or NULL */
	const char *workdir;	/* NULL: / */
	bool root_on_disk;	/* switch root to /dev/vda first */
};

/* The /mvm/ archive alone. 0 or -errno (-E2BIG past INITRD_ARGV_MAX). */
int initrd_run_spec(struct buf *out, const struct run_spec *rs);
/* Base image file (may be NULL) + the run-spec archive. */
int initrd_build(const char *base_path, const struct run_spec *rs, struct buf *out);

/* Size of the base file, 4-byte aligned (the run spec follows it); 0 for NULL. */
int initrd_base_size(const char *base_path, uint64_t *size);
/* Read the base file into @dst (at least initrd_base_size bytes, zero padding included). */
int initrd_read_base(const char *base_path, uint8_t *dst, uint64_t size);

#endif
