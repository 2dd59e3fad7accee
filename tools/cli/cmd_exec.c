/* `mvm exec [OPTIONS] NAME [OPTIONS] [--] CMD [ARGS...]`: run a command in a running sandbox. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/sandbox/agent_client.h"
#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/sandbox.h"

#define EXEC_TIMEOUT_STATUS 124		/* as timeout(1) */
#define EXEC_DETACH_STATUS 130		/* a second Ctrl-C: as a shell's 128 + SIGINT */

static const char exec_usage[] =
	"usage: mvm exec [OPTIONS] NAME [OPTIONS] [--] CMD [ARGS...]\n"
	"Run CMD in the running sandbox NAME; its stdout and stderr stream back\n"
	"separately. Several execs may run at once.\n"
	"\n"
	"  -i, --interactive   pass this process's stdin to CMD (else /dev/null)\n"
	"  -t, --tty           run CMD on a pseudo-terminal (stderr joins stdout)\n"
	"  -w, --workdir DIR   working directory (default /)\n"
	"  -e, --env K=V       environment variable; repeatable (after create's --env)\n"
	"  -u, --user UID      run as this numeric uid/gid (default 0)\n"
	"  --timeout SECS      kill CMD (and its process group) after SECS seconds\n"
	"  -h, --help          this text\n"
	"\n"
	"The environment is PATH, HOME, TERM, LANG plus what create --env and -e\n"
	"set: nothing from the host. Ctrl-C, SIGTERM and SIGHUP are forwarded to\n"
	"CMD; a second one detaches (mvm exits with 130 and the guest kills CMD).\n"
	"\n"
	"Exit status: CMD's; 128+N if it died of signal N; 124 if --timeout killed\n"
	"it; 130 if detached; 125 if mvm failed (no such sandbox, agent unreachable).\n";

struct exec_opts {
	struct ap_exec e;
	char *env[SB_MAX_ENV + EXEC_MAX_ENV + 1];
};

static int parse_opt(void *ctx, int c, char *arg)
{
	struct exec_args *a = ctx;
	long v;

	switch (c) {
	case 'i': a->interactive = true; return 0;
	case 't': a->tty = true; return 0;
	case 'w': a->cwd = arg; return 0;
	case 'e':
		if (!strchr(arg, '=') || arg[0] == '=' || a->nenv == EXEC_MAX_ENV) {
			cli_err("exec", "--env: expected K=V, got '%s'", arg);
			return -1;
		}
		a->env[a->nenv++] = arg;
		return 0;
	case 'u':
		if (cli_parse_int(arg, 0, 65535, &v)) {
			cli_err("exec", "--user: '%s' is not a numeric uid", arg);
			return -1;
		}
		a->uid = (uint32_t)v;
		return 0;
	case 'T':
		if (cli_parse_int(arg, 1, 4000000, &a->timeout_s)) {
			cli_err("exec", "--timeout: '%s' is not a number of seconds", arg);
			return -1;
		}
		return 0;
	}
	return -1;
}

/*
 * NAME, then the command: options may come before NAME (`mvm exec -i NAME
 * -- CMD`, as docker teaches) or after it; `--` ends them and is never the
 * command. getopt's '+' stops at NAME, so parsing goes on after it; the
 * first word after NAME that is not an option starts the command (its own
 * options stay its own).
 */
