/* Lowercase hex of a finished hash (nettle's generic hash interface and base16 encoder). */
#ifndef MVM_HEX_H
#define MVM_HEX_H

#include <stdint.h>
#include <nettle/base16.h>
#include <nettle/nettle-meta.h>

/* Finish @ctx of hash @h (a digest of at most 64 bytes; @ctx is reset) and write its digest as lowercase hex and a NUL into @hex. */
static inline void digest_hex(const struct nettle_hash *h, void *ctx, char *hex)
{
	uint8_t d[64];	/* the largest digest nettle has (SHA-512) */

	h->digest(ctx, h->digest_size, d);
	base16_encode_update(hex, h->digest_size, d);
	hex[2 * h->digest_size] = '\0';
}

#endif
