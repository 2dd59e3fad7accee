/* Names inside OCI layers: cleaning and whiteouts (oci_path.h). */
#include <errno.h>
#include <string.h>

#include "images/oci_path.h"

#define WH ".wh."
#define WH_OPQ ".wh..wh..opq"

static int refuse(const char **why, const char *msg)
{
	*why = msg;
	return -EINVAL;
}

int oci_path_clean(const char *in, char *out, size_t cap, const char **why)
{
	size_t o = 0, depth = 0;
	const char *p = in;

	*why = "";
	if (cap)
		out[0] = 0;
	if (!in || !cap)
		return refuse(why, "no name");
	if (in[0] == '/')
		return refuse(why, "absolute path");
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		for (const char *c = p; c < end; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return refuse(why, "control character in name");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return refuse(why, "'..' component");
		if (n > OCI_NAME_MAX)
			return refuse(why, "name component too long");
		if (n && !(n == 1 && p[0] == '.')) {
			if (++depth > OCI_DEPTH_MAX)
				return refuse(why, "path too deep");
			if (o + (o ? 1 : 0) + n + 1 > cap)
				return refuse(why, "path too long");
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
			out[o] = 0;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

int oci_path_classify(const char *in, char *out, size_t cap, enum oci_path_kind *kind,
		      const char **why)
{
	char *base, *wh;
	int ret = oci_path_clean(in, out, cap, why);

	if (ret)
		return ret;
	*kind = OCI_PATH_ROOT;
	if (!out[0])
		return 0;
	base = strrchr(out, '/');
	base = base ? base + 1 : out;
	/* A ".wh." anywhere but the last component is no spec form. */
	for (wh = strstr(out, WH); wh; wh = strstr(wh + 1, WH))
		if ((wh == out || wh[-1] == '/') && wh != base)
			return refuse(why, "whiteout name used as a directory");
	*kind = OCI_PATH_ENTRY;
	if (strncmp(base, WH, strlen(WH)))
		return 0;
	if (!strcmp(base, WH_OPQ)) {
		*kind = OCI_PATH_OPAQUE;
		base[base == out ? 0 : -1] = 0;
		return 0;
	}
	if (!strncmp(base, WH WH, 2 * strlen(WH)))
		return refuse(why, "unknown '.wh..wh.' entry");
	if (!base[4] || !strcmp(base + 4, ".") || !strcmp(base + 4, ".."))
		return refuse(why, "whiteout of no name");
	*kind = OCI_PATH_WHITEOUT;
	memmove(base, base + 4, strlen(base + 4) + 1);
	return 0;
}
