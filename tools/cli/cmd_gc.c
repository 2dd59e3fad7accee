/* `mvm gc [--dry-run]`: remove the sandboxes whose VMM is gone. */
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox_gc.h"

static const char gc_usage[] =
	"usage: mvm gc [--dry-run]\n"
	"Remove every sandbox whose VMM is gone (status crashed: killed with its\n"
	"job, or crashed), and what it left: its state directory, its cgroup, a\n"
	"relay or network helper still running. Stopped sandboxes are kept.\n"
	"Prints one line per sandbox removed; exit 0 (1 if one could not be wholly\n"
	"removed). For a cluster job's epilogue (docs/cluster.md).\n"
	"  --dry-run   say what would be removed; change nothing\n";

int gc_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct option opts[] = { { "dry-run", no_argument, NULL, 'n' }, { 0 } };
	static const struct verb_spec spec = { .verb = "gc", .longopts = opts,
					       .synopsis = "no arguments" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

static void say(void *ctx, const char *line)
{
	(void)ctx;
	printf("%s\n", line);
}

int cmd_gc(int argc, char **argv)
{
	struct verb_args a;
	int failures, n = gc_parse(argc, argv, &a);

	if (n)
		return verb_parse_exit(n, gc_usage);
	n = sb_gc(a.flag, say, NULL, &failures);
	if (n < 0) {
		cli_err("gc", "cannot read the state directory: %s", strerror(-n));
		return MVM_EXIT_ERROR;
	}
	if (failures)
		cli_err("gc", "%d sandbox(es) could not be wholly removed (see above)", failures);
	return failures ? MVM_EXIT_ERROR : 0;
}
