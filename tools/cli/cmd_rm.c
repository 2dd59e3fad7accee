/* `mvm rm [-f] NAME`: delete a sandbox and all its state. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/sandbox/baseline.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/sandbox/sandbox.h"

int cmd_rm(int argc, char **argv)
{
	bool force = false;
	const char *name = NULL;
	char dir[4096];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--force")) {
			force = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs("usage: mvm rm [-f] NAME\n"
			      "Delete the sandbox NAME and its state. A running sandbox needs -f\n"
			      "(it is stopped first).\n", stdout);
			return 0;
		} else if (!name) {
			name = argv[i];
		} else {
			cli_err("rm", "unexpected '%s'", argv[i]);
			return MVM_EXIT_USAGE;
		}
	}
	if (!name) {
		cli_err("rm", "expected a sandbox NAME");
		return MVM_EXIT_USAGE;
	}
	if (!sb_name_ok(name) || sb_path(name, NULL, dir, sizeof(dir)) || access(dir, F_OK)) {
		cli_err("rm", "no sandbox named %s", name);
		return MVM_EXIT_ERROR;
	}
	if (sb_vmm_pid(name) > 0) {
		if (!force) {
			cli_err("rm", "%s is running: stop it first, or use rm -f", name);
			return MVM_EXIT_ERROR;
		}
		if (sb_stop(name, 10)) {
			cli_err("rm", "could not stop %s", name);
			return MVM_EXIT_ERROR;
		}
	}
	/* baseline_remove() also clears a killed diff's tmp-diff-*; the rest,
	 * checkpoint directories included, goes with the state dir. */
	if (baseline_remove(name) || sb_remove_state(name)) {
		cli_err("rm", "could not remove all of %s", dir);
		return MVM_EXIT_ERROR;
	}
	return 0;
}
