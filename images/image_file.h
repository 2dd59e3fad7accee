/* What an image file is (`mvm image info`, `image ls`, `image create`): its format, sizes, chain. */
#ifndef MVM_IMAGE_FILE_H
#define MVM_IMAGE_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "images/qcow2.h"

/* "qcow2" when @path starts with the qcow2 magic, else "raw"; @vsize the
 * virtual size (a raw file's length). NULL with errno if it cannot be read. */
const char *image_file_format(const char *path, uint64_t *vsize);

struct image_file_info {
	const char *format;		/* "raw" or "qcow2" */
	uint64_t vsize, disk;		/* virtual size; bytes allocated on the host */
	bool qcow2;			/* @qi is filled: free it with qcow2_info_free */
	struct qcow2_info qi;
	bool chain_refused;		/* qcow2_info_get failed (a backing file outside the root?) */
};

/*
 * @path's format (the header magic, unless @want says "raw": then as raw),
 * sizes and, for qcow2, the backing chain walked with the same root rule as
 * a VM open (@path's own directory) unless @trust_backing. 0, or -errno with
 * a message in @err (empty when only the chain failed: out->chain_refused).
 */
int image_file_info(const char *path, const char *want, bool trust_backing,
		    struct image_file_info *out, char *err, size_t errlen);

#endif
