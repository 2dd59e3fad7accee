/* Checks of what the guest hands back to `mvm browser` and `mvm screenshot` (browser.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools/sandbox/browser.h"

static bool port_ok(const cJSON *v)
{
	double d = cJSON_GetNumberValue(v);

	return cJSON_IsNumber(v) && d >= 1 && d <= 65535 && d == (double)(int)d;
}

int browser_parse_start(const char *text, struct browser_start *bs)
{
	const char *end = text + strlen(text), *line;
	cJSON *o, *cdp, *vnc, *hl;
	int ret = -EPROTO;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	for (line = end; line > text && line[-1] != '\n'; line--)
		;
	o = cJSON_ParseWithLength(line, (size_t)(end - line));
	cdp = cJSON_GetObjectItemCaseSensitive(o, "cdp_port");
	vnc = cJSON_GetObjectItemCaseSensitive(o, "vnc_port");
	hl = cJSON_GetObjectItemCaseSensitive(o, "headless");
	if (cJSON_IsObject(o) && port_ok(cdp) && (cJSON_IsNull(vnc) || port_ok(vnc))) {
		bs->cdp_port = (uint16_t)cJSON_GetNumberValue(cdp);
		bs->vnc_port = cJSON_IsNull(vnc) ? 0 : (uint16_t)cJSON_GetNumberValue(vnc);
		bs->headless = cJSON_IsTrue(hl);
		ret = 0;
	}
	cJSON_Delete(o);
	return ret;
}

int browser_ws_id(const char *url, char id[BROWSER_ID_MAX + 1])
{
	static const char pfx[] = "ws://", mid[] = "/devtools/browser/";
	const char *p, *slash;
	size_t n;

	if (strncmp(url, pfx, sizeof(pfx) - 1))
		return -EPROTO;
	slash = strchr(url + sizeof(pfx) - 1, '/');
	if (!slash || strncmp(slash, mid, sizeof(mid) - 1))
		return -EPROTO;
	p = slash + sizeof(mid) - 1;
	n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-");
	if (n == 0 || n > BROWSER_ID_MAX || p[n])
		return -EPROTO;
	memcpy(id, p, n);
	id[n] = 0;
	return 0;
}

int browser_http_complete(const char *b, size_t n)
{
	const char *end = memmem(b, n, "\r\n\r\n", 4), *line;
	static const char name[] = "\r\nContent-Length:";
	unsigned long long cl = 0;
	size_t head;
	int digits = 0;

	if (!end)
		return 0;
	head = (size_t)(end - b) + 4;
	for (line = b; line && line < end; line = memchr(line + 2, '\r', (size_t)(end - line - 1))) {
		const char *v;

		if ((size_t)(end - line) < sizeof(name) - 1 || strncasecmp(line, name, sizeof(name) - 1))
			continue;
		for (v = line + sizeof(name) - 1; *v == ' '; v++)
			;
		for (; *v >= '0' && *v <= '9' && digits < 9; v++, digits++)
			cl = cl * 10 + (unsigned)(*v - '0');
		if (!digits || (*v != '\r' && *v != ' '))
			return -EPROTO;
		return n - head >= cl ? 1 : 0;
	}
	return -EPROTO;
}

/* CRC-32 as PNG (and zlib) define it; a few dozen bytes, bit by bit. */
static uint32_t png_crc(const uint8_t *b, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *b++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return c ^ 0xffffffffu;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Bit depths PNG allows for each colour type (bit n: depth n). */
static bool depth_ok(uint8_t type, uint8_t depth)
{
	switch (type) {
	case 0: return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
	case 3: return depth == 1 || depth == 2 || depth == 4 || depth == 8;
	case 2: case 4: case 6: return depth == 8 || depth == 16;
	}
	return false;
}

int browser_png_check(const uint8_t *b, size_t n, uint32_t *w, uint32_t *h)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	const uint8_t *c = b + 8;	/* length, "IHDR", 13 bytes of data, CRC */

	if (n < 8 + 4 + 4 + 13 + 4 || memcmp(b, sig, sizeof(sig)))
		return -EPROTO;
	if (be32(c) != 13 || memcmp(c + 4, "IHDR", 4) || png_crc(c + 4, 17) != be32(c + 21))
		return -EPROTO;
	*w = be32(c + 8);
	*h = be32(c + 12);
	if (*w < 1 || *w > SHOT_DIM_MAX || *h < 1 || *h > SHOT_DIM_MAX ||
	    !depth_ok(c[17], c[16]) || c[18] || c[19] || c[20] > 1)
		return -EPROTO;
	return 0;
}
