/*
 * The per-user host key: 32 random bytes in
 * ${MVM_HOST_KEY:-${XDG_CONFIG_HOME:-~/.config}/mvm/host.key}, mode 0600,
 * created on first use. It keys the HMAC-SHA256 seals of what a start reads
 * back from disk: a sandbox's config.json and restore-from (tools/sandbox/
 * sb_seal.h), snapshots and templates (snapshots/snap_seal.h). Nothing a
 * VMM may reach holds it: it lies outside every state directory and every
 * Landlock rule (docs/security.md, "The key's place and rotation").
 */
#ifndef MVM_HOST_KEY_H
#define MVM_HOST_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOST_KEY_LEN 32
#define HOST_MAC_HEX 65		/* 64 hex digits and a NUL */

/* The key file's path. 0 or -ENAMETOOLONG / -ENOENT (no HOME). */
int host_key_path(char *out, size_t cap);

/*
 * Load the key into @key, creating it (and its directory, 0700) when
 * absent. A key file that is a symlink, not ours, readable or writable by
 * others, or not exactly HOST_KEY_LEN bytes is refused. @created (may be
 * NULL) says it was made now. 0, or -errno with @err filled.
 */
int host_key_get(uint8_t key[HOST_KEY_LEN], bool *created, char *err, size_t errlen);

/*
 * HMAC-SHA256 under the host key of @n parts, each length-prefixed (so
 * ("ab","c") and ("a","bc") differ), as lowercase hex. The key is wiped
 * from memory before return. 0, or -errno with @err filled.
 */
int host_mac(const void *const *parts, const size_t *lens, int n, char hex[HOST_MAC_HEX],
	     char *err, size_t errlen);

/* The same with a given key (unit tests, rotation). Pure. */
void host_mac_with(const uint8_t key[HOST_KEY_LEN], const void *const *parts,
		   const size_t *lens, int n, char hex[HOST_MAC_HEX]);

/* @a and @b (hex MACs) equal, in time independent of where they differ. */
bool host_mac_equal(const char *a, const char *b);

#endif
