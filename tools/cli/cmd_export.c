/*
 * `mvm export NAME GUEST_PATH HOST_DIR`: parses; tools/sandbox/export.c
 * copies the guest tree into a staging directory beside HOST_DIR and renames
 * it into place only once it is complete, so HOST_DIR is either absent or whole.
 */
#include <getopt.h>
#include <stdio.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_promote.h"
#include "tools/sandbox/cp.h"
#include "tools/sandbox/export.h"

#define EXPORT_MAX_FILE (1ull << 30)

static const char export_usage[] =
	"usage: mvm export [OPTIONS] NAME GUEST_PATH HOST_DIR\n"
	"Copy GUEST_PATH (a directory, or one file) out of the running sandbox NAME\n"
	"into HOST_DIR, which must not exist yet. The files land in a staging\n"
	"directory next to HOST_DIR that is renamed to HOST_DIR only when the copy\n"
	"is complete; on any error nothing is left behind.\n"
	"\n"
	"Left out and listed on stderr: symlinks that point outside the tree, hard\n"
	"links, FIFOs, sockets, device nodes, .git directories, absolute or '..'\n"
	"paths, names with control characters or over 255 bytes, files over the\n"
	"per-file limit. Set-id bits are dropped.\n"
	"\n"
	"  --max-file SIZE   leave out files larger than SIZE (default 1G)\n"
	"  --max-size SIZE   fail if the files add up to more than SIZE (default 16G)\n"
	"  -h, --help        this text\n";

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-file", required_argument, NULL, 'o' }, { "max-size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct refusals refused = { 0 };
	struct fetch_opts o = { .max_file = EXPORT_MAX_FILE, .max_total = CP_DEFAULT_MAX,
				.max_entries = CP_MAX_ENTRIES, .refused = &refused };
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(export_usage, stdout);
			return 0;
		}
		if (promote_parse_limits("export", c, optarg, &o.max_file, &o.max_total))
			return MVM_EXIT_USAGE;
	}
	if (argc - optind != 3) {
		cli_err("export", "expected NAME GUEST_PATH HOST_DIR (see mvm export --help)");
		return MVM_EXIT_USAGE;
	}
	if (promote_running("export", argv[optind]))
		return MVM_EXIT_ERROR;
	ret = sb_export(argv[optind], argv[optind + 1], argv[optind + 2], &o);
	if (!ret)
		fprintf(stderr, "mvm export: %s:%s -> %s (%zu left out)\n", argv[optind], argv[optind + 1],
			argv[optind + 2], refused.n + refused.dropped);
	refusals_free(&refused);
	return ret ? MVM_EXIT_ERROR : 0;
}
