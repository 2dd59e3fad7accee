/* SHA-256 (FIPS 180-4): the manifest's and the bundle's content hashes. Pure. */
#ifndef MVM_SHA256_H
#define MVM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX 65		/* 64 hex digits and a NUL */

struct sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	uint8_t buf[64];
	size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *p, size_t n);
/* Finish and write the digest as lowercase hex into @hex. */
void sha256_hex(struct sha256 *s, char hex[SHA256_HEX]);
/* One-shot hex digest of @n bytes at @p. */
void sha256_buf_hex(const void *p, size_t n, char hex[SHA256_HEX]);
/* Hex digest of the file at @fd from its current offset to EOF. 0 or -errno. */
int sha256_fd_hex(int fd, char hex[SHA256_HEX]);

#endif
