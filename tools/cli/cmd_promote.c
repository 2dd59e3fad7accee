/*
 * `mvm promote NAME [--check CMD]... --out DIR`: run the checks in the
 * sandbox, diff the workspace against its baseline, and write the review
 * bundle (changes.patch, report.json, checks/N.log) into a staging
 * directory renamed to DIR when whole. Applying the patch stays the
 * reviewer's act; report.json's sha256 ties what was reviewed to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "common/cli_util.h"
#include "common/dir_publish.h"
#include "common/fs_util.h"
#include "tools/cli/cmd_promote.h"
#include "tools/sandbox/fetch.h"
#include "tools/promote/promote_checks.h"
#include "tools/promote/promote_report.h"
#include "tools/sandbox/sandbox.h"

#define MAX_CHECKS 64
#define PROMOTE_EXIT_CHECKS 1		/* the bundle is written, a check failed */

static const char promote_usage[] =
	"usage: mvm promote [OPTIONS] NAME --out DIR\n"
	"Run each --check in the running sandbox NAME (sh -c CMD, in the --copy\n"
	"tree), then write a review bundle to DIR (which must not exist):\n"
	"  changes.patch  the workspace's changes since --copy (as mvm diff)\n"
	"  report.json    checks (exit code, duration, log), the patch's sha256,\n"
	"                 what was not compared, the network policy and every\n"
	"                 denied attempt, the checkpoint history, image and kernel\n"
	"  checks/N.log   each check's stdout and stderr (at most 16 MiB)\n"
	"Nothing is applied: 'git apply changes.patch' is the reviewer's act.\n"
	"\n"
	"  --check CMD          a check; repeatable, run in order\n"
	"  --out DIR            where the bundle goes\n"
	"  --workspace PATH     the --copy tree (or a path in it) to diff, when there\n"
	"                       are several (as mvm diff's GUEST_PATH)\n"
	"  --workdir DIR        where checks run (default: the --copy tree)\n"
	"  --check-timeout SECS kill a check after SECS (default 3600)\n"
	"  --max-output SIZE    refuse a patch larger than SIZE (default 64M)\n"
	"  --max-size SIZE      refuse to fetch more than SIZE of files (default 4G)\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 all checks passed; 1 a check failed (bundle written);\n"
	"125 no bundle (mvm failed).\n";

struct promote_opts {
	const char *name, *out, *workdir;
	const char *checks[MAX_CHECKS];
	int nchecks;
	long timeout_s;
	struct wsdiff w;
	struct check_result res[MAX_CHECKS];
};

static int write_file(int dfd, const char *file, const void *p, size_t n)
{
	int fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), ret;

	if (fd < 0)
		return -errno;
	ret = ap_write_all(fd, p, n);
	close(fd);
	return ret;
}

