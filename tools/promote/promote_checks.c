/* One promotion check through the guest agent (tools/promote/promote_checks.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "tools/sandbox/agent_client.h"
#include "tools/promote/promote_checks.h"

bool check_passed(const struct check_result *r)
{
	return r->ran && !r->timed_out && r->signal == 0 && r->exit_code == 0;
}

int promote_run_check(const char *name, const char *cmd, const char *cwd, char **env, int envc,
		      unsigned timeout_s, int log_fd, struct check_result *r)
{
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	struct ap_exec e = { .timeout_ms = timeout_s * 1000u, .cwd = (char *)cwd, .argc = 3,
			     .argv = argv, .envc = envc, .env = env };
	struct exec_io io = { .in_fd = -1, .out_fd = log_fd, .err_fd = log_fd };
	struct rlimit saved, cap;
	struct ap_exit x = { 0 };
	struct stat st;
	double t0 = mono_now_s();
	int fd, ret;

	r->cmd = cmd;
	fd = agent_connect(name, agent_wait_ms());
	if (fd < 0) {
		snprintf(r->err, sizeof(r->err), "cannot reach the agent: %s", strerror(-fd));
		return fd;
	}
	/*
	 * The guest decides how much it prints: a file-size limit makes log
	 * writes past CHECK_LOG_MAX fail (EFBIG, SIGXFSZ ignored), and the exec
	 * client then drops the rest while the check runs on.
	 */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &saved);
	cap = saved;
	cap.rlim_cur = saved.rlim_max == RLIM_INFINITY || saved.rlim_max > CHECK_LOG_MAX ?
		       CHECK_LOG_MAX : saved.rlim_max;
	setrlimit(RLIMIT_FSIZE, &cap);
	ret = agent_exec_run(fd, &e, &io, &x, r->err, sizeof(r->err));
	setrlimit(RLIMIT_FSIZE, &saved);
	close(fd);
	r->duration_s = mono_now_s() - t0;
	if (ret)
		return ret;
	r->ran = true;
	r->timed_out = x.timed_out;
	r->signal = x.kind == AP_SIGNALED ? (int)x.code : 0;
	r->exit_code = x.kind == AP_SIGNALED ? -1 : (int)x.code;
	r->truncated = !fstat(log_fd, &st) && (uint64_t)st.st_size >= CHECK_LOG_MAX;
	return 0;
}
