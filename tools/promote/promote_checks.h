/* `mvm promote --check CMD`: one check run in the sandbox through the agent, its output to a log. */
#ifndef MVM_PROMOTE_CHECKS_H
#define MVM_PROMOTE_CHECKS_H

#include <stdbool.h>
#include <stdint.h>

#define CHECK_LOG_MAX (16ull << 20)	/* a log stops growing here (the check runs on) */

struct check_result {
	const char *cmd;
	bool ran;			/* false: mvm could not run it (err says why) */
	int exit_code;			/* -1 if killed by a signal */
	int signal;			/* 0 if it exited */
	bool timed_out;
	bool truncated;			/* the log reached CHECK_LOG_MAX */
	double duration_s;
	char log[32];			/* relative to the bundle: checks/N.log */
	char err[256];
};

/*
 * Run `sh -c @cmd` in sandbox @name, in @cwd, with create's --env @env,
 * killed after @timeout_s (0: never); stdout and stderr both to @log_fd.
 * 0 with @r filled (whatever the check's status), or -errno with r->err.
 */
int promote_run_check(const char *name, const char *cmd, const char *cwd, char **env, int envc,
		      unsigned timeout_s, int log_fd, struct check_result *r);
/* Passed: ran, exited 0, not timed out. */
bool check_passed(const struct check_result *r);

#endif
