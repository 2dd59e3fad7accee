/*
 * SHA-256 (FIPS 180-4): the manifest's and the bundle's content hashes.
 * nettle computes it (with the CPU's SHA extensions where it has them); this
 * file adds the hex forms the manifest and the report use. Streaming callers
 * use nettle's own context: sha256_init / sha256_update, then sha256_hex.
 */
#ifndef MVM_SHA256_H
#define MVM_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <nettle/sha2.h>

#define SHA256_HEX 65		/* 64 hex digits and a NUL */

/* Finish @s and write the digest as lowercase hex into @hex; @s is reset for reuse. */
void sha256_hex(struct sha256_ctx *s, char hex[SHA256_HEX]);
/* One-shot hex digest of @n bytes at @p. */
void sha256_buf_hex(const void *p, size_t n, char hex[SHA256_HEX]);
/* Hex digest of the file at @fd from its current offset to EOF. 0 or -errno. */
int sha256_fd_hex(int fd, char hex[SHA256_HEX]);
/* True when @s is exactly 64 lowercase hex digits: a digest in our hex form. */
bool sha256_hex_valid(const char *s);

#endif
