/*
 * The keyed tags of a snapshot's files (state FILE section v3,
 * snapshots/snapshot_dir.h): a UMAC-128 (RFC 4418, nettle's umac128) of
 * each file's digest stream (its size, then every non-zero 4 KiB block
 * with its offset) under a key k of this snapshot alone:
 *   k = HMAC-SHA256(host key, "mvm snapshot umac v1", salt), first 16 bytes
 * (host_mac's length-prefixed parts), salt = 16 random bytes drawn per
 * snapshot and kept in the FILE section; the nonce is the file's index in
 * the list (unique under k, since k is fresh per snapshot). A universal
 * hash costs about a fifth of SHA-256 per byte (docs/benchmarks.md,
 * "Issue 27's cost"), and it is a MAC only under a key the forger lacks.
 *
 * The CLI derives k (it holds the host key) and hands k and the salt to
 * the VMM in the snapshot request; the VMM never sees the host key. A
 * taken-over VMM learns only the k of the snapshots it is asked to take,
 * which lets it forge only those snapshots' contents: it wrote them
 * anyway (docs/security.md). Readers derive k again from the recorded
 * salt; the salt itself is bound by the state file's seal
 * (snapshots/snap_seal.h).
 */
#ifndef MVM_SNAP_MAC_H
#define MVM_SNAP_MAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nettle/umac.h>

#include "common/host_key.h"

#define SNAP_SALT_LEN 16
#define SNAP_KEY_LEN  16
#define SNAP_TAG_LEN  16

struct snap_mac {
	struct umac128_ctx u;
};

/* A fresh salt from the kernel's random source. 0 or -errno. */
int snap_mac_salt(uint8_t salt[SNAP_SALT_LEN]);

/* k for @salt under the host key (the CLI's side: loads the key, wipes it).
 * 0, or -errno with @err filled. */
int snap_mac_key(const uint8_t salt[SNAP_SALT_LEN], uint8_t k[SNAP_KEY_LEN], char *err,
		 size_t errlen);
/* The same under a given host key (tests). Pure. */
void snap_mac_key_with(const uint8_t host[HOST_KEY_LEN], const uint8_t salt[SNAP_SALT_LEN],
		       uint8_t k[SNAP_KEY_LEN]);

/* The tag of file @index (of a file of @size bytes) under @k: start it,
 * feed it the non-zero blocks in increasing order (the caller skips the
 * zero ones), end it. */
void snap_mac_start(struct snap_mac *m, const uint8_t k[SNAP_KEY_LEN], uint32_t index,
		    uint64_t size);
void snap_mac_block(struct snap_mac *m, uint64_t off, const uint8_t *p, size_t n);
/* The tag into @tag; @m is wiped (it holds k's subkeys). */
void snap_mac_end(struct snap_mac *m, uint8_t tag[SNAP_TAG_LEN]);

/* @a and @b equal, in time independent of where they differ. */
bool snap_tag_equal(const uint8_t a[SNAP_TAG_LEN], const uint8_t b[SNAP_TAG_LEN]);

#endif
