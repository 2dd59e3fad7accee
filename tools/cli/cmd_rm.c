/* `mvm rm [-f] NAME...`: delete sandboxes and all their state. */
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
	"usage: mvm rm [-f] NAME [NAME...]\n"
	"Delete each sandbox NAME and its state. A running sandbox needs -f\n"
	"(it is stopped first). Every NAME is attempted; the exit status is\n"
	"non-zero if any of them could not be removed (each is named).\n";

int rm_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct option opts[] = { { "force", no_argument, NULL, 'f' }, { 0 } };
	static const struct verb_spec spec = { .verb = "rm", .shortopts = "f", .longopts = opts,
					       .min_pos = 1, .max_pos = VERB_ANY_POS,
					       .synopsis = "one or more sandbox NAMEs" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

/* Remove one sandbox; 0, or -1 after saying why under "rm". */
static int rm_one(const char *name, bool force)
{
	char dir[4096];

	if (!sb_name_ok(name) || sb_path(name, NULL, dir, sizeof(dir)) || access(dir, F_OK)) {
		cli_err("rm", "no sandbox named %s", name);
		return -1;
	}
	if (sb_vmm_pid(name) > 0) {
		if (!force) {
			cli_err("rm", "%s is running: stop it first, or use rm -f", name);
			return -1;
		}
		if (sb_stop(name, 10)) {
			cli_err("rm", "could not stop %s", name);
			return -1;
		}
	}
	relay_stop(name);
	/* baseline_remove() also clears a killed diff's tmp-diff-*; the rest,
	 * checkpoint directories included, goes with the state dir. */
	if (baseline_remove(name) || sb_remove_state(name)) {
		cli_err("rm", "could not remove all of %s", dir);
		return -1;
	}
	return 0;
}

int cmd_rm(int argc, char **argv)
{
	struct verb_args a;
	int r = rm_parse(argc, argv, &a), failed = 0;

	if (r)
		return verb_parse_exit(r, rm_usage);
	/* As docker rm: a name that fails does not stop the others. */
	for (int i = 0; i < a.npos; i++)
		failed += rm_one(a.all[i], a.flag) != 0;
	return failed ? MVM_EXIT_ERROR : 0;
}
