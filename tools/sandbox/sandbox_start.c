/* Starting a sandbox's VMM as a daemon, and stopping it. */
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

#include "common/cli_util.h"
#include "common/start_trace.h"
#include "common/mono_time.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/api_client.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"

/* Alive and not a zombie (a daemon's zombie lingers until its reaper runs). */
static bool pid_alive(pid_t pid)
{
	char p[64], buf[256], *rp;
	int fd;
	ssize_t n;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	rp = strrchr(buf, ')');
	return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/* The grandchild: detached from our session, output to console.log, the
 * write end of the readiness pipe as VMM_READY_FD. */
static void daemon_child(const char *name, const char *self_exe, int report_fd, int ready_fd)
{
	char log[PATH_MAX], fdarg[16];
	pid_t pid;
	int fd;

	setsid();
	pid = fork();
	if (pid != 0) {
		(void)!write(report_fd, &pid, sizeof(pid));
		_exit(pid < 0);
	}
	/* Out of 0-2's way first (a CLI started with one closed has it there). */
	ready_fd = fcntl(ready_fd, F_DUPFD_CLOEXEC, VMM_READY_FD + 1);
	if (ready_fd < 0 || sb_path(name, "console.log", log, sizeof(log)))
		_exit(125);
	fd = open("/dev/null", O_RDONLY);
	dup2(fd, 0);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
	dup2(fd, 1);
	dup2(fd, 2);
	if (dup2(ready_fd, VMM_READY_FD) < 0)	/* without O_CLOEXEC: the VMM keeps it */
		_exit(125);
	close_range(VMM_READY_FD + 1, ~0U, 0);	/* one call, not a thousand: this is on every start */
	snprintf(fdarg, sizeof(fdarg), "%d", VMM_READY_FD);
	execl(self_exe, "mvm", "vmm", name, "--ready-fd", fdarg, (char *)NULL);
	dprintf(2, "mvm vmm: cannot run %s: %s\n", self_exe, strerror(errno));
	_exit(127);
}

/* Last line of console.log that says why a VMM gave up. */
static void log_reason(const char *name, char *err, size_t errlen)
{
	char p[PATH_MAX], buf[4096], *line, *last = NULL;
	int fd;
	ssize_t n;

	if (sb_path(name, "console.log", p, sizeof(p)) || (fd = open(p, O_RDONLY)) < 0)
		return;
	n = pread(fd, buf, sizeof(buf) - 1, lseek(fd, 0, SEEK_END) > (off_t)sizeof(buf) - 1 ?
		  lseek(fd, 0, SEEK_END) - (off_t)sizeof(buf) + 1 : 0);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (strstr(line, "mvm vmm:"))
			last = line;
	if (last)
		snprintf(err, errlen, "%s", last);
}

/* Why the VMM @vmm ended during its start, into @err. */
static void ended_reason(const char *name, char *err, size_t errlen)
{
	if (!sb_cgroup_oom_message(name, "during boot", err, errlen))
		snprintf(err, errlen, "the VMM exited during boot and left no reason in "
			 "its log: killed from outside? (see mvm logs %s)", name);
	log_reason(name, err, errlen);
}

/* The VMM's one byte on the readiness pipe: it serves (sockets listening, the
 * guest about to run). 0, -ECHILD (it ended: the pipe's end closed first) or
 * -ETIMEDOUT. An event, not a poll: no sleep between tries. */
static int wait_serving(int fd, double deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b;

	for (;;) {
		double left = deadline - mono_now_s();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r > 0)
			return read(fd, &b, 1) == 1 ? 0 : -ECHILD;
	}
}

/* Fork the daemon; its pid (the process sb_stop and the pid file know) or -errno. */
static pid_t launch(const char *name, const char *self_exe, int ready_fd)
{
	int pfd[2];
	pid_t child, vmm = 0;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	start_trace("start: fork");
	child = fork();
	if (child == 0)
		daemon_child(name, self_exe, pfd[1], ready_fd);
	close(pfd[1]);
	if (child < 0 || read(pfd[0], &vmm, sizeof(vmm)) != sizeof(vmm) || vmm <= 0)
		vmm = -ECHILD;
	close(pfd[0]);
	if (child > 0)
		waitpid(child, NULL, 0);
	start_trace("start: vmm pid read");
	return vmm;
}

/* Booted means: the agent answers a ping through vsock. */
static int wait_agent(const char *name, pid_t vmm, double deadline, char *err, size_t errlen)
{
	for (int wait_ms = 2; mono_now_s() < deadline; wait_ms = wait_ms < 100 ? wait_ms * 2 : 100) {
		if (!pid_alive(vmm)) {
			ended_reason(name, err, errlen);
			return -ECHILD;
		}
		if (agent_ping(name, 2000) == 0) {
			start_trace("start: agent answered");
			return 0;
		}
		sleep_ms(wait_ms);
	}
	return -ETIMEDOUT;
}

