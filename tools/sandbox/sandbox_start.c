/* Starting a sandbox's VMM as a daemon, and stopping it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* The grandchild: detached from our session, output to console.log. */
static void daemon_child(const char *name, const char *self_exe, int report_fd)
{
	char log[PATH_MAX];
	pid_t pid;
	int fd;

	setsid();
	pid = fork();
	if (pid != 0) {
		(void)!write(report_fd, &pid, sizeof(pid));
		_exit(pid < 0);
	}
	if (sb_path(name, "console.log", log, sizeof(log)))
		_exit(125);
	fd = open("/dev/null", O_RDONLY);
	dup2(fd, 0);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
	dup2(fd, 1);
	dup2(fd, 2);
	close_range(3, ~0U, 0);	/* one call, not a thousand: this is on every start */
	execl(self_exe, "mvm", "vmm", name, (char *)NULL);
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

int sb_start(const char *name, const char *self_exe, int timeout_s, char *err, size_t errlen)
{
	int pfd[2];
	pid_t child, vmm = 0;
	double deadline = mono_now_s() + timeout_s;
	char p[PATH_MAX];

	if (sb_vmm_pid(name) > 0) {
		snprintf(err, errlen, "sandbox %s is already running", name);
		return -EALREADY;
	}
	if (!sb_path(name, "pid", p, sizeof(p)))
		unlink(p);	/* a crashed VMM's leftovers */
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child == 0)
		daemon_child(name, self_exe, pfd[1]);
	close(pfd[1]);
	if (child < 0 || read(pfd[0], &vmm, sizeof(vmm)) != sizeof(vmm) || vmm <= 0) {
		close(pfd[0]);
		snprintf(err, errlen, "cannot start the VMM process");
		return -ECHILD;
	}
	close(pfd[0]);
	waitpid(child, NULL, 0);
	/* Booted means: the agent answers a ping through vsock. A template's
	 * VMM answers within milliseconds: poll fast at first, then back off. */
	for (int wait_ms = 2; mono_now_s() < deadline; wait_ms = wait_ms < 100 ? wait_ms * 2 : 100) {
		if (!pid_alive(vmm)) {
			if (sb_cgroup_oom_killed(name))
				snprintf(err, errlen, "the kernel's OOM killer ended the VMM during boot: "
					 "its cgroup's memory.max (guest RAM + %llu MiB) was reached",
					 SB_CGROUP_OVERHEAD >> 20);
			else
				snprintf(err, errlen, "the VMM exited during boot and left no reason in "
					 "its log: killed from outside? (see mvm logs %s)", name);
			log_reason(name, err, errlen);
			return -ECHILD;
		}
		if (agent_ping(name, 2000) == 0)
			return 0;
		sleep_ms(wait_ms);
	}
	snprintf(err, errlen, "the guest agent did not answer within %d s (see mvm logs %s)",
		 timeout_s, name);
	return -ETIMEDOUT;
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

	relay_stop(name);	/* it would exit with the VMM anyway; not a moment later */

	if (pid <= 0) {
		if (pid < 0 && !sb_path(name, "pid", p, sizeof(p)))
			unlink(p);	/* crashed: nothing runs, forget it */
		sb_cgroup_remove(name);
		return 0;
	}
	/* Clean: the guest syncs its disks and resets; the VMM then exits. */
	if ((agent_shutdown(name, 5000) == 0 && wait_gone(pid, timeout_s)) ||
	    (api_simple(name, "shutdown", err, sizeof(err)) == 0 && wait_gone(pid, 10))) {
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
