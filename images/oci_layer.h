/*
 * One OCI layer (a tar, plain, gzip or zstd: libarchive reads it) applied
 * to the staging tree, with the image spec's whiteouts and mvm's refusals.
 *
 * Two passes over the layer: the first reads all of it (every name and
 * type checked, its uncompressed bytes hashed against the config's diff_id,
 * the size caps enforced) and applies the whiteouts to what the lower
 * layers left; the second writes the entries. So a whiteout never hides an
 * entry of its own layer (the spec's rule), and nothing of a layer whose
 * digest is wrong is ever written.
 */
#ifndef MVM_OCI_LAYER_H
#define MVM_OCI_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "images/oci_stage.h"

/* What one import may unpack (decompression bombs, hostile sizes). */
struct oci_limits {
	uint64_t max_bytes;	/* uncompressed layer bytes, all layers */
	uint64_t max_file;	/* one entry's size */
	uint64_t max_entries;	/* layer entries, all layers */
	uint64_t max_ratio;	/* uncompressed / compressed bytes of one layer... */
	uint64_t ratio_floor;	/* ...checked once a layer is past this many bytes */
};

/* 16 GiB, 8 GiB, 2 million entries, 200:1 past 64 MiB. */
extern const struct oci_limits oci_limits_default;

/*
 * Apply the layer read from @fd (from its start; it is read twice) to @s.
 * @diff_id: the expected SHA-256 of the uncompressed tar (hex), or NULL.
 * Refused (-EINVAL, or -errno of the failing call; @err says which entry
 * and why): a name oci_path_classify refuses; a device node or socket; a
 * hard link whose target is not a regular file of the tree; a write or
 * whiteout through a symlink or a non-directory; a set-id bit outside the
 * policy (setuid/setgid only on root-owned regular files not writable by
 * group or others; setgid and sticky on directories); an entry over
 * @lim->max_file, a layer pushing the totals past @lim, or one expanding
 * more than @lim->max_ratio times; a diff_id mismatch.
 */
int oci_layer_apply(struct oci_stage *s, int fd, const char *diff_id,
		    const struct oci_limits *lim, char *err, size_t errlen);

#endif
