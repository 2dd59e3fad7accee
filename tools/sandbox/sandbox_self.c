/* The start timeout and the mvm binary's path, for starting a sandbox's VMM daemon. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/self_exe.h"
#include "tools/sandbox/sandbox.h"

/* Set once, before any thread starts, by a program beside mvm. */
static char mvm_beside[PATH_MAX];

int sb_start_timeout(void)
{
	const char *s = getenv("MVM_START_TIMEOUT");
	long v;

	return s && !cli_parse_int(s, 1, 86400, &v) ? (int)v : 120;
}

int sb_self_exe_beside(void)
{
	int ret = self_exe_sibling("mvm", mvm_beside, sizeof(mvm_beside));

	if (!ret && access(mvm_beside, X_OK))
		ret = -errno;
	if (ret)
		mvm_beside[0] = '\0';
	return ret;
}

const char *sb_self_exe(void)
{
	static char exe[PATH_MAX];
	ssize_t n;

	if (mvm_beside[0])
		return mvm_beside;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "mvm";
	exe[n] = 0;
	return exe;
}
