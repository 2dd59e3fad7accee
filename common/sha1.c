/* SHA-1 hex forms and git blob ids over nettle (common/sha1.h). */
#include <stdio.h>

#include "common/hex.h"
#include "common/sha1.h"

void sha1_hex(struct sha1_ctx *s, char hex[SHA1_HEX])
{
	digest_hex(&nettle_sha1, s, hex);
}

void git_blob_id(const void *p, size_t n, char hex[SHA1_HEX])
{
	struct sha1_ctx s;
	char head[32];
	int hn = snprintf(head, sizeof(head), "blob %zu", n);

	sha1_init(&s);
	sha1_update(&s, (size_t)hn + 1, (const uint8_t *)head);	/* with its NUL */
	sha1_update(&s, n, p);
	sha1_hex(&s, hex);
}
