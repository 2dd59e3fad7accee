/*
 * The host end of `mvm exec` against a fake agent on a socketpair: signals
 * are forwarded once and detach the second time, the send queue never
 * overflows however many signals arrive while the agent reads nothing, and
 * a one-shot request to an agent that stalls mid-frame returns by its deadline.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "tools/sandbox/agent_client.h"

static int sv[2];

static void setup(void)
{
	sigset_t set;

	/* Blocked before any fake agent can signal us, as agent_exec_run() does itself. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

TestSuite(exec_client, .init = setup, .timeout = 30);

static const char *argv_true[] = { "true", NULL };

static int run_client(int in_fd, struct ap_exit *x, char *err, size_t cap)
{
	struct ap_exec e = { .argc = 1, .argv = (char **)argv_true, .cwd = "" };
	struct exec_io io = { .in_fd = in_fd, .out_fd = -1, .err_fd = -1 };

	e.flags = in_fd >= 0 ? AP_EXEC_STDIN : 0;
	close(sv[1]);
	return agent_exec_run(sv[0], &e, &io, x, err, cap);
}

/* In the fake agent: read frames until one of @type; its u32 payload, or -1 at EOF. */
static long agent_wait(int fd, uint16_t type)
{
	static uint8_t buf[AP_MAX_PAYLOAD + 1];
	struct ap_hdr h;

	while (ap_read_frame(fd, &h, buf, AP_MAX_PAYLOAD) == 1)
		if (h.type == type)
			return h.len >= 4 ? (long)(buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24) : 0;
	return -1;
}

static pid_t fake_agent(void (*body)(int fd))
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		body(sv[1]);
		_exit(0);
	}
	return pid;
}

static void forwards(int fd)
{
	struct ap_exit x = { .kind = AP_SIGNALED, .code = 0 };
	uint8_t b[16];

	agent_wait(fd, AP_EXEC);
	kill(getppid(), SIGINT);
	x.code = (uint32_t)agent_wait(fd, AP_KILL);
	ap_write_frame(fd, AP_EXIT, b, (size_t)ap_exit_encode(&x, b, sizeof(b)));
	agent_wait(fd, 0xffff);		/* until the client hangs up */
}

Test(exec_client, first_interrupt_is_forwarded_to_the_command)
{
	struct ap_exit x = { 0 };
	char err[256] = "";
	pid_t pid = fake_agent(forwards);

	cr_assert_eq(run_client(-1, &x, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(x.kind, AP_SIGNALED);
	cr_assert_eq(x.code, SIGINT);
	close(sv[0]);
	waitpid(pid, NULL, 0);
}

/* A command that ignores SIGINT: the second Ctrl-C detaches. */
static void ignores(int fd)
{
	agent_wait(fd, AP_EXEC);
	kill(getppid(), SIGINT);
	if (agent_wait(fd, AP_KILL) != SIGINT)
		_exit(1);
	kill(getppid(), SIGINT);
	agent_wait(fd, 0xffff);
}

Test(exec_client, second_interrupt_detaches)
{
	struct ap_exit x = { 0 };
	char err[256] = "";
	pid_t pid = fake_agent(ignores);
	int st;

	cr_assert_eq(run_client(-1, &x, err, sizeof(err)), -EINTR);
	cr_assert_not_null(strstr(err, "detached"), "%s", err);
	close(sv[0]);
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the agent saw no KILL for the first Ctrl-C");
}

/*
 * The agent reads nothing after EXEC while stdin (/dev/zero) fills the
 * send queue; signals keep coming. Before the fix every signal appended a
 * KILL frame past the end of the queue (caught by ASan) and never detached.
 */
static void deaf(int fd)
{
	static const int sigs[] = { SIGTERM, SIGHUP, SIGINT };
	const struct timespec gap = { 0, 200000 };

	agent_wait(fd, AP_EXEC);
	for (int i = 0; i < 6000 && kill(getppid(), 0) == 0; i++) {
		kill(getppid(), sigs[i % 3]);
		nanosleep(&gap, NULL);
	}
	pause();
}

Test(exec_client, signals_while_the_queue_is_full_do_not_overflow_it)
{
	int small = 4096, zero = open("/dev/zero", O_RDONLY);
	struct ap_exit x = { 0 };
	char err[256] = "";
	pid_t pid;

	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	pid = fake_agent(deaf);
	cr_assert_eq(run_client(zero, &x, err, sizeof(err)), -EINTR, "%s", err);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(zero);
	close(sv[0]);
}

/* Half a header, then silence: agent_request (mvm stop, ping, sync) gives
 * up with -ETIMEDOUT rather than waiting for the rest. Returning at all is
 * the property; the suite's .timeout only stops a hang (tests/README.md;
 * a per-test .timeout over the suite's leaks in Criterion 2.4). */
Test(exec_client, request_to_a_stalled_agent_returns_by_its_deadline)
{
	int ret;

	cr_assert_eq(write(sv[1], "\x00\x00\x00", 3), 3);
	ret = agent_request(sv[0], AP_PING, NULL, 0, 300);
	cr_assert_eq(ret, -ETIMEDOUT, "ret %d", ret);
	close(sv[1]);
}

Test(exec_client, request_to_a_silent_agent_returns_by_its_deadline)
{
	cr_assert_eq(agent_request(sv[0], AP_PING, NULL, 0, 200), -ETIMEDOUT);
	close(sv[1]);
}

/* A slow host (an emulated CPU) lengthens the wait for the agent's stream;
 * a value that is not a whole number of seconds in range changes nothing. */
Test(exec_client, agent_wait_follows_MVM_AGENT_TIMEOUT)
{
	unsetenv("MVM_AGENT_TIMEOUT");
	cr_expect_eq(agent_wait_ms(), 10000);
	setenv("MVM_AGENT_TIMEOUT", "60", 1);
	cr_expect_eq(agent_wait_ms(), 60000);
	setenv("MVM_AGENT_TIMEOUT", "0", 1);
	cr_expect_eq(agent_wait_ms(), 10000);
	setenv("MVM_AGENT_TIMEOUT", "5s", 1);
	cr_expect_eq(agent_wait_ms(), 10000);
	setenv("MVM_AGENT_TIMEOUT", "99999", 1);
	cr_expect_eq(agent_wait_ms(), 10000);
	unsetenv("MVM_AGENT_TIMEOUT");
}
