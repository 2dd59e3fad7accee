/* The shared getopt_long loop of the simple verbs (verb_args.h). */
#include <stdio.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox.h"

/* s->longopts plus --help; 0 or -1 if there are too many. */
static int all_opts(const struct verb_spec *s, struct option *out, char *shorts, size_t cap)
{
	int n = 0;

	for (const struct option *o = s->longopts; o && o->name; o++) {
		if (n == VERB_MAX_OPTS - 2)
			return -1;
		out[n++] = *o;
	}
	out[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	out[n] = (struct option){ 0 };
	/* ':' first: a missing value is told apart from an unknown option. */
	snprintf(shorts, cap, ":h%s", s->shortopts ? s->shortopts : "");
	return 0;
}

static int bad_option(const struct verb_spec *s, int c, char **argv)
{
	if (c == ':')
		cli_err(s->verb, "option '%s' needs a value (see mvm %s --help)", argv[optind - 1],
			s->verb);
	else if (optopt)
		cli_err(s->verb, "unknown option '-%c' (see mvm %s --help)", optopt, s->verb);
	else
		cli_err(s->verb, "unknown option '%s' (see mvm %s --help)", argv[optind - 1], s->verb);
	return -1;
}

int verb_parse(const struct verb_spec *s, void *ctx, int argc, char **argv, struct verb_args *a)
{
	struct option opts[VERB_MAX_OPTS];
	char shorts[64];
	int c;

	memset(a, 0, sizeof(*a));
	if (all_opts(s, opts, shorts, sizeof(shorts)) || s->max_pos > VERB_MAX_POS)
		return -1;
	optind = 0;	/* full reset: verbs may parse more than once (tests) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?' || c == ':')
			return bad_option(s, c, argv);
		if (!s->opt)
			a->flag = true;
		else if (s->opt(ctx, c, optarg))
			return -1;
	}
	if (argc - optind < s->min_pos || (s->max_pos != VERB_ANY_POS && argc - optind > s->max_pos)) {
		cli_err(s->verb, "expected %s (see mvm %s --help)", s->synopsis, s->verb);
		return -1;
	}
	/* getopt_long has moved every positional argument to the end, in order. */
	a->all = argv + optind;
	a->npos = argc - optind;
	for (int i = 0; i < a->npos && i < VERB_MAX_POS; i++)
		a->pos[i] = a->all[i];
	return 0;
}

int verb_parse_exit(int r, const char *usage)
{
	if (r > 0)
		fputs(usage, stdout);
	return r > 0 ? 0 : MVM_EXIT_USAGE;
}

bool verb_sandbox_running(const char *verb, const char *name)
{
	if (!verb_sandbox_ok(verb, name))
		return false;
	if (sb_vmm_pid(name) > 0)
		return true;
	cli_err(verb, "sandbox %s is not running (mvm start %s)", name, name);
	return false;
}

bool verb_sandbox_ok(const char *verb, const char *name)
{
	if (sb_name_ok(name) && sb_exists(name))
		return true;
	cli_err(verb, "no sandbox named %s", name);
	return false;
}
