/* `mvm start NAME`: boot a stopped (or crashed) sandbox again; its disk is kept. */
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"

static const char start_usage[] =
	"usage: mvm start NAME\nBoot the stopped sandbox NAME again (same disk).\n";

int start_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct verb_spec spec = { .verb = "start", .min_pos = 1, .max_pos = 1,
					       .synopsis = "one sandbox NAME" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

void cli_say_placement(const char *verb, const char *name)
{
	char note[1024];

	if (sb_cgroup_recorded_note(name, note, sizeof(note)))
		fprintf(stderr, "mvm %s: %s: %s\n", verb, name, note);
}

int cmd_start(int argc, char **argv)
{
	struct verb_args a;
	char err[512] = "";
	int r = start_parse(argc, argv, &a);
	const char *name = a.pos[0];

	if (r)
		return verb_parse_exit(r, start_usage);
	if (!verb_sandbox_ok("start", name))
		return MVM_EXIT_ERROR;
	if (sb_vmm_pid(name) > 0) {
		cli_err("start", "%s is already running", name);
		return MVM_EXIT_ERROR;
	}
	if (sb_start(name, sb_self_exe(), sb_start_timeout(), err, sizeof(err))) {
		cli_err("start", "%s", err);
		sb_stop(name, 5);
		return MVM_EXIT_ERROR;
	}
	cli_say_placement("start", name);
	return 0;
}
