/* The start timeout and this binary's path, for starting a sandbox's VMM daemon. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "tools/sandbox/sandbox.h"

int sb_start_timeout(void)
{
	const char *s = getenv("MVM_START_TIMEOUT");
	long v;

	return s && !cli_parse_int(s, 1, 86400, &v) ? (int)v : 120;
}

const char *sb_self_exe(void)
{
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return "mvm";
	exe[n] = 0;
	return exe;
}
