/* `mvm relay NAME GPORT[/web]...` (internal, started by `mvm browser`): the sandbox's loopback relay. */
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"

int cmd_relay(int argc, char **argv)
{
	struct relay_fwd fwd[RELAY_MAX_FWD] = { 0 };
	char port[8];
	long v;

	if (argc < 3 || argc > 2 + RELAY_MAX_FWD || !sb_name_ok(argv[1]))
		goto usage;
	for (int i = 2; i < argc; i++) {
		size_t n = strcspn(argv[i], "/");

		/* GPORT/web: a local_web forward (relay.h) */
		if (n >= sizeof(port) || (argv[i][n] && strcmp(argv[i] + n, "/web")))
			goto usage;
		memcpy(port, argv[i], n);
		port[n] = 0;
		if (cli_parse_int(port, 1, 65535, &v))
			goto usage;
		fwd[i - 2] = (struct relay_fwd){ .guest = (uint16_t)v, .local_web = argv[i][n] != 0 };
	}
	return relay_main(argv[1], fwd, argc - 2);
usage:
	fprintf(stderr, "usage: mvm relay NAME GUEST_PORT[/web]... (internal: started by mvm browser;"
		" descriptors 3.. listen)\n");
	return MVM_EXIT_USAGE;
}
