/* `mvm relay NAME GPORT...` (internal, started by `mvm browser`): the sandbox's loopback relay. */
#include <stdio.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"

int cmd_relay(int argc, char **argv)
{
	uint16_t gports[RELAY_MAX_FWD];
	long v;

	if (argc < 3 || argc > 2 + RELAY_MAX_FWD || !sb_name_ok(argv[1]))
		goto usage;
	for (int i = 2; i < argc; i++) {
		if (cli_parse_int(argv[i], 1, 65535, &v))
			goto usage;
		gports[i - 2] = (uint16_t)v;
	}
	return relay_main(argv[1], gports, argc - 2);
usage:
	fprintf(stderr, "usage: mvm relay NAME GUEST_PORT... (internal: started by mvm browser;"
		" descriptors 3.. listen)\n");
	return MVM_EXIT_USAGE;
}
