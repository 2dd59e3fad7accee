/*
 * The guest agent's SHUTDOWN (guest/agent/shutdown.c), on the real agent
 * binary in its host test mode (--unix): it answers OK, then keeps the
 * connection until the host has closed it, and only then comes to the
 * point where the guest resets. Before (issue 26) it reset right after
 * queueing its OK; in a guest the reset tears every vsock connection down,
 * and when it beat the vsock driver's send, `mvm stop` read end of file,
 * not OK, and stopped the VMM through its API. On that code this test
 * fails: the agent ends the connection after OK, so the host's write below
 * gets EPIPE.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/proto.h"

static pid_t agent = -1;
static char tmp_dir[] = "/tmp/mvm-agent-shutdown-XXXXXX", agent_sock[PATH_MAX];

/* Also after a failed assertion: no agent left behind. */
static void teardown(void)
{
	if (agent > 0) {
		kill(agent, SIGKILL);
		waitpid(agent, NULL, 0);
	}
	unlink(agent_sock);
	rmdir(tmp_dir);
}

TestSuite(agent_shutdown, .fini = teardown, .timeout = 60);

/* The agent beside this test binary (build/guest/), or, for make's
 * sanitizer tree (build/asan/unit-tests), the one a level up. */
static const char *agent_exe(void)
{
	static char exe[PATH_MAX];
	char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	cr_assert(n > 0);
	dir[n] = 0;
	snprintf(exe, sizeof(exe), "%s/guest/mvm-agent", dirname(dir));
	if (access(exe, X_OK))
		snprintf(exe, sizeof(exe), "%s/../guest/mvm-agent", dir);
	cr_assert_eq(access(exe, X_OK), 0, "no mvm-agent beside or above the tests (%s)", exe);
	return exe;
}

/* The agent listening on @sock, its stderr on *@err_rd. */
static pid_t start_agent(const char *sock, int *err_rd)
{
	const char *exe = agent_exe();
	int p[2];
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execl(exe, exe, "--unix", sock, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*err_rd = p[0];
	return pid;
}

/* Until the agent listens; the suite's timeout stops a test it never does. */
static int dial(const char *sock)
{
	const struct timespec pause_10ms = { 0, 10 * 1000000L };
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		cr_assert(fd >= 0);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		close(fd);
		nanosleep(&pause_10ms, NULL);
	}
}

Test(agent_shutdown, resets_only_after_the_host_closed)
{
	static uint8_t big[1 << 20];	/* more than a socket's buffers hold */
	char line[256];
	struct pollfd p;
	struct ap_hdr h;
	uint8_t buf[64];
	size_t off = 0;
	ssize_t n;
	int fd, err_rd;

	cr_assert_not_null(mkdtemp(tmp_dir));
	snprintf(agent_sock, sizeof(agent_sock), "%s/agent.sock", tmp_dir);
	agent = start_agent(agent_sock, &err_rd);
	fd = dial(agent_sock);

	cr_assert_eq(ap_write_frame(fd, AP_SHUTDOWN, NULL, 0), 0);
	cr_assert_eq(ap_read_frame(fd, &h, buf, sizeof(buf) - 1), 1);
	cr_assert_eq(h.type, AP_OK);

	/* The agent still serves the connection: it reads all of this. */
	while (off < sizeof(big)) {
		n = send(fd, big + off, sizeof(big) - off, MSG_NOSIGNAL);
		cr_assert(n > 0, "the agent dropped the connection after its OK: %s",
			  n < 0 ? strerror(errno) : "no progress");
		off += (size_t)n;
	}
	/* And has not reset: we have not closed yet. */
	p = (struct pollfd){ .fd = err_rd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 0), 0, "the agent reset before the host closed");

	close(fd);
	n = read(err_rd, line, sizeof(line) - 1);
	cr_assert(n > 0, "the agent never came to its reset");
	line[n] = 0;
	cr_assert_str_eq(line, "mvm-agent: reset now (the host closed)\n");
	close(err_rd);
}
