/*
 * Children for the MCP tools (tools/mcp/mcp_spawn.h). The server's stdout
 * is the protocol channel, so a child's stdout goes to a pipe, never there.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/mcp/mcp_spawn.h"
#include "tools/sandbox/sandbox.h"

#define PROGRESS_MS 2000

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * In the child of fork(): async-signal-safe calls only (mvm serve forks
 * from one of many threads). The descriptor an --env-fd N names is the one
 * this child inherits; every other one of the parent's is close-on-exec.
 */
static void child(char *const argv[], int out, int err)
{
	int null = open("/dev/null", O_RDONLY);
	sigset_t none;

	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	for (int i = 1; argv[i] && argv[i + 1]; i++) {
		if (strcmp(argv[i], "--env-fd"))
			continue;
		if (fcntl((int)strtol(argv[i + 1], NULL, 10), F_SETFD, 0) < 0)
			_exit(127);
	}
	/* A server thread's blocked signals must not reach mvm and its VMM. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execv(sb_self_exe(), argv);
	_exit(127);
}

/* Drain one pipe into @b; false at its end. */
static bool drain(int fd, struct mcp_buf *b)
{
	char buf[16384];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	mcp_buf_add(b, buf, (size_t)n);
	return true;
}

static void pump(struct mcp_call *c, const char *verb, int fds[2], struct mcp_buf *bufs[2])
{
	double start = now_s(), last = start;
	char msg[128];

	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd p[2] = { { .fd = fds[0], .events = POLLIN }, { .fd = fds[1], .events = POLLIN } };

		if (poll(p, 2, PROGRESS_MS) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++)
			if (p[i].revents && !drain(fds[i], bufs[i])) {
				close(fds[i]);
				fds[i] = -1;
			}
		if (now_s() - last >= PROGRESS_MS / 1000.0) {
			last = now_s();
			snprintf(msg, sizeof(msg), "mvm %s: running for %.0f s", verb, last - start);
			mcp_progress(c, msg);
		}
	}
}

int mcp_spawn(struct mcp_call *c, char *const argv[], struct mcp_buf *out, struct mcp_buf *err)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st;
	struct mcp_buf *bufs[2] = { out, err };
	pid_t pid;

	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		st = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		st = -errno;
		goto fail;
	}
	if (pid == 0)
		child(argv, po[1], pe[1]);
	close(po[1]);
	close(pe[1]);
	pump(c, argv[1], (int[2]){ po[0], pe[0] }, bufs);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
fail:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	return st;
}
