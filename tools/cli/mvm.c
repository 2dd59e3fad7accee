/* mvm: the command-line front end. One table of verbs; each lives in tools/cmd_*.c. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/start_trace.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_beside.h"
#include "tools/cli/cmd_run.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/cmd_image.h"
#include "tools/cli/cmd_promote.h"
#include "tools/cli/cmd_snapshot.h"

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct verb verbs[] = {
	{ "run", cmd_run, "boot a fresh sandbox, run one command, throw it away" },
	{ "create", cmd_create, "create and boot a long-lived sandbox" },
	{ "exec", cmd_exec, "run a command in a running sandbox" },
	{ "cp", cmd_cp, "copy files and trees into or out of a sandbox" },
	{ "ls", cmd_ls, "list sandboxes and their status" },
	{ "inspect", cmd_inspect, "a sandbox's processes and the protections in force" },
	{ "stop", cmd_stop, "stop a sandbox (its disk is kept)" },
	{ "start", cmd_start, "boot a stopped sandbox again" },
	{ "rm", cmd_rm, "delete a sandbox and its state" },
	{ "gc", cmd_gc, "remove the sandboxes whose VMM is gone (a job's epilogue)" },
	{ "logs", cmd_logs, "print a sandbox's console log" },
	{ "events", cmd_events, "print a sandbox's lifecycle events and network denials" },
	{ "net", cmd_net, "a sandbox's network policy (allow, deny, remove, show, check)" },
	{ "diff", cmd_diff, "the changes to a --copy tree, as a git-style patch" },
	{ "export", cmd_export, "copy a guest tree out into a new host directory" },
	{ "promote", cmd_promote, "run checks, then write a review bundle (patch + report)" },
	{ "image", cmd_image, "disk images and the image store (create, info, build, import, ls)" },
	{ "checkpoint", cmd_checkpoint, "checkpoint a running sandbox (memory, devices, disk)" },
	{ "checkpoints", cmd_checkpoints, "list a sandbox's checkpoints" },
	{ "rollback", cmd_rollback, "return a running sandbox to a checkpoint" },
	{ "snapshot", cmd_snapshot, "write a self-contained snapshot of a running sandbox" },
	{ "restore", cmd_restore, "start a new sandbox from a snapshot" },
	{ "fork", cmd_fork, "snapshot a running sandbox and start a copy of it" },
	{ "template", cmd_template, "named starting points for fast new sandboxes (create, ls, rm)" },
	{ "browser", cmd_browser, "start Chromium in a sandbox; print its CDP endpoint on the host" },
	{ "screenshot", cmd_screenshot, "the sandbox's display as a PNG file" },
	{ "mcp", cmd_mcp, "serve the Model Context Protocol on stdin/stdout" },
	{ "serve", cmd_serve_beside, "serve sandboxes over HTTP to tenants with tokens" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mvm COMMAND [OPTIONS] [ARGS...]\n\n"
		   "mvm runs untrusted work in throw-away KVM microVMs.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "  help     this text; 'mvm COMMAND --help' for one command\n");
}

int main(int argc, char **argv)
{
	/* A peer that hangs up (a VMM socket, the agent, `| head`) is an error
	 * to report, never a silent death with status 141. Children that exec
	 * other programs restore the default. */
	signal(SIGPIPE, SIG_IGN);
	start_trace(argc > 1 ? argv[1] : "main");
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		if (argc >= 3 && strcmp(argv[1], "help") == 0) {
			char *sub[] = { argv[2], "--help", NULL };

			for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
				if (!strcmp(verbs[i].name, argv[2]))
					return verbs[i].fn(2, sub);
		}
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? MVM_EXIT_USAGE : 0;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, argv[1]))
			return verbs[i].fn(argc - 1, argv + 1);
	/* Internal, not in the help: the daemon that create/start launch. */
	if (!strcmp(argv[1], "vmm"))
		return cmd_vmm(argc - 1, argv + 1);
	if (!strcmp(argv[1], "relay"))
		return cmd_relay(argc - 1, argv + 1);
	fprintf(stderr, "mvm: unknown command '%s' (see 'mvm help')\n", argv[1]);
	return MVM_EXIT_USAGE;
}
