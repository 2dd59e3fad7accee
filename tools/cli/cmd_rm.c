/* `mvm rm [-f] NAME`: delete a sandbox and all its state. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/sandbox/baseline.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"

static const char rm_usage[] =
	"usage: mvm rm [-f] NAME\n"
	"Delete the sandbox NAME and its state. A running sandbox needs -f\n"
	"(it is stopped first).\n";

int rm_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct option opts[] = { { "force", no_argument, NULL, 'f' }, { 0 } };
	static const struct verb_spec spec = { .verb = "rm", .shortopts = "f", .longopts = opts,
					       .min_pos = 1, .max_pos = 1, .synopsis = "one sandbox NAME" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

int cmd_rm(int argc, char **argv)
{
	struct verb_args a;
	const char *name;
	char dir[4096];
	int r = rm_parse(argc, argv, &a);

	if (r)
		return verb_parse_exit(r, rm_usage);
	name = a.pos[0];
	if (!sb_name_ok(name) || sb_path(name, NULL, dir, sizeof(dir)) || access(dir, F_OK)) {
		cli_err("rm", "no sandbox named %s", name);
		return MVM_EXIT_ERROR;
	}
	if (sb_vmm_pid(name) > 0) {
		if (!a.flag) {
			cli_err("rm", "%s is running: stop it first, or use rm -f", name);
			return MVM_EXIT_ERROR;
		}
		if (sb_stop(name, 10)) {
			cli_err("rm", "could not stop %s", name);
			return MVM_EXIT_ERROR;
		}
	}
	relay_stop(name);
	/* baseline_remove() also clears a killed diff's tmp-diff-*; the rest,
	 * checkpoint directories included, goes with the state dir. */
	if (baseline_remove(name) || sb_remove_state(name)) {
		cli_err("rm", "could not remove all of %s", dir);
		return MVM_EXIT_ERROR;
	}
	return 0;
}
