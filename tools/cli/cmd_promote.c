/*
 * `mvm promote NAME [--check CMD]... --out DIR`: parses, then has
 * tools/promote/promote_bundle.c run the checks and write the review bundle;
 * the exit status says whether the checks passed. Applying the patch stays
 * the reviewer's act; report.json's sha256 ties what was reviewed to it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_promote.h"
#include "tools/promote/promote_bundle.h"

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

static int parse(struct promote_job *o, int argc, char **argv)
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
		} else if (c == 'c' && o->nchecks < PROMOTE_MAX_CHECKS && optarg[0]) {
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
	struct promote_job *o = calloc(1, sizeof(*o));
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
	if (promote_bundle(o))
		goto out;
	ret = promote_checks_passed(o) ? 0 : PROMOTE_EXIT_CHECKS;
	fprintf(stderr, "mvm promote: bundle in %s%s\n", o->out,
		ret ? "; a check failed" : o->nchecks ? "; all checks passed" : "");
out:
	wsdiff_free(&o->w);
	free(o);
	return ret;
}
