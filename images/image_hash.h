/* The SHA-256 of a finished store image, recorded in its NAME.json. */
#ifndef MVM_IMAGE_HASH_H
#define MVM_IMAGE_HASH_H

#include <stddef.h>

/*
 * Make @meta (NAME.json) record "sha256": the SHA-256 of the whole image
 * file @img, holes read as zeros. Nothing is done when @meta already holds
 * a well-formed one and is not older than @img. Templates of sandboxes on
 * this image take their base's checksum from it instead of reading the
 * image themselves (snapshots/snap_base.c), which under an emulated CPU
 * takes a minute for the browser image. @meta is replaced atomically, its
 * other fields kept. 0, or -errno with a message in @err.
 */
int image_record_sha256(const char *img, const char *meta, char *err, size_t errlen);

#endif
