/* Every verb's argument parser: options before or after NAME, `--`, --help,
 * unknown options, wrong counts; `mvm exec` never runs `--` (issue 20 item 5). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/cmd_snapshot.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/cp.h"

#define ARGV_MAX 16

static char *args[ARGV_MAX + 1], store[ARGV_MAX][64];
static int nargs;

/* A fresh, writable argv (getopt permutes it) from a NULL-terminated list. */
static char **argv_of(const char *first, ...)
{
	va_list ap;
	const char *s = first;

	va_start(ap, first);
	for (nargs = 0; s && nargs < ARGV_MAX; s = va_arg(ap, const char *), nargs++) {
		snprintf(store[nargs], sizeof(store[nargs]), "%s", s);
		args[nargs] = store[nargs];
	}
	va_end(ap);
	args[nargs] = NULL;
	return args;
}

typedef int (*parse_fn)(int argc, char **argv, struct verb_args *a);

#define PARSE(fn, a, ...) fn((argv_of(__VA_ARGS__, NULL), nargs), args, (a))

Test(verb_args, help_unknown_and_counts_behave_alike_in_every_verb)
{
	static const struct {
		const char *verb;
		parse_fn fn;
		int npos;
	} verbs[] = {
		{ "logs", logs_parse, 1 }, { "events", events_parse, 1 },
		{ "ls", ls_parse, 0 }, { "start", start_parse, 1 }, { "stop", stop_parse, 1 },
		{ "checkpoint", checkpoint_parse, 1 }, { "checkpoints", checkpoints_parse, 1 },
		{ "rollback", rollback_parse, 2 }, { "snapshot", snapshot_parse, 2 },
		{ "restore", restore_parse, 2 }, { "fork", fork_parse, 2 },
	};
	struct verb_args a;

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		const char *v = verbs[i].verb;

		cr_assert_eq(PARSE(verbs[i].fn, &a, v, "--help"), 1, "%s --help", v);
		cr_assert_eq(PARSE(verbs[i].fn, &a, v, "box", "-h"), 1, "%s NAME -h", v);
		cr_assert_eq(PARSE(verbs[i].fn, &a, v, "--bogus", "box"), -1, "%s --bogus", v);
		cr_assert_eq(PARSE(verbs[i].fn, &a, v, "box", "-q"), -1, "%s -q", v);
		cr_assert_eq(PARSE(verbs[i].fn, &a, v, "a", "b", "c"), -1, "%s: 3 arguments", v);
		if (verbs[i].npos == 1) {
			cr_assert_eq(PARSE(verbs[i].fn, &a, v, "box"), 0, "%s NAME", v);
			cr_assert_str_eq(a.pos[0], "box");
			/* `--` ends the options: a NAME that looks like one is taken. */
			cr_assert_eq(PARSE(verbs[i].fn, &a, v, "--", "-box"), 0, "%s -- NAME", v);
			cr_assert_str_eq(a.pos[0], "-box");
		}
		if (verbs[i].npos == 2) {
			cr_assert_eq(PARSE(verbs[i].fn, &a, v, "box"), -1, "%s: one argument", v);
			cr_assert_eq(PARSE(verbs[i].fn, &a, v, "box", "t1"), 0, "%s A B", v);
			cr_assert_str_eq(a.pos[1], "t1");
		}
	}
}

/* As docker rm: several names, options anywhere among them (issue 26). */
Test(verb_args, rm_takes_one_or_more_names)
{
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	struct verb_args a;

	cr_assert_eq(PARSE(rm_parse, &a, "rm"), -1, "a NAME is required");
	cr_assert_eq(PARSE(rm_parse, &a, "rm", "--bogus", "box"), -1);
	cr_assert_eq(PARSE(rm_parse, &a, "rm", "box", "--help"), 1);
	cr_assert_eq(PARSE(rm_parse, &a, "rm", "box"), 0);
	cr_assert_eq(a.npos, 1);
	cr_assert_str_eq(a.all[0], "box");
	cr_assert_eq(PARSE(rm_parse, &a, "rm", "-f", "a", "b", "c", "d", "e"), 0);
	cr_assert(a.flag);
	cr_assert_eq(a.npos, 5);
	for (int i = 0; i < 5; i++)
		cr_assert_str_eq(a.all[i], names[i]);
	cr_assert_eq(PARSE(rm_parse, &a, "rm", "a", "-f", "b", "--", "-c"), 0);
	cr_assert(a.flag);
	cr_assert_eq(a.npos, 3);
	cr_assert_str_eq(a.all[1], "b");
	cr_assert_str_eq(a.all[2], "-c");
}

