/* GIT binary patch literals: zlib stored blocks in base85 lines (tools/promote/git_binary.h). */
#include <stdint.h>
#include <string.h>

#include "tools/promote/git_binary.h"

static const char b85[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			  "!#$%&()*+-;<=>?@^_`{|}~";

/* One line: a length letter (A-Z 1-26, a-z 27-52), then 5 digits per 4 bytes (zero-padded). */
static void line(struct outbuf *o, const uint8_t *p, size_t n)
{
	char out[72];
	size_t k = 0;

	out[k++] = (char)(n <= 26 ? 'A' + n - 1 : 'a' + n - 27);
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;

		for (size_t j = 0; j < 4; j++)
			v = v << 8 | (i + j < n ? p[i + j] : 0);
		for (int d = 4; d >= 0; d--) {
			out[k + (size_t)d] = b85[v % 85];
			v /= 85;
		}
		k += 5;
	}
	out[k++] = '\n';
	ob_put(o, out, k);
}

/* Feeds bytes to base85 lines of 52. */
struct lines {
	struct outbuf *o;
	uint8_t buf[52];
	size_t fill;
};

static void emit(struct lines *l, const void *data, size_t n)
{
	const uint8_t *p = data;

	while (n) {
		size_t take = sizeof(l->buf) - l->fill < n ? sizeof(l->buf) - l->fill : n;

		memcpy(l->buf + l->fill, p, take);
		l->fill += take;
		p += take;
		n -= take;
		if (l->fill == sizeof(l->buf)) {
			line(l->o, l->buf, l->fill);
			l->fill = 0;
		}
	}
}

/* RFC 1950 zlib stream of RFC 1951 stored blocks (at most 65535 bytes each), Adler-32 last. */
static void literal(struct outbuf *o, const uint8_t *p, size_t n)
{
	struct lines l = { .o = o };
	uint32_t a = 1, b = 0;
	size_t off = 0;

	ob_printf(o, "literal %zu\n", n);
	emit(&l, "\x78\x01", 2);
	do {
		size_t len = n - off < 65535 ? n - off : 65535;
		uint8_t h[5] = { off + len == n, (uint8_t)len, (uint8_t)(len >> 8),
				 (uint8_t)~len, (uint8_t)(~len >> 8) };

		emit(&l, h, sizeof(h));
		emit(&l, p + off, len);
		off += len;
	} while (off < n);
	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	emit(&l, (uint8_t[]){ b >> 8, b & 0xff, a >> 8, a & 0xff }, 4);
	if (l.fill)
		line(o, l.buf, l.fill);
	ob_put(o, "\n", 1);
}

void gb_write(struct outbuf *o, const char *new, size_t new_len, const char *old, size_t old_len)
{
	ob_put(o, "GIT binary patch\n", 17);
	literal(o, (const uint8_t *)new, new_len);
	literal(o, (const uint8_t *)old, old_len);
}
