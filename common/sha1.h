/*
 * SHA-1 (FIPS 180-4), only for git's object ids in binary patches ("index A..B").
 * nettle computes it; streaming callers use nettle's sha1_init / sha1_update,
 * then sha1_hex.
 */
#ifndef MVM_SHA1_H
#define MVM_SHA1_H

#include <stddef.h>
#include <nettle/sha1.h>

#define SHA1_HEX 41		/* 40 hex digits and a NUL */

/* Finish @s and write the digest as lowercase hex into @hex; @s is reset for reuse. */
void sha1_hex(struct sha1_ctx *s, char hex[SHA1_HEX]);
/* git's blob id of @n bytes at @p: sha1("blob N\0" + bytes). */
void git_blob_id(const void *p, size_t n, char hex[SHA1_HEX]);

#endif
