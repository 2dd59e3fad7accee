/*
 * A root image seen through a private qcow2 overlay: the base (a raw ext4
 * image, by name from the image store or by path) is shared and only ever
 * opened read-only; every write lands in the overlay. Used by `mvm run
 * --image` (a throw-away overlay) and `mvm create --image` (the sandbox's
 * own overlay in its state directory, kept across stop/start).
 */
#ifndef MVM_IMAGE_OVERLAY_H
#define MVM_IMAGE_OVERLAY_H

#include <limits.h>
#include <stddef.h>

struct image_base {
	char path[PATH_MAX];	/* the base, absolute, symlinks resolved */
	char dir[PATH_MAX];	/* its directory: the overlay's backing files must lie here */
};

/*
 * IMG (image_store_resolve) to a raw base image; a qcow2 file is refused
 * (its header could name any host file as backing). 0, or -errno with a
 * message for the user in @err.
 */
int image_base_resolve(const char *img, struct image_base *b, char *err, size_t errlen);

/* A new overlay file @path (must not exist) over @b. 0 or -errno (@err set). */
int image_overlay_create(const char *path, const struct image_base *b, char *err,
			 size_t errlen);

/* How a VM opens such an overlay: vm_disk.format, .backing_format. */
#define IMAGE_OVERLAY_FORMAT "qcow2"
#define IMAGE_BASE_FORMAT "raw"

#endif
