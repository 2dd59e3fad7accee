/* `mvm vmm NAME` (internal, started by create/start as a daemon): the VMM of one sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_vmm.h"

int cmd_vmm(int argc, char **argv)
{
	int ready_fd = -1;

	if (argc == 4 && !strcmp(argv[2], "--ready-fd"))
		ready_fd = atoi(argv[3]);
	if ((argc != 2 && ready_fd < 3) || !sb_name_ok(argv[1])) {
		fprintf(stderr, "usage: mvm vmm NAME [--ready-fd FD] (internal: the VMM of one sandbox)\n");
		return MVM_EXIT_USAGE;
	}
	return sb_vmm_main(argv[1], ready_fd) ? MVM_EXIT_ERROR : 0;
}