int exec_parse(int argc, char **argv, struct exec_args *a)
{
	static const struct option opts[] = {
		{ "interactive", no_argument, NULL, 'i' }, { "tty", no_argument, NULL, 't' },
		{ "workdir", required_argument, NULL, 'w' }, { "env", required_argument, NULL, 'e' },
		{ "user", required_argument, NULL, 'u' }, { "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	int ch;
	bool dashdash = false;

	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	for (;;) {
		while ((ch = getopt_long(argc, argv, "+:itw:e:u:h", opts, NULL)) != -1) {
			if (ch == 'h')
				return 1;
			if (ch == '?' || ch == ':') {
				cli_err("exec", "%s option '%s' (see mvm exec --help)",
					ch == ':' ? "no value for" : "unknown", argv[optind - 1]);
				return -1;
			}
			if (parse_opt(a, ch, optarg))
				return -1;
		}
		dashdash = optind > 1 && !strcmp(argv[optind - 1], "--");
		if (a->name || optind >= argc)
			break;
		a->name = argv[optind++];	/* then options again, up to CMD or -- */
		if (dashdash)
			break;			/* `mvm exec -i -- NAME CMD`: no more options */
	}
	if (!a->name || optind >= argc) {
		cli_err("exec", "expected NAME and a command (mvm exec [OPTIONS] NAME [--] CMD [ARGS...])");
		return -1;
	}
	if (!strcmp(argv[optind], "--")) {
		cli_err("exec", "refusing to run a command named '--' (one '--' ends the options)");
		return -1;
	}
	a->argv = &argv[optind];
	a->argc = argc - optind;
	return 0;
}

/* create's --env first, minus what -e overrides (getenv takes the first match). */
static void merge_env(struct exec_opts *o, const struct sb_config *c, char **cli_env, int ncli)
{
	int n = 0;

	for (int i = 0; i < c->nenv; i++) {
		size_t klen = strcspn(c->env[i], "=") + 1;
		bool overridden = false;

		for (int j = 0; j < ncli; j++)
			overridden |= !strncmp(cli_env[j], c->env[i], klen);
		if (!overridden)
			o->env[n++] = c->env[i];
	}
	for (int j = 0; j < ncli; j++)
		o->env[n++] = cli_env[j];
	o->env[n] = NULL;
	o->e.env = o->env;
	o->e.envc = n;
}

static int status_of(const struct ap_exit *x, long timeout_s)
{
	if (x->timed_out) {
		cli_err("exec", "command timed out after %ld s and was killed", timeout_s);
		return EXEC_TIMEOUT_STATUS;
	}
	return x->kind == AP_SIGNALED ? 128 + (int)x->code : (int)x->code;
}

static int run(const char *name, struct exec_opts *o, const struct exec_args *a)
{
	struct exec_io io = { .in_fd = a->interactive ? STDIN_FILENO : -1,
			      .out_fd = STDOUT_FILENO, .err_fd = STDERR_FILENO,
			      .tty = a->tty && isatty(STDIN_FILENO) };
	struct ap_exit x = { 0 };
	char err[1024] = "";
	int ret = agent_exec_named(name, &o->e, &io, &x, err, sizeof(err));

	if (ret == -EINTR) {
		cli_err("exec", "%s", err);
		return EXEC_DETACH_STATUS;
	}
	if (ret) {
		cli_err("exec", "%s", err[0] ? err : strerror(-ret));
		return MVM_EXIT_ERROR;
	}
	return status_of(&x, a->timeout_s);
}

int cmd_exec(int argc, char **argv)
{
	struct exec_opts *o = calloc(1, sizeof(*o));
	struct exec_args *a = calloc(1, sizeof(*a));
	struct sb_config c;
	int ret = MVM_EXIT_ERROR;

	if (!o || !a)
		goto out;
	ret = exec_parse(argc, argv, a);
	if (ret) {
		ret = verb_parse_exit(ret, exec_usage);
		goto out;
	}
	ret = MVM_EXIT_ERROR;
	if (!sb_name_ok(a->name) || sb_config_load(a->name, &c)) {
		cli_err("exec", "no sandbox named %s", a->name);
		goto out;
	}
	if (sb_vmm_pid(a->name) <= 0) {
		cli_err("exec", "sandbox %s is not running (mvm start %s)", a->name, a->name);
		sb_config_free(&c);
		goto out;
	}
	o->e.argv = a->argv;
	o->e.argc = a->argc;
	o->e.cwd = (char *)(a->cwd ? a->cwd : "");
	o->e.uid = a->uid;
	o->e.flags = (a->interactive ? AP_EXEC_STDIN : 0) | (a->tty ? AP_EXEC_PTY : 0);
	o->e.timeout_ms = (uint32_t)(a->timeout_s * 1000);
	merge_env(o, &c, a->env, a->nenv);
	ret = run(a->name, o, a);
	sb_config_free(&c);
out:
	free(a);
	free(o);
	return ret;
}
