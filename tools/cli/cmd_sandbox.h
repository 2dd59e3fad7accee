/* The sandbox verbs (one file each: tools/cmd_NAME.c). */
#ifndef MVM_CMD_SANDBOX_H
#define MVM_CMD_SANDBOX_H

struct verb_args;
int cmd_create(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_cp(int argc, char **argv);
int cmd_ls(int argc, char **argv);
/* `mvm inspect NAME [--json]` (tools/cli/cmd_inspect.c). */
int cmd_inspect(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_net(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_vmm(int argc, char **argv);	/* internal: the daemon */
int cmd_relay(int argc, char **argv);	/* internal: the browser relay */
/* `mvm browser NAME` (cmd_browser.c), `mvm screenshot NAME FILE` (cmd_screenshot.c). */
int cmd_browser(int argc, char **argv);
int cmd_screenshot(int argc, char **argv);
/* `mvm gc [--dry-run]` (cmd_gc.c): remove the sandboxes whose VMM is gone. */
int cmd_gc(int argc, char **argv);
int gc_parse(int argc, char **argv, struct verb_args *a);	/* --dry-run */

/* After create/start of NAME: on stderr, once, that it has no cgroup of its
 * own and is charged to its caller's, and why (cmd_start.c). */
void cli_say_placement(const char *verb, const char *name);

/* Argument parsers of the verbs (tools/cli/verb_args.h): 0, 1 for --help,
 * -1 after a usage error. They run nothing. */
#include <stdbool.h>
#include <stdint.h>

struct verb_args;
int logs_parse(int argc, char **argv, struct verb_args *a);	/* -f: follow */
int events_parse(int argc, char **argv, struct verb_args *a);	/* --json */
int rm_parse(int argc, char **argv, struct verb_args *a);	/* -f: force */
int ls_parse(int argc, char **argv, struct verb_args *a);	/* --json */
int start_parse(int argc, char **argv, struct verb_args *a);
int stop_parse(int argc, char **argv, struct verb_args *a);
struct cp_out;
int cp_parse(int argc, char **argv, struct verb_args *a, struct cp_out *out);	/* SRC DST */
int screenshot_parse(int argc, char **argv, struct verb_args *a);	/* NAME FILE */
struct browser_opts {
	bool json, headless;
};
int browser_parse(int argc, char **argv, struct verb_args *a, struct browser_opts *o);
int net_parse(int argc, char **argv, struct verb_args *a);	/* VERB NAME [RULE|DEST] */

#define EXEC_MAX_ENV 256
struct exec_args {
	const char *name;
	bool interactive, tty;
	const char *cwd;		/* NULL: / */
	uint32_t uid;
	long timeout_s;			/* 0: none */
	char *env[EXEC_MAX_ENV];	/* -e K=V */
	int nenv;
	char **argv;			/* the command, in the caller's argv */
	int argc;
};
int exec_parse(int argc, char **argv, struct exec_args *a);

/* `mvm serve` (cmd_serve.c): the server's options, or a token subcommand in @pos. */
#include "tools/serve/serve.h"
struct serve_args {
	struct sv_opts o;
	struct sv_quota q;		/* token add's quota */
	char *pos[3];			/* "token" "add|ls|rm" [TENANT] */
	int npos;
};
int serve_parse(int argc, char **argv, struct serve_args *a);

#endif
