/*
 * `mvm cp SRC DST`: files and trees in and out of a sandbox, exactly one side
 * NAME:PATH. Out of the guest, everything the guest sends is hostile: the
 * receiver (guest/agent/tree_recv.c) writes only beneath the chosen host
 * directory, refuses special files and skips symlinks that leave the tree.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/tree.h"
#include "tools/sandbox/agent_client.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/cp.h"
#include "tools/sandbox/sandbox.h"

static const char cp_usage[] =
	"usage: mvm cp [OPTIONS] SRC DST [OPTIONS]\n"
	"Copy a file or directory tree into or out of a sandbox. Exactly one of SRC\n"
	"and DST is NAME:PATH (a guest path); the other is a host path. Like cp -r:\n"
	"into an existing directory DST the copy keeps SRC's name. Modes are kept\n"
	"(set-id bits are dropped on the host).\n"
	"\n"
	"Out of a sandbox the copy is new: it lands in a staging directory beside\n"
	"its place and is renamed there when complete; an existing file or\n"
	"directory of that name is an error (--merge copies into an existing\n"
	"directory). Left out and listed: .git, symlinks into .git or outside the\n"
	"copied tree, device nodes, FIFOs, sockets, names with control characters.\n"
	"Nothing is written outside DST and no host symlink is followed.\n"
	"\n"
	"  --max-size SIZE   refuse copies out of a sandbox above SIZE (default 16G)\n"
	"  --merge           copy out into an existing directory (files in it are\n"
	"                    overwritten; its .git and symlinks never are)\n"
	"  -h, --help        this text\n";

/* NAME:PATH with a valid sandbox name before the colon. */
static bool split_remote(const char *arg, char *name, size_t cap, const char **path)
{
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;

	if (!colon || n == 0 || n >= cap || memchr(arg, '/', n))
		return false;
	memcpy(name, arg, n);
	name[n] = 0;
	*path = colon + 1;
	return sb_name_ok(name);
}

static int cp_opt(void *ctx, int c, char *arg)
{
	struct cp_out *out = ctx;

	if (c == 'M') {
		out->merge = true;
		return 0;
	}
	if (cli_parse_size(arg, &out->max)) {
		cli_err("cp", "--max-size: '%s' is not a size (e.g. 512M, 2G)", arg);
		return -1;
	}
	return 0;
}

int cp_parse(int argc, char **argv, struct verb_args *a, struct cp_out *out)
{
	static const struct option opts[] = { { "max-size", required_argument, NULL, 'm' },
					      { "merge", no_argument, NULL, 'M' }, { 0 } };
	static const struct verb_spec spec = { .verb = "cp", .longopts = opts, .min_pos = 2,
					       .max_pos = 2, .synopsis = "SRC and DST", .opt = cp_opt };

	out->max = CP_DEFAULT_MAX;
	out->merge = false;
	return verb_parse(&spec, out, argc, argv, a);
}

int cmd_cp(int argc, char **argv)
{
	char sname[SB_NAME_MAX + 1], dname[SB_NAME_MAX + 1];
	const char *spath, *dpath;
	struct refusals skipped = { 0 };
	struct cp_out out = { .skipped = &skipped };
	struct verb_args a;
	bool sr, dr;
	int ret, r = cp_parse(argc, argv, &a, &out);

	if (r)
		return verb_parse_exit(r, cp_usage);
	sr = split_remote(a.pos[0], sname, sizeof(sname), &spath);
	dr = split_remote(a.pos[1], dname, sizeof(dname), &dpath);
	if (sr == dr) {
		cli_err("cp", "exactly one of SRC and DST must be NAME:PATH");
		return MVM_EXIT_USAGE;
	}
	if ((sr && !sb_exists(sname)) || (dr && !sb_exists(dname))) {
		cli_err("cp", "no sandbox named %s", sr ? sname : dname);
		return MVM_EXIT_ERROR;
	}
	if (sb_vmm_pid(sr ? sname : dname) <= 0) {
		cli_err("cp", "sandbox %s is not running", sr ? sname : dname);
		return MVM_EXIT_ERROR;
	}
	if (sr) {
		out.skipped = &skipped;
		ret = cp_get(sname, spath, a.pos[1], &out);
		refusals_print("cp", "skipped", &skipped);
		refusals_free(&skipped);
		return ret ? MVM_EXIT_ERROR : 0;
	}
	return cp_put(dname, a.pos[0], dpath) ? MVM_EXIT_ERROR : 0;
}
