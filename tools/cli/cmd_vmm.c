/* `mvm vmm NAME` (internal, started by create/start as a daemon): the VMM of one sandbox. */
#include <stdio.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_vmm.h"

int cmd_vmm(int argc, char **argv)
{
	if (argc != 2 || !sb_name_ok(argv[1])) {
		fprintf(stderr, "usage: mvm vmm NAME (internal: the VMM of one sandbox)\n");
		return MVM_EXIT_USAGE;
	}
	return sb_vmm_main(argv[1]) ? MVM_EXIT_ERROR : 0;
}
