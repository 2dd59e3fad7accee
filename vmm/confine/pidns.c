/*
 * The VMM's PID namespace (confine/pidns.h).
 *
 * Why a fork, and a parent that stays: unshare(CLONE_NEWPID) puts only the
 * caller's later children in the new namespace, and a VM belongs to the
 * process that created it (KVM refuses another mm), so the VMM must be born
 * in the namespace, before it opens /dev/kvm. Its parent stays in the host's
 * namespace as the process that sb_start and mvm run watch and wait for; it
 * holds nothing (no guest memory, no KVM descriptor, no socket) and does
 * nothing but wait. The pid file, inspect, ls, the relay's pidfd and `mvm
 * stop` use the VMM's own pid as the host sees it (confine_pidns_self()).
 *
 * Why a /proc of the namespace's own, mounted before anything else: the
 * network helper starts later, in this mount namespace; with the host's
 * /proc it could still list every host process. The host's /proc stays
 * open (a descriptor) only until the VMM has read its own and its helper's
 * host pids, for the reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "vmm/confine/caps.h"
#include "vmm/confine/pidns.h"
#include "vmm/confine/seccomp_filter.h"

static int in_force;
static pid_t host_self;
static int host_proc = -1;

int confine_pidns_flags(void)
{
	return in_force;
}

pid_t confine_pidns_self(void)
{
	return host_self > 0 ? host_self : getpid();
}

pid_t confine_fdinfo_pid(const char *text)
{
	const char *p = text;
	char *end;
	long v;

	while (p && strncmp(p, "Pid:", 4))
		p = (p = strchr(p, '\n')) ? p + 1 : NULL;
	if (!p)
		return -1;
	v = strtol(p + 4, &end, 10);
	return end != p + 4 && (*end == '\n' || !*end) && v > 0 ? (pid_t)v : -1;
}

pid_t confine_pidns_host_pid(pid_t local)
{
	char path[64], buf[512];
	int pfd, fd;
	ssize_t n;
	pid_t host;

	if (host_proc < 0 || local <= 0)
		return local;
	pfd = (int)syscall(SYS_pidfd_open, local, 0);
	if (pfd < 0)
		return local;
	/* The host's /proc names the pidfd's process by the host's pid. */
	snprintf(path, sizeof(path), "self/fdinfo/%d", pfd);
	fd = openat(host_proc, path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
	close(pfd);
	host = confine_fdinfo_pid(buf);
	return host > 0 ? host : local;
}

void confine_pidns_seal(void)
{
	if (host_proc >= 0)
		close(host_proc);
	host_proc = -1;
}

/*
 * The keeper confines itself: no capability (it holds all of the new user
 * namespace's), and its own seccomp filter (confine/seccomp_keeper.c:
 * waiting and ending). It may not change a signal's disposition once
 * filtered, so it notes now in @dfl which signals would end it as they
 * ended the VMM (those at SIG_DFL; SIGSYS is the filter's handler).
 */
static void keeper_confine(sigset_t *dfl)
{
	struct sigaction sa;
	int ret;

	sigemptyset(dfl);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGSYS && !sigaction(sig, NULL, &sa) && sa.sa_handler == SIG_DFL &&
		    !(sa.sa_flags & SA_SIGINFO))
			sigaddset(dfl, sig);
	ret = confine_caps_drop();
	if (ret)
		log_warn("the PID namespace's keeper keeps capabilities: %s", strerror(-ret));
	confine_seccomp_report_as("mvm vmm: seccomp: the PID namespace's keeper");
	ret = confine_seccomp_thread(&sc_table_keeper);
	if (ret)
		log_warn("the PID namespace's keeper: seccomp: %s", strerror(-ret));
}

/* The keeper's end: exit_group itself, as its filter allows (a sanitizer's
 * _exit would first take down its signal stack: sigaltstack). */
_Noreturn static void keeper_exit(int status)
{
	for (;;)
		syscall(SYS_exit_group, status);
}

/* The parent: the child's life, mirrored; never returns. */
_Noreturn static void wait_child(pid_t child)
{
	sigset_t dfl;
	int st = 0;

	keeper_confine(&dfl);
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st)) {
		if (sigismember(&dfl, WTERMSIG(st)))
			raise(WTERMSIG(st));
		keeper_exit(128 + WTERMSIG(st));
	}
	keeper_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

/* As pid 1 of its namespace the kernel spares us the signals we have no
 * handler for: `kill PID` (TERM, INT, HUP, QUIT) would do nothing. End as
 * any process would (the exit status says which signal). */
static void on_end(int sig)
{
	_exit(128 + sig);
}

static void end_on_request(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_end };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Our own pid as the host's /proc says it ("self" is a link to it). */
static pid_t read_host_self(void)
{
	char buf[32];
	ssize_t n = readlinkat(host_proc, "self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return (pid_t)atoi(buf);
}

/* The child, pid 1: dies with the parent (which may already be gone: the
 * pipe's only writer), keeps the host's /proc, mounts its own. */
static int child_setup(int alive_fd)
{
	struct pollfd p = { .fd = alive_fd, .events = POLLIN };

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
		_exit(125);
	close(alive_fd);
	end_on_request();
	host_proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	host_self = host_proc >= 0 ? read_host_self() : 0;
	in_force = CONFINE_NS_USER | CONFINE_NS_PID;
	if (unshare(CLONE_NEWNS | CLONE_NEWIPC)) {
		log_warn("mount and IPC namespaces: %s: the host's /proc stays in sight",
			 strerror(errno));
		return in_force;
	}
	in_force |= CONFINE_NS_MOUNT | CONFINE_NS_IPC;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		log_warn("/proc of the PID namespace: %s: the host's /proc stays in sight",
			 strerror(errno));
	return in_force;
}

int confine_pidns_enter(void)
{
	int alive[2], ret, err;
	pid_t child;

	ret = confine_userns(CLONE_NEWPID);
	if (ret > 0)
		return 0;	/* not allowed: the VMM runs as before */
	if (ret < 0 || pipe2(alive, O_CLOEXEC))
		return ret < 0 ? ret : -errno;
	child = fork();
	if (child < 0) {
		ret = -errno;
		close(alive[0]);
		close(alive[1]);
		return ret;
	}
	if (child == 0) {
		close(alive[1]);
		ret = child_setup(alive[0]);
		/* Nothing can be gained from here on (an exec: the network
		 * helper); the effective set stays for the namespaces and
		 * mounts still to make, and goes at confinement. */
		if ((err = confine_caps_bound()))
			log_warn("capabilities: %s: the bounding set stays", strerror(-err));
		return ret;
	}
	close(alive[0]);	/* alive[1] stays open as long as we live */
	wait_child(child);
}
