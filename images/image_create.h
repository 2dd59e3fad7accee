/* `mvm image create`: a new qcow2 v3 image, or a copy-on-write overlay on a base. */
#ifndef MVM_IMAGE_CREATE_H
#define MVM_IMAGE_CREATE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Without @base: an empty qcow2 image of @size bytes at @overlay. With
 * @base: an overlay whose reads fall through to @base, recorded with format
 * @base_fmt (NULL: raw, and a base that is qcow2 is refused rather than
 * taken as raw) and named relative to the overlay's directory when it lies
 * below it; @size 0 takes the base's. Clusters of 1 << @cluster_bits.
 * 0, or -errno with a message in @err (empty when qcow2 logged its own).
 */
int image_create(const char *base, const char *base_fmt, uint64_t size, unsigned cluster_bits,
		 const char *overlay, char *err, size_t errlen);

#endif
