/* The image config's User to numbers (oci_user.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "images/oci_user.h"

/* A decimal id below 2^32 - 1 (the kernel's "no id"). */
static bool number(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;

	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v >= 0xffffffffULL)
		return false;
	*out = (uint32_t)v;
	return true;
}

/*
 * In a passwd or group text, the line whose field 0 (by name) or field 2
 * (by number, @by_id) matches: its fields 2 and 3 into @id and @gid.
 */
static bool lookup(const char *text, const char *key, size_t klen, bool by_id, uint32_t *id,
		   uint32_t *gid)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *f[4], *end = strchrnul(l, '\n');
		size_t len[4];
		int nf = 0;

		for (const char *p = l; nf < 4 && p <= end; nf++) {
			const char *c = memchr(p, ':', (size_t)(end - p));

			f[nf] = p;
			len[nf] = (size_t)((c ? c : end) - p);
			p = c ? c + 1 : end + 1;
		}
		if (nf < 3)
			continue;
		if (!number(f[2], len[2], id))
			continue;
		if (by_id ? (len[2] != klen || memcmp(f[2], key, klen))
			  : (len[0] != klen || memcmp(f[0], key, klen)))
			continue;
		if (gid && !(nf == 4 && number(f[3], len[3], gid)))
			continue;
		return true;
	}
	return false;
}

int oci_user_resolve(const char *user, const char *passwd, const char *group, uint32_t *uid,
		     uint32_t *gid, char *err, size_t errlen)
{
	const char *colon = strchr(user, ':'), *g = colon ? colon + 1 : NULL;
	size_t ulen = colon ? (size_t)(colon - user) : strlen(user);
	uint32_t pw_gid = 0;
	bool numeric = number(user, ulen, uid);

	if (!ulen || (colon && (!*g || strchr(g, ':'))) || memchr(user, '\n', strlen(user))) {
		snprintf(err, errlen, "config: User '%.64s' is not USER[:GROUP]", user);
		return -EINVAL;
	}
	if (numeric) {
		if (!lookup(passwd, user, ulen, true, uid, &pw_gid))
			pw_gid = 0;
		number(user, ulen, uid);
	} else if (!lookup(passwd, user, ulen, false, uid, &pw_gid)) {
		snprintf(err, errlen, "config: User '%.*s' is not in the image's /etc/passwd",
			 (int)(ulen > 64 ? 64 : ulen), user);
		return -ENOENT;
	}
	*gid = pw_gid;
	if (!g || number(g, strlen(g), gid))
		return 0;
	if (!lookup(group, g, strlen(g), false, gid, NULL)) {
		snprintf(err, errlen, "config: group '%.64s' is not in the image's /etc/group", g);
		return -ENOENT;
	}
	return 0;
}
