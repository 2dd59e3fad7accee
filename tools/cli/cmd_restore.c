/*
 * `mvm snapshot NAME DIR`, `mvm restore DIR NEWNAME`, `mvm fork NAME NEWNAME`:
 * self-contained snapshots of a running sandbox, and new sandboxes started
 * from them (snapshots/snapshot_dir.h). A restore verifies the whole
 * snapshot (state checksum, memory size, every file's checksum) before it
 * creates anything.
 */
#include <stdio.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_snapshot.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_restore.h"

static const char snapshot_usage[] =
	"usage: mvm snapshot NAME DIR\n"
	"Write a self-contained snapshot of the running sandbox NAME (memory,\n"
	"vCPUs, devices, disk layers, configuration) into DIR (new or empty).\n"
	"The sandbox pauses for the memory copy and then runs on.\n";
static const char restore_usage[] =
	"usage: mvm restore DIR NEWNAME\n"
	"Start the new sandbox NEWNAME from the snapshot in DIR, running exactly\n"
	"where the snapshot left off. DIR's memory file is mapped, not copied:\n"
	"keep DIR unchanged while NEWNAME exists. A damaged or tampered snapshot\n"
	"is refused and nothing is created.\n";
static const char fork_usage[] =
	"usage: mvm fork NAME NEWNAME\n"
	"Snapshot the running sandbox NAME and start NEWNAME from it; both run\n"
	"on independently (NEWNAME keeps the snapshot in its state directory).\n";

static int two_args(const char *verb, const char *synopsis, int argc, char **argv,
		    struct verb_args *a)
{
	const struct verb_spec spec = { .verb = verb, .min_pos = 2, .max_pos = 2,
					.synopsis = synopsis };

	return verb_parse(&spec, NULL, argc, argv, a);
}

int snapshot_parse(int argc, char **argv, struct verb_args *a)
{
	return two_args("snapshot", "NAME DIR", argc, argv, a);
}

int restore_parse(int argc, char **argv, struct verb_args *a)
{
	return two_args("restore", "DIR NEWNAME", argc, argv, a);
}

int fork_parse(int argc, char **argv, struct verb_args *a)
{
	return two_args("fork", "NAME NEWNAME", argc, argv, a);
}

int cmd_snapshot(int argc, char **argv)
{
	struct verb_args a;
	int rc = snapshot_parse(argc, argv, &a);

	if (rc)
		return verb_parse_exit(rc, snapshot_usage);
	if (!verb_sandbox_ok("snapshot", a.pos[0]) || sb_snapshot_to(a.pos[0], a.pos[1]))
		return MVM_EXIT_ERROR;
	return 0;
}

int cmd_restore(int argc, char **argv)
{
	struct verb_args a;
	int ret = restore_parse(argc, argv, &a);

	if (ret)
		return verb_parse_exit(ret, restore_usage);
	if (sb_restore_new(a.pos[0], a.pos[1]))
		return MVM_EXIT_ERROR;
	printf("%s\n", a.pos[1]);
	return 0;
}

int cmd_fork(int argc, char **argv)
{
	struct verb_args a;
	int ret = fork_parse(argc, argv, &a);

	if (ret)
		return verb_parse_exit(ret, fork_usage);
	if (!verb_sandbox_ok("fork", a.pos[0]) || sb_fork(a.pos[0], a.pos[1]))
		return MVM_EXIT_ERROR;
	printf("%s\n", a.pos[1]);
	return 0;
}
