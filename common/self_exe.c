/* The running binary's directory and its siblings (common/self_exe.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/self_exe.h"

int self_exe_dir(char *out, size_t cap)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	return snprintf(out, cap, "%s", exe) >= (int)cap ? -ENAMETOOLONG : 0;
}

int self_exe_sibling(const char *name, char *out, size_t cap)
{
	char dir[PATH_MAX];
	int ret;

	if (strchr(name, '/'))
		return -EINVAL;
	ret = self_exe_dir(dir, sizeof(dir));
	if (ret)
		return ret;
	return snprintf(out, cap, "%s/%s", dir, name) >= (int)cap ? -ENAMETOOLONG : 0;
}

int self_exe_sibling_exec(const char *name, char *const argv[], char *path, size_t cap)
{
	int ret = self_exe_sibling(name, path, cap);

	if (ret) {
		if (cap)
			path[0] = '\0';
		return ret;
	}
	execv(path, argv);
	return -errno;
}
