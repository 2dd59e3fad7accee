/* Lexical checks of guest-supplied paths and symlink targets (tools/path_sanitize.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tools/path_sanitize.h"

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

void ps_escape(const char *in, char *out, size_t cap)
{
	size_t o = 0;

	if (!cap)
		return;
	for (; *in && o + 5 < cap; in++) {
		unsigned char ch = (unsigned char)*in;

		if (ch == '\n')
			o += (size_t)snprintf(out + o, cap - o, "\\n");
		else if (ch == '\t')
			o += (size_t)snprintf(out + o, cap - o, "\\t");
		else if (ch == '\\')
			o += (size_t)snprintf(out + o, cap - o, "\\\\");
		else if (is_ctl(ch))
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
		else
			out[o++] = (char)ch;
	}
	out[o] = 0;
}