static int start(const char *name, const char *self_exe, int timeout_s, bool ping, char *err,
		 size_t errlen)
{
	double deadline = mono_now_s() + timeout_s;
	int ready[2], ret;
	char p[PATH_MAX];
	pid_t vmm;

	if (sb_vmm_pid(name) > 0) {
		snprintf(err, errlen, "sandbox %s is already running", name);
		return -EALREADY;
	}
	if (!sb_path(name, "pid", p, sizeof(p)))
		unlink(p);	/* a crashed VMM's leftovers */
	if (pipe2(ready, O_CLOEXEC))
		return -errno;
	vmm = launch(name, self_exe, ready[1]);
	close(ready[1]);
	if (vmm < 0) {
		close(ready[0]);
		snprintf(err, errlen, "cannot start the VMM process");
		return (int)vmm;
	}
	ret = wait_serving(ready[0], deadline);
	close(ready[0]);
	start_trace("start: serving");
	if (ret == -ECHILD)
		ended_reason(name, err, errlen);
	else if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "the VMM was not ready within %d s (see mvm logs %s)",
			 timeout_s, name);
	else if (!ret && ping && (ret = wait_agent(name, vmm, deadline, err, errlen)) == -ETIMEDOUT)
		snprintf(err, errlen, "the guest agent did not answer within %d s (see mvm logs %s)",
			 timeout_s, name);
	else if (ret && ret != -ECHILD && ret != -ETIMEDOUT)
		snprintf(err, errlen, "waiting for the VMM: %s", strerror(-ret));
	return ret;
}

int sb_start(const char *name, const char *self_exe, int timeout_s, char *err, size_t errlen)
{
	return start(name, self_exe, timeout_s, true, err, errlen);
}

int sb_start_serving(const char *name, const char *self_exe, int timeout_s, char *err,
		     size_t errlen)
{
	return start(name, self_exe, timeout_s, false, err, errlen);
}

static bool wait_gone(pid_t pid, double secs)
{
	double deadline = mono_now_s() + secs;

	while (mono_now_s() < deadline) {
		if (!pid_alive(pid))
			return true;
		sleep_ms(50);
	}
	return false;
}

int sb_stop(const char *name, int timeout_s)
{
	pid_t pid = sb_vmm_pid(name);
	char err[256], p[PATH_MAX];
	int ret;

	relay_stop(name);	/* it would exit with the VMM anyway; not a moment later */

	if (pid <= 0) {
		if (pid < 0 && !sb_path(name, "pid", p, sizeof(p)))
			unlink(p);	/* crashed: nothing runs, forget it */
		sb_cgroup_remove(name);
		return 0;
	}
	/* Clean: the guest syncs its disks and resets; the VMM then exits.
	 * Said first, so that the "stopped" event after it reads as asked
	 * for: a reset with no "stopping" before it is the guest's own
	 * (a reboot inside it, or a crash), which tests and users must not
	 * take for a stop (issue 26). */
	sb_event(name, "stopping");
	/* A paused guest cannot sync or answer: resumed, it stops cleanly
	 * instead of waiting out the budget below. */
	if (!api_status(name, err, sizeof(err)) && !strcmp(err, "paused"))
		(void)api_simple(name, "resume", err, sizeof(err));
	start_trace("stop: asking the agent");
	/* The agent answers after the guest's sync, which after heavy writes
	 * takes seconds: the caller's whole budget, not a fixed 5 s, or the
	 * API shutdown below cuts a sync that was going to finish. */
	ret = agent_shutdown(name, timeout_s * 1000);
	start_trace(ret ? "stop: the agent did not answer" : "stop: the agent answered");
	if (!ret && wait_gone(pid, timeout_s)) {
		start_trace("stop: the VMM is gone");
		sb_cgroup_remove(name);
		return 0;
	}
	/* Said, not silent: the guest did not sync its disks itself. */
	cli_err("stop", "%s: the guest did not shut down cleanly (%s); stopping its VMM", name,
		ret ? strerror(-ret) : "no reset after the agent's answer");
	if (api_simple(name, "shutdown", err, sizeof(err)) == 0 && wait_gone(pid, 10)) {
		sb_cgroup_remove(name);
		return 0;
	}
	kill(pid, SIGKILL);
	if (!wait_gone(pid, 10))
		return -ETIMEDOUT;
	sb_vmm_pid(name);	/* removes the stale sockets */
	if (!sb_path(name, "pid", p, sizeof(p)))
		unlink(p);
	sb_cgroup_remove(name);
	sb_event(name, "killed");
	return 0;
}
