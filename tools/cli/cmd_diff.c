/* `mvm diff NAME [GUEST_PATH]`: the workspace's changes since --copy, as a git-style patch. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_promote.h"
#include "tools/promote/workspace_diff.h"

static const char diff_usage[] =
	"usage: mvm diff [OPTIONS] NAME [GUEST_PATH]\n"
	"Print the changes made in the sandbox NAME to a tree copied in with\n"
	"'mvm create --copy HOST:GUEST' (or below GUEST_PATH inside it) as a\n"
	"git-style unified diff: new, deleted, renamed, mode-changed and binary\n"
	"files marked. Paths are relative to the copied tree, so the patch applies\n"
	"to the host original with 'git apply'.\n"
	"\n"
	"The guest agent streams the files; mvm compares them on the host with the\n"
	"manifest and contents recorded at --copy. No git, hook, filter or program\n"
	"from the guest runs on the host. Left out, and listed on stderr: .git\n"
	"directories, symlinks leaving the tree, hard links, FIFOs, sockets, device\n"
	"nodes, names with control characters, files over 64 MiB.\n"
	"\n"
	"  --max-output SIZE  refuse a patch larger than SIZE (default 64M)\n"
	"  --max-size SIZE    refuse to fetch more than SIZE of files (default 4G)\n"
	"  -h, --help         this text\n";

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-output", required_argument, NULL, 'o' }, { "max-size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct wsdiff w = { 0 };
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(diff_usage, stdout);
			return 0;
		}
		if (promote_parse_limits("diff", c, optarg, &w.max_output, &w.max_total))
			return MVM_EXIT_USAGE;
	}
	if (argc - optind < 1 || argc - optind > 2) {
		cli_err("diff", "expected NAME [GUEST_PATH] (see mvm diff --help)");
		return MVM_EXIT_USAGE;
	}
	if (promote_running("diff", argv[optind]))
		return MVM_EXIT_ERROR;
	w.gpath = argc - optind == 2 ? argv[optind + 1] : NULL;
	ret = wsdiff_run(argv[optind], &w);
	refusals_print("diff", "not compared", &w.refused);
	refusals_print("diff", "note", &w.notes);
	if (!ret && w.patch.over) {
		cli_err("diff", "the patch is larger than %llu bytes (--max-output): nothing printed",
			(unsigned long long)w.patch.max);
		ret = -1;
	} else if (ret) {
		cli_err("diff", "%s", w.err);
	} else if (w.patch.len && ap_write_all(STDOUT_FILENO, w.patch.p, w.patch.len)) {
		ret = -1;
	}
	wsdiff_free(&w);
	return ret ? MVM_EXIT_ERROR : 0;
}
