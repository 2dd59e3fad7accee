/* `mvm logs NAME [-f]`: the guest console and the VMM's messages (console.log,
 * after its rotated older part console.log.1). */
#include <stdio.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox_logs.h"

static const char logs_usage[] =
	"usage: mvm logs [-f] NAME\n"
	"Print the sandbox's console log (kernel messages, agent, VMM errors).\n"
	"console.log is capped (MVM_LOG_MAX, default 8M with its older part\n"
	"console.log.1): a line 'mvm: console.log rotated ...' says how much\n"
	"older output was dropped. It spans every start of the sandbox: each\n"
	"VMM's part begins with 'mvm: TIME VMM started' and, unless the VMM was\n"
	"killed, ends with 'mvm: TIME guest stopped (OUTCOME): WHY'.\n"
	"  -f, --follow   keep printing while the sandbox runs\n";

int logs_parse(int argc, char **argv, struct verb_args *a)
{
	static const struct option opts[] = { { "follow", no_argument, NULL, 'f' }, { 0 } };
	static const struct verb_spec spec = { .verb = "logs", .shortopts = "f", .longopts = opts,
					       .min_pos = 1, .max_pos = 1, .synopsis = "one sandbox NAME" };

	return verb_parse(&spec, NULL, argc, argv, a);
}

int cmd_logs(int argc, char **argv)
{
	struct verb_args a;
	int r = logs_parse(argc, argv, &a);

	if (r)
		return verb_parse_exit(r, logs_usage);
	if (!verb_sandbox_ok("logs", a.pos[0]))
		return MVM_EXIT_ERROR;
	return sb_logs_copy(a.pos[0], a.flag, STDOUT_FILENO) ? MVM_EXIT_ERROR : 0;
}
