/* SHA-1 for git blob ids (common/sha1.h): 64-byte blocks, big-endian words, 80 rounds. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/sha1.h"

struct sha1 {
	uint32_t h[5];
	uint64_t len;
	uint8_t buf[64];
	size_t fill;
};

#define ROL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void block(struct sha1 *s, const uint8_t *p)
{
	uint32_t w[80], a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (int i = 0; i < 80; i++) {
		uint32_t f, k, t;

		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = ROL(a, 5) + f + e + k + w[i];
		e = d, d = c, c = ROL(b, 30), b = a, a = t;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e;
}

static void update(struct sha1 *s, const void *data, size_t n)
{
	const uint8_t *p = data;

	s->len += n;
	while (n) {
		size_t take = 64 - s->fill < n ? 64 - s->fill : n;

		memcpy(s->buf + s->fill, p, take);
		s->fill += take;
		p += take;
		n -= take;
		if (s->fill == 64) {
			block(s, s->buf);
			s->fill = 0;
		}
	}
}

void git_blob_id(const void *p, size_t n, char hex[41])
{
	struct sha1 s = { .h = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 } };
	uint8_t pad[72] = { 0x80 };
	char head[32];
	uint64_t bits;
	size_t padlen;
	int hn = snprintf(head, sizeof(head), "blob %zu", n);

	update(&s, head, (size_t)hn + 1);	/* with its NUL */
	update(&s, p, n);
	bits = s.len * 8;
	padlen = (s.fill < 56 ? 56 : 120) - s.fill;
	for (int i = 0; i < 8; i++)
		pad[padlen + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
	update(&s, pad, padlen + 8);
	for (int i = 0; i < 5; i++)
		snprintf(hex + 8 * i, 9, "%08x", s.h[i]);
}