Test(verb_args, flags_before_or_after_name)
{
	struct verb_args a;

	cr_assert_eq(PARSE(logs_parse, &a, "logs", "-f", "box"), 0);
	cr_assert(a.flag);
	cr_assert_str_eq(a.pos[0], "box");
	cr_assert_eq(PARSE(logs_parse, &a, "logs", "box", "--follow"), 0);
	cr_assert(a.flag);
	cr_assert_eq(PARSE(logs_parse, &a, "logs", "box"), 0);
	cr_assert(!a.flag);
	cr_assert_eq(PARSE(rm_parse, &a, "rm", "box", "-f"), 0);
	cr_assert(a.flag);
	cr_assert_eq(PARSE(events_parse, &a, "events", "--json", "box"), 0);
	cr_assert(a.flag);
	cr_assert_eq(PARSE(checkpoints_parse, &a, "checkpoints", "box", "--json"), 0);
	cr_assert(a.flag);
	cr_assert_eq(PARSE(ls_parse, &a, "ls", "--json"), 0);
	cr_assert(a.flag && a.npos == 0);
	cr_assert_eq(PARSE(ls_parse, &a, "ls", "box"), -1);
	cr_assert_eq(PARSE(logs_parse, &a, "logs"), -1, "NAME is required");
}

Test(verb_args, checkpoint_tag_net_and_cp)
{
	struct verb_args a;
	struct cp_out out;

	cr_assert_eq(PARSE(checkpoint_parse, &a, "checkpoint", "box", "good-tag.1"), 0);
	cr_assert_eq(a.npos, 2);
	cr_assert_eq(PARSE(checkpoint_parse, &a, "checkpoint", "box", "bad/tag"), -1);
	cr_assert_eq(PARSE(net_parse, &a, "net", "show", "box"), 0);
	cr_assert_eq(PARSE(net_parse, &a, "net", "allow", "box", "x.test:443"), 0);
	cr_assert_str_eq(a.pos[2], "x.test:443");
	cr_assert_eq(PARSE(net_parse, &a, "net", "allow", "box"), -1, "a rule is needed");
	cr_assert_eq(PARSE(net_parse, &a, "net", "show", "box", "extra"), -1);
	cr_assert_eq(PARSE(net_parse, &a, "net", "frobnicate", "box", "x"), -1);
	cr_assert_eq(PARSE(net_parse, &a, "net", "--help"), 1);
	argv_of("cp", "box:/x", "out", "--max-size", "1G", NULL);
	cr_assert_eq(cp_parse(nargs, args, &a, &out), 0, "an option after the paths");
	cr_assert_eq(out.max, 1ull << 30);
	cr_assert_not(out.merge);
	cr_assert_str_eq(a.pos[1], "out");
	argv_of("cp", "--max-size", "lots", "box:/x", "out", NULL);
	cr_assert_eq(cp_parse(nargs, args, &a, &out), -1);
	argv_of("cp", "box:/x", "out", "--max-size", NULL);
	cr_assert_eq(cp_parse(nargs, args, &a, &out), -1, "a missing value");
	argv_of("cp", "--merge", "box:/x", "out", NULL);
	cr_assert_eq(cp_parse(nargs, args, &a, &out), 0);
	cr_assert(out.merge);
}

static struct exec_args ex;

#define exec_of(...) exec_parse((argv_of(__VA_ARGS__), nargs), args, &ex)

Test(verb_args, exec_options_before_name_and_never_runs_dashdash)
{
	/* The docker habit: options, NAME, --, CMD. */
	cr_assert_eq(exec_of("exec", "-i", "box", "--", "cat", NULL), 0);
	cr_assert_str_eq(ex.name, "box");
	cr_assert(ex.interactive);
	cr_assert_eq(ex.argc, 1);
	cr_assert_str_eq(ex.argv[0], "cat");
	/* Options on both sides of NAME, no --. */
	cr_assert_eq(exec_of("exec", "-e", "A=1", "box", "-w", "/tmp", "sh", "-c", "x", NULL), 0);
	cr_assert_str_eq(ex.name, "box");
	cr_assert_str_eq(ex.cwd, "/tmp");
	cr_assert_eq(ex.nenv, 1);
	cr_assert_eq(ex.argc, 3);
	cr_assert_str_eq(ex.argv[0], "sh");
	/* The command's own options stay its own. */
	cr_assert_eq(exec_of("exec", "box", "ls", "-l", NULL), 0);
	cr_assert_eq(ex.argc, 2);
	cr_assert(!ex.interactive);
	cr_assert_eq(exec_of("exec", "box", "-t", "--timeout", "5", "--", "ls", "-i", NULL), 0);
	cr_assert(ex.tty && !ex.interactive);
	cr_assert_eq(ex.timeout_s, 5);
	cr_assert_str_eq(ex.argv[1], "-i");
	/* `--` first, then NAME and CMD. */
	cr_assert_eq(exec_of("exec", "-i", "--", "box", "cat", NULL), 0);
	cr_assert_str_eq(ex.name, "box");
	cr_assert_str_eq(ex.argv[0], "cat");
	/* Never `--` as the command; missing parts; bad options. */
	cr_assert_eq(exec_of("exec", "box", "--", "--", "cat", NULL), -1);
	cr_assert_eq(exec_of("exec", "-i", "box", "--", NULL), -1);
	cr_assert_eq(exec_of("exec", "-i", "box", NULL), -1);
	cr_assert_eq(exec_of("exec", "--bogus", "box", "cat", NULL), -1);
	cr_assert_eq(exec_of("exec", "box", "-w", NULL), -1);
	cr_assert_eq(exec_of("exec", "-u", "root", "box", "id", NULL), -1);
	cr_assert_eq(exec_of("exec", "-h", NULL), 1);
	cr_assert_eq(exec_of("exec", "box", "--help", NULL), 1);
}
