/* Helpers shared by the verbs: number parsing, default guest lookup, errors. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/self_exe.h"

int cli_parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	char *end;
	int shift = 20;
	bool suffix = true;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	case 0: suffix = false; break;
	default: return -EINVAL;
	}
	if (suffix && *end == 'i')
		end++;			/* "Gi", "GiB" */
	if ((*end == 'B' || *end == 'b') && end[1] == 0)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int cli_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A guest directory has a kernel: vmlinux (x86) or Image (arm64; the
 * build's own name is arch_kernel_name, vmm/arch/arch.h). */
static int has_vmlinux(const char *dir)
{
	char p[PATH_MAX], q[PATH_MAX];

	snprintf(p, sizeof(p), "%s/vmlinux", dir);
	snprintf(q, sizeof(q), "%s/Image", dir);
	return access(p, R_OK) == 0 || access(q, R_OK) == 0;
}

const char *cli_guest_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("MVM_GUEST_DIR");
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	if (env && *env)
		return env;
	/* Next to the binary: build/mvm finds build/guest/ from `make guest`. */
	if (!self_exe_dir(dir, sizeof(dir) - 16)) {
		strcat(dir, "/guest");
		if (has_vmlinux(dir))
			return dir;
	}
	if (xdg && *xdg)
		snprintf(dir, sizeof(dir), "%s/mvm/guest", xdg);
	else
		snprintf(dir, sizeof(dir), "%s/.local/share/mvm/guest", home ? home : "/");
	return has_vmlinux(dir) ? dir : NULL;
}

void cli_err(const char *verb, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mvm %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
