/* What the promotion verbs (diff, export, promote) share on the command line. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_promote.h"
#include "tools/sandbox/sandbox.h"

int promote_parse_limits(const char *verb, int c, const char *arg, uint64_t *out, uint64_t *total)
{
	if ((c == 'o' && !cli_parse_size(arg, out)) || (c == 's' && !cli_parse_size(arg, total)))
		return 0;
	cli_err(verb, "bad option or value '%s' (see mvm %s --help)", arg ? arg : "", verb);
	return -1;
}

int promote_running(const char *verb, const char *name)
{
	if (!sb_name_ok(name) || !sb_exists(name)) {
		cli_err(verb, "no sandbox named %s", name);
		return -1;
	}
	if (sb_vmm_pid(name) <= 0) {
		cli_err(verb, "sandbox %s is not running (mvm start %s)", name, name);
		return -1;
	}
	return 0;
}
