/* Verbs run by a program beside mvm (cmd_beside.h). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "common/self_exe.h"
#include "tools/cli/cmd_beside.h"

int cli_beside(const char *exe, const char *verb, char **argv)
{
	char path[PATH_MAX];
	int ret;

	argv[0] = (char *)exe;
	fflush(NULL);
	ret = self_exe_sibling_exec(exe, argv, path, sizeof(path));
	cli_err(verb, "cannot run %s: %s (%s belongs beside mvm: 'make' builds both, "
		"'make install' installs both)", path[0] ? path : exe, strerror(-ret), exe);
	return MVM_EXIT_ERROR;
}

int cmd_serve_beside(int argc, char **argv)
{
	return cli_beside(SERVE_EXE, "serve", argv);
}
