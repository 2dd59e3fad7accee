/* `mvm stop NAME`: the guest syncs and powers off; the sandbox keeps its disk. */
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox.h"

static const char stop_usage[] =
	"usage: mvm stop NAME\n"
	"Stop the sandbox NAME: the guest syncs its disks and powers off (forced\n"
	"after 30 s). 'mvm start NAME' boots it again.\n";

int stop_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct verb_spec spec = { .verb = "stop", .min_pos = 1, .max_pos = 1,
					       .synopsis = "one sandbox NAME" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

int cmd_stop(int argc, char **argv)
{
	struct verb_args a;
	int r = stop_parse(argc, argv, &a);
	const char *name = a.pos[0];

	if (r)
		return verb_parse_exit(r, stop_usage);
	if (!verb_sandbox_ok("stop", name))
		return MVM_EXIT_ERROR;
	if (sb_stop(name, 30)) {
		cli_err("stop", "could not stop %s", name);
		return MVM_EXIT_ERROR;
	}
	return 0;
}
