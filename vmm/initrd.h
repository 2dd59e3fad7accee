/*
 * The initrd handed to the guest: the base initramfs (busybox + mvm-init)
 * followed by a small cpio archive carrying this run's command under /mvm/.
 * The guest init (guest/init/init.c) reads exactly these files.
 */
#ifndef MVM_INITRD_H
#define MVM_INITRD_H

#include <stdbool.h>

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

#endif
