/* Guest text into JSON strings, and base64 (tools/mcp/mcp_text.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mcp/mcp_text.h"

int mcp_buf_add(struct mcp_buf *b, const void *p, size_t n)
{
	size_t take = b->len + n > b->cap ? b->cap - b->len : n;

	b->total += n;
	if (!take)
		return 0;
	/* The whole cap at once: untouched pages cost nothing. */
	if (!b->p && !(b->p = malloc(b->cap)))
		return -ENOMEM;
	memcpy(b->p + b->len, p, take);
	b->len += take;
	return 0;
}

void mcp_buf_free(struct mcp_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = 0;
	b->total = 0;
}

/* Length of the valid UTF-8 sequence at @p (at most @n bytes), 0 if invalid. */
static size_t seq_len(const uint8_t *p, size_t n)
{
	uint32_t c;
	size_t len;

	if (p[0] == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

bool mcp_utf8_valid(const uint8_t *p, size_t n)
{
	for (size_t i = 0, l; i < n; i += l)
		if (!(l = seq_len(p + i, n - i)))
			return false;
	return true;
}

char *mcp_utf8_clean(const uint8_t *p, size_t n, uint64_t total)
{
	char note[128] = "";
	size_t o = 0;
	char *out;

	if (total > n)
		snprintf(note, sizeof(note), "\n[mvm: output truncated: %llu bytes, the first %zu shown]",
			 (unsigned long long)total, n);
	/* Worst case every byte becomes the 3-byte U+FFFD. */
	out = malloc(3 * n + strlen(note) + 1);
	if (!out)
		return NULL;
	for (size_t i = 0, l; i < n; i += l) {
		l = seq_len(p + i, n - i);
		if (l) {
			memcpy(out + o, p + i, l);
			o += l;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			l = 1;
		}
	}
	memcpy(out + o, note, strlen(note) + 1);
	return out;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *mcp_base64_encode(const uint8_t *p, size_t n)
{
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);

		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = 0;
	return out;
}

static int b64_val(char c)
{
	const char *q = c ? strchr(b64, c) : NULL;

	return q ? (int)(q - b64) : -1;
}

int mcp_base64_decode(const char *s, uint8_t **out, size_t *n)
{
	size_t len = strlen(s), o = 0;
	uint8_t *buf;

	if (len % 4)
		return -EINVAL;
	buf = malloc(len / 4 * 3 + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;

		for (int k = 0; k < 4; k++) {
			bool last = i + 4 == len;

			v[k] = b64_val(s[i + k]);
			if (v[k] < 0 && s[i + k] == '=' && last && k >= 2 && (k == 3 || s[i + 3] == '=')) {
				v[k] = 0;
				pad++;
			} else if (v[k] < 0 || pad) {
				free(buf);
				return -EINVAL;
			}
		}
		buf[o++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			buf[o++] = (uint8_t)(v[1] << 4 | v[2] >> 2);
		if (pad < 1)
			buf[o++] = (uint8_t)(v[2] << 6 | v[3]);
	}
	*out = buf;
	*n = o;
	return 0;
}
