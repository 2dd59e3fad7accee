/* `mvm start NAME`: boot a stopped (or crashed) sandbox again; its disk is kept. */
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"

int cmd_start(int argc, char **argv)
{
	char err[512] = "";

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs("usage: mvm start NAME\nBoot the stopped sandbox NAME again (same disk).\n", stdout);
		return 0;
	}
	if (argc != 2) {
		cli_err("start", "expected one sandbox NAME");
		return MVM_EXIT_USAGE;
	}
	if (!sb_name_ok(argv[1]) || !sb_exists(argv[1])) {
		cli_err("start", "no sandbox named %s", argv[1]);
		return MVM_EXIT_ERROR;
	}
	if (sb_vmm_pid(argv[1]) > 0) {
		cli_err("start", "%s is already running", argv[1]);
		return MVM_EXIT_ERROR;
	}
	if (sb_start(argv[1], sb_self_exe(), sb_start_timeout(), err, sizeof(err))) {
		cli_err("start", "%s", err);
		sb_stop(argv[1], 5);
		return MVM_EXIT_ERROR;
	}
	return 0;
}
