/* One tar entry's header for a tree coming out of a guest (tools/serve/serve_tar.h). */
#include <stdio.h>
#include <string.h>

#include "tools/serve/serve_tar.h"

#define USTAR_SIZE_MAX 077777777777ull	/* 11 octal digits */

static void octal(uint8_t *f, size_t width, uint64_t v)
{
	char tmp[24];

	snprintf(tmp, sizeof(tmp), "%0*llo", (int)width - 1, (unsigned long long)v);
	memcpy(f, tmp, width);		/* width - 1 digits and the NUL */
}

static size_t digits(size_t v)
{
	size_t d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* "LEN key=value\n", LEN counting itself (POSIX pax). Bytes added at @out, or 0 if no room. */
static size_t pax_record(uint8_t *out, size_t room, const char *key, const char *val)
{
	size_t base = 1 + strlen(key) + 1 + strlen(val) + 1, d = digits(base), len;
	char *s = (char *)out;

	if (digits(base + d) != d)
		d++;
	len = base + d;
	if (len + 1 > room)
		return 0;
	snprintf(s, room, "%zu %s=%s\n", len, key, val);
	return len;
}

static void checksum(uint8_t *h)
{
	unsigned sum = 0;

	memset(h + 148, ' ', 8);
	for (int i = 0; i < SV_TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);	/* six digits, NUL, and the space kept */
	h[155] = ' ';
}

/* A ustar header at @h: @name and @link cut to their fields (pax carries the whole). */
static void ustar(uint8_t *h, const char *name, char type, uint32_t mode, uint64_t size, time_t mtime,
		  const char *link)
{
	memset(h, 0, SV_TAR_BLOCK);
	memcpy(h, name, strnlen(name, 99));
	octal(h + 100, 8, mode & 07777);
	octal(h + 108, 8, 0);
	octal(h + 116, 8, 0);
	octal(h + 124, 12, size);
	octal(h + 136, 12, mtime > 0 ? (uint64_t)mtime : 0);
	h[156] = (uint8_t)type;
	if (link)
		memcpy(h + 157, link, strnlen(link, 99));
	memcpy(h + 257, "ustar\0" "00", 8);
	memcpy(h + 265, "root", 4);
	memcpy(h + 297, "root", 4);
	checksum(h);
}

long sv_tar_header(const struct ap_entry *e, const char *name, time_t mtime, uint8_t *buf, size_t cap)
{
	char full[AP_PATH_MAX + 1], num[24];
	bool dir = e->kind == AP_DIR, link = e->kind == AP_SYMLINK, file = e->kind == AP_FILE;
	const char *target = link ? e->target : NULL;
	size_t nl = strlen(name), rec = 0, off = 0;
	char type = dir ? '5' : link ? '2' : '0';
	uint64_t size = file ? e->size : 0;

	if (!nl || nl >= AP_PATH_MAX || (link && (!target[0] || strlen(target) >= AP_PATH_MAX)) ||
	    cap < SV_TAR_HDR_MAX)
		return -1;
	snprintf(full, sizeof(full), "%s%s", name, dir ? "/" : "");
	if (strlen(full) > 99)
		rec += pax_record(buf + SV_TAR_BLOCK + rec, cap - SV_TAR_BLOCK - rec, "path", full);
	if (link && strlen(target) > 99)
		rec += pax_record(buf + SV_TAR_BLOCK + rec, cap - SV_TAR_BLOCK - rec, "linkpath", target);
	if (size > USTAR_SIZE_MAX) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
		rec += pax_record(buf + SV_TAR_BLOCK + rec, cap - SV_TAR_BLOCK - rec, "size", num);
	}
	if (rec) {
		ustar(buf, "PaxHeader", 'x', 0644, rec, mtime, NULL);
		off = SV_TAR_BLOCK + rec + sv_tar_pad(rec);
		memset(buf + SV_TAR_BLOCK + rec, 0, sv_tar_pad(rec));
	}
	ustar(buf + off, full, type, e->mode, size > USTAR_SIZE_MAX ? 0 : size, mtime, target);
	return (long)(off + SV_TAR_BLOCK);
}