static int run_checks(struct promote_opts *o, int dfd)
{
	struct sb_config c = { 0 };
	const char *cwd = o->workdir ? o->workdir : o->w.guest_root;
	int ret = 0;

	if (o->nchecks && mkdirat(dfd, "checks", 0755))
		return -errno;
	sb_config_load(o->name, &c);
	for (int i = 0; i < o->nchecks && !ret; i++) {
		struct check_result *r = &o->res[i];
		int fd;

		snprintf(r->log, sizeof(r->log), "checks/%d.log", i + 1);
		fd = openat(dfd, r->log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		fprintf(stderr, "mvm promote: check %d: %s\n", i + 1, o->checks[i]);
		if (promote_run_check(o->name, o->checks[i], cwd, c.env, c.nenv, (unsigned)o->timeout_s,
				      fd, r))
			cli_err("promote", "check %d could not run: %s", i + 1, r->err);
		else
			fprintf(stderr, "mvm promote: check %d: %s (%.1f s)\n", i + 1,
				check_passed(r) ? "passed" : r->timed_out ? "timed out" : "FAILED",
				r->duration_s);
		close(fd);
	}
	sb_config_free(&c);
	return ret;
}

static int write_bundle(struct promote_opts *o, int dfd)
{
	struct promote_report rep = { .name = o->name, .checks = o->res, .nchecks = o->nchecks,
				      .diff = &o->w };
	char *json;
	int ret;

	sha256_buf_hex(o->w.patch.p ? o->w.patch.p : "", o->w.patch.len, rep.patch_sha);
	ret = write_file(dfd, "changes.patch", o->w.patch.p ? o->w.patch.p : "", o->w.patch.len);
	json = ret ? NULL : promote_report_json(&rep);
	if (!ret && !json)
		ret = -ENOMEM;
	if (!ret)
		ret = write_file(dfd, "report.json", json, strlen(json));
	free(json);
	if (!ret)
		fprintf(stderr, "mvm promote: changes.patch: %zu files changed, sha256 %s\n",
			o->w.st.files, rep.patch_sha);
	return ret;
}

static int promote(struct promote_opts *o)
{
	char stage[PATH_MAX], msg[PATH_MAX + 160];
	int dfd, ret = fetch_staging(o->out, stage, sizeof(stage));

	if (ret) {
		cli_err("promote", ret == -EEXIST ? "%s already exists: name a new directory" :
			"cannot create a staging directory beside %s", o->out);
		return ret;
	}
	dfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* The workspace is located first, so checks run in it and a bad baseline fails early. */
	ret = dfd < 0 ? -errno : run_checks(o, dfd);
	if (!ret) {
		ret = wsdiff_run(o->name, &o->w);
		promote_print_list("promote", "not compared", &o->w.refused);
		promote_print_list("promote", "note", &o->w.notes);
		if (ret)
			cli_err("promote", "%s", o->w.err);
		else if (o->w.patch.over && (ret = -EFBIG))
			cli_err("promote", "the patch is larger than %llu bytes (--max-output)",
				(unsigned long long)o->w.patch.max);
	}
	if (!ret)
		ret = write_bundle(o, dfd);
	if (!ret) {
		/* mkdtemp made it 0700; the bundle gets the user's usual mode. */
		mode_t mask = umask(0);

		umask(mask);
		if (fchmod(dfd, 0777 & ~mask))
			ret = -errno;
	}
	if (dfd >= 0)
		close(dfd);
	msg[0] = 0;
	if (!ret)
		ret = dir_publish(stage, o->out, msg, sizeof(msg));
	if (ret) {
		if (!msg[0])
			snprintf(msg, sizeof(msg), "%s", strerror(-ret));
		cli_err("promote", "no bundle written (%s)", msg);
		rm_tree(stage);
	}
	return ret;
}

static int parse(struct promote_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "check", required_argument, NULL, 'c' }, { "out", required_argument, NULL, 'O' },
		{ "workdir", required_argument, NULL, 'w' }, { "workspace", required_argument, NULL, 'W' }, { "check-timeout", required_argument, NULL, 'T' },
		{ "max-output", required_argument, NULL, 'o' }, { "max-size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(promote_usage, stdout);
			return 1;
		}
		if (c == 1 && !o->name) {
			o->name = optarg;
		} else if (c == 'c' && o->nchecks < MAX_CHECKS && optarg[0]) {
			o->checks[o->nchecks++] = optarg;
		} else if (c == 'O') {
			o->out = optarg;
		} else if (c == 'w') {
			o->workdir = optarg;
		} else if (c == 'W') {
			o->w.gpath = optarg;
		} else if (c == 'T') {
			if (cli_parse_int(optarg, 1, 4000000, &o->timeout_s))
				goto bad;
		} else if (c == 'o' || c == 's') {
			if (promote_parse_limits("promote", c, optarg, &o->w.max_output, &o->w.max_total))
				return -1;
		} else {
			goto bad;
		}
	}
	if (!o->name || !o->out) {
		cli_err("promote", "expected NAME and --out DIR (see mvm promote --help)");
		return -1;
	}
	return 0;
bad:
	cli_err("promote", "bad option or value '%s' (see mvm promote --help)", argv[optind - 1]);
	return -1;
}

int cmd_promote(int argc, char **argv)
{
	struct promote_opts *o = calloc(1, sizeof(*o));
	int ret = MVM_EXIT_ERROR, p;

	if (!o)
		return MVM_EXIT_ERROR;
	o->timeout_s = 3600;
	p = parse(o, argc, argv);
	if (p) {
		ret = p > 0 ? 0 : MVM_EXIT_USAGE;
		goto out;
	}
	if (promote_running("promote", o->name))
		goto out;
	if (wsdiff_locate(o->name, &o->w)) {
		cli_err("promote", "%s", o->w.err);
		goto out;
	}
	if (promote(o))
		goto out;
	ret = 0;
	for (int i = 0; i < o->nchecks; i++)
		if (!check_passed(&o->res[i]))
			ret = PROMOTE_EXIT_CHECKS;
	fprintf(stderr, "mvm promote: bundle in %s%s\n", o->out,
		ret ? "; a check failed" : o->nchecks ? "; all checks passed" : "");
out:
	wsdiff_free(&o->w);
	free(o);
	return ret;
}
