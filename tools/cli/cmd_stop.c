/* `mvm stop NAME`: the guest syncs and powers off; the sandbox keeps its disk. */
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"

int cmd_stop(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs("usage: mvm stop NAME\n"
		      "Stop the sandbox NAME: the guest syncs its disks and powers off (forced\n"
		      "after 30 s). 'mvm start NAME' boots it again.\n", stdout);
		return 0;
	}
	if (argc != 2) {
		cli_err("stop", "expected one sandbox NAME");
		return MVM_EXIT_USAGE;
	}
	if (!sb_name_ok(argv[1]) || !sb_exists(argv[1])) {
		cli_err("stop", "no sandbox named %s", argv[1]);
		return MVM_EXIT_ERROR;
	}
	if (sb_stop(argv[1], 30)) {
		cli_err("stop", "could not stop %s", argv[1]);
		return MVM_EXIT_ERROR;
	}
	return 0;
}
