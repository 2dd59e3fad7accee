/*
 * One getopt_long loop for the verbs that take a few positional arguments
 * (NAME, TAG, DIR) and options: options may come before or after them,
 * `--` ends the options, `-h`/`--help` and unknown options behave the same
 * in every verb. Pure: parses only (unit-tested), prints only errors.
 */
#ifndef MVM_VERB_ARGS_H
#define MVM_VERB_ARGS_H

#include <getopt.h>
#include <stdbool.h>

#define VERB_MAX_OPTS 16
#define VERB_MAX_POS 3
#define VERB_ANY_POS (-1)

struct verb_spec {
	const char *verb;		/* for messages: "mvm VERB: ..." */
	const char *shortopts;		/* getopt letters without h (NULL: none) */
	const struct option *longopts;	/* may be NULL; {0}-terminated; --help is added */
	/* How many positional arguments: max_pos <= VERB_MAX_POS, or VERB_ANY_POS
	 * for a list of names (`mvm rm a b c`; all of them in verb_args.all). */
	int min_pos, max_pos;
	const char *synopsis;		/* "NAME [TAG]", for the usage error */
	/* Each option: 0, or -1 after printing why its value is bad. NULL:
	 * every option is the verb's one flag (-f, --json...). */
	int (*opt)(void *ctx, int c, char *arg);
};

/* What verb_parse found. */
struct verb_args {
	char *pos[VERB_MAX_POS];	/* the first VERB_MAX_POS of them */
	int npos;			/* how many in all */
	char **all;			/* every positional argument, in order (inside argv) */
	bool flag;			/* the verb's one flag, when spec->opt is NULL */
};

/*
 * Parse @argv (argv[0] is the verb) as @s says into @a; @ctx goes to
 * s->opt. Returns 0; 1 for --help; -1 after a usage error on stderr.
 */
int verb_parse(const struct verb_spec *s, void *ctx, int argc, char **argv, struct verb_args *a);

/* Whether the sandbox @name exists; false after saying so under @verb. */
bool verb_sandbox_ok(const char *verb, const char *name);

/* Whether the sandbox @name exists and its VMM runs; false after saying
 * which is not so under @verb. */
bool verb_sandbox_running(const char *verb, const char *name);

/* After verb_parse's @r (1 or -1): print @usage for --help; the exit status. */
int verb_parse_exit(int r, const char *usage);

#endif
