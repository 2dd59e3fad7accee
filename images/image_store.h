/* The image store: ${XDG_DATA_HOME:-~/.local/share}/mvm/images/NAME.ext4 (+ NAME.json),
 * shared by `mvm image`, `mvm run --image` and `mvm create --image`. */
#ifndef MVM_IMAGE_STORE_H
#define MVM_IMAGE_STORE_H

#include <stddef.h>
#include <stdint.h>

/* The store directory: $MVM_IMAGE_DIR, else the XDG path above (malloc'd; it
 * may not exist yet). NULL on ENOMEM. */
char *image_store_dir(void);

/* A name made only of [A-Za-z0-9._-], not starting with '.' or '-'. */
int image_name_ok(const char *name);

/*
 * IMG to a readable file: a path when it contains '/'; else NAME, NAME.ext4,
 * NAME.img or NAME.raw in the store; else a file of that name in the current
 * directory. 0 or -errno (-ENOENT: nothing found).
 */
int image_store_resolve(const char *arg, char *out, size_t cap);

struct image_entry {
	char name[256];
	const char *format;		/* "raw" or "qcow2" */
	uint64_t vsize, disk;		/* virtual size; bytes allocated on the host */
};

/*
 * The regular files of store @dir in directory order, leaving out hidden
 * ones (builds in progress) and NAME.json (metadata). @out is malloc'd
 * (free it; NULL when empty). The count, or -errno if @dir cannot be read.
 */
int image_store_list(const char *dir, struct image_entry **out);

#endif
