/*
 * `mvm export NAME GUEST_PATH HOST_DIR`: copy a guest tree out into a fresh
 * staging directory beside HOST_DIR and rename it into place only once it
 * is complete, so HOST_DIR is either absent or whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/dir_publish.h"
#include "common/fs_util.h"
#include "tools/cli/cmd_promote.h"
#include "tools/sandbox/cp.h"
#include "tools/sandbox/fetch.h"
#include "tools/sandbox/path_sanitize.h"

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

/* Move the finished copy (stage/t, wrapped in a directory if it is one file) to @dst. */
static int publish(const char *stage, const char *gpath, const char *dst, char *err, size_t cap)
{
	char t[PATH_MAX + 8], d[PATH_MAX + 8], f[PATH_MAX * 2], g[PATH_MAX];
	struct stat st;
	int ret;

	snprintf(t, sizeof(t), "%s/t", stage);
	if (lstat(t, &st))
		goto fail;
	if (S_ISREG(st.st_mode)) {
		snprintf(d, sizeof(d), "%s/d", stage);
		snprintf(g, sizeof(g), "%s", gpath);
		snprintf(f, sizeof(f), "%s/%s", d, basename(g));
		if (mkdir(d, 0755) || rename(t, f))
			goto fail;
		snprintf(t, sizeof(t), "%s", d);
	}
	/* A HOST_DIR that appeared meanwhile is never replaced. */
	return dir_publish(t, dst, err, cap);
fail:
	ret = -errno;
	snprintf(err, cap, "%s", strerror(-ret));
	return ret;
}

static int export_tree(const char *name, const char *gpath, const char *dst, struct fetch_opts *o)
{
	char stage[PATH_MAX], err[PATH_MAX + 160];
	int ret = fetch_staging(dst, stage, sizeof(stage)), dfd;

	if (ret) {
		cli_err("export", ret == -EEXIST ? "%s already exists: name a new directory" :
			"cannot create a staging directory beside %s", dst);
		return ret;
	}
	dfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : fetch_tree(name, gpath, dfd, "t", o);
	if (dfd >= 0)
		close(dfd);
	promote_print_list("export", "skipped", o->refused);
	if (ret)
		cli_err("export", "%s; nothing exported", o->err[0] ? o->err : strerror(-ret));
	if (!ret) {
		ret = publish(stage, gpath, dst, err, sizeof(err));
		if (ret)
			cli_err("export", "cannot move the copy to %s: %s; nothing exported", dst, err);
	}
	rm_tree(stage);
	return ret;
}

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
	ret = export_tree(argv[optind], argv[optind + 1], argv[optind + 2], &o);
	if (!ret)
		fprintf(stderr, "mvm export: %s:%s -> %s (%zu left out)\n", argv[optind], argv[optind + 1],
			argv[optind + 2], refused.n + refused.dropped);
	refusals_free(&refused);
	return ret ? MVM_EXIT_ERROR : 0;
}
