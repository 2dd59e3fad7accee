/*
 * Capabilities (confine/caps.h).
 *
 * Why: a VMM in a user namespace of its own holds every capability of that
 * namespace (it needs them to make its other namespaces and mounts); its
 * seccomp filter forbids the calls that would use them, and this drop is
 * the second wall behind it. No libcap: capset and prctl are enough, and
 * the bounding set is walked with PR_CAPBSET_READ (its end is EINVAL), not
 * /proc/sys/kernel/cap_last_cap, which Landlock may have closed already.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/confine/caps.h"

#define LOCKED_BITS (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | \
		     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | \
		     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/* The first error kept, the later steps still tried. */
static int first(int ret, int now)
{
	return ret ? ret : now;
}

static int lock_securebits(void)
{
	int cur = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);

	if (cur < 0)
		return -errno;
	if ((cur & LOCKED_BITS) == LOCKED_BITS && !(cur & SECBIT_KEEP_CAPS))
		return 0;
	return prctl(PR_SET_SECUREBITS, (unsigned long)((cur | LOCKED_BITS) & ~SECBIT_KEEP_CAPS),
		     0, 0, 0) ? -errno : 0;
}

static int empty_bounding_set(void)
{
	int ret = 0, in;

	for (unsigned long cap = 0; (in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0)) >= 0; cap++)
		if (in && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			ret = first(ret, -errno);
	return ret;
}

int confine_caps_bound(void)
{
	int ret = lock_securebits();

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
		ret = first(ret, -errno);
	return first(ret, empty_bounding_set());
}

/* Whether this thread's effective, permitted and inheritable sets are empty. */
static int sets_empty(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return -EPERM;
	return 0;
}

int confine_caps_drop(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	int ret = confine_caps_bound(), in;

	/* Dropping needs no privilege; sets_empty() says whether it held. */
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d))
		ret = first(ret, -errno);
	ret = first(ret, sets_empty());
	/* The bounding set: empty whatever confine_caps_bound() said of the rest. */
	for (unsigned long cap = 0; !ret && (in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0)) >= 0; cap++)
		if (in)
			ret = -EPERM;
	return ret;
}

/* The hexadecimal value of "@field:\t..." on a line of its own in @text. */
static int cap_field(const char *text, const char *field, unsigned long long *v)
{
	size_t n = strlen(field);
	const char *p = text;
	char *end;

	while ((p = strstr(p, field))) {
		if ((p == text || p[-1] == '\n') && p[n] == ':') {
			p += n + 1;
			p += strspn(p, " \t");
			if (!isxdigit((unsigned char)*p))
				return -1;
			errno = 0;
			*v = strtoull(p, &end, 16);
			return !errno && (*end == '\n' || !*end) ? 0 : -1;
		}
		p += n;
	}
	return -1;
}

int confine_caps_none(const char *status)
{
	static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
	unsigned long long v;
	int none = 1;

	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (cap_field(status, sets[i], &v))
			return -1;
		if (v)
			none = 0;
	}
	return none;
}
