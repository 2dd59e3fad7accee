/* The SHA-256 of a finished store image, recorded in its NAME.json. */
#ifndef MVM_IMAGE_HASH_H
#define MVM_IMAGE_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "common/sha256.h"

/*
 * The "sha256" @meta (NAME.json) records, into @out, if it is a regular
 * file (not a symlink) of at most 64 KiB, not older than the image
 * (@img_mtime_ns), and the field is 64 lowercase hex digits. 0, or -ENOENT
 * when there is no such record.
 */
int image_recorded_sha256(const char *meta, int64_t img_mtime_ns, char out[SHA256_HEX]);

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
