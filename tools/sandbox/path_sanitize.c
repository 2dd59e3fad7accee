/* Lexical checks of guest-supplied paths and symlink targets (tools/sandbox/path_sanitize.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tools/sandbox/path_sanitize.h"

static bool is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

const char *ps_path_refusal(const char *path, size_t max_len)
{
	const char *c = path;
	size_t len = strlen(path);

	if (!max_len || max_len > PS_PATH_MAX)
		max_len = PS_PATH_MAX;
	if (path[0] == '/')
		return "absolute path";
	if (len > max_len)
		return "path too long";
	while (*c) {
		size_t n = strcspn(c, "/");

		if (n == 0)
			return "empty path component";
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return "'.' or '..' in the path";
		if (n > PS_NAME_MAX)
			return "name too long";
		for (size_t i = 0; i < n; i++)
			if (is_ctl((unsigned char)c[i]))
				return "control character (newline, tab, escape...) in the name";
		c += n;
		if (*c == '/' && !*++c)
			return "empty path component";
	}
	return NULL;
}

bool ps_is_git_meta(const char *path)
{
	const char *c = path;

	while (*c) {
		size_t n = strcspn(c, "/");

		if (n == 4 && !strncasecmp(c, ".git", 4))
			return true;
		c += n;
		if (*c == '/')
			c++;
	}
	return false;
}

/* Bytes in the valid UTF-8 sequence at @p (1-4), 0 if it is not one (overlong, surrogate, cut). */
static size_t utf8_len(const unsigned char *p)
{
	unsigned cp;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* Copy @in to @out, escaping controls (if @controls) and bytes that are not UTF-8 as \xHH. */
static void escape(const char *in, char *out, size_t cap, bool controls)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;

	if (!cap)
		return;
	while (*p && o + 5 < cap) {
		size_t n = utf8_len(p);
		/* U+0080-U+009F: C1 controls, CSI among them. */
		bool c1 = n == 2 && p[0] == 0xc2 && p[1] < 0xa0;

		if (controls && (*p == '\n' || *p == '\t' || *p == '\\')) {
			o += (size_t)snprintf(out + o, cap - o, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : '\\');
			p++;
		} else if (!n || (controls && (is_ctl(*p) || c1))) {
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
			p++;
		} else if (o + n < cap) {
			memcpy(out + o, p, n);
			o += n;
			p += n;
		} else {
			break;
		}
	}
	out[o] = 0;
}

void ps_escape(const char *in, char *out, size_t cap)
{
	escape(in, out, cap, true);
}

void ps_utf8_clean(const char *in, char *out, size_t cap)
{
	escape(in, out, cap, false);
}
