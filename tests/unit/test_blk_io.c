/*
 * virtio-blk's worker pool (devices/blk_io.c): requests run in parallel,
 * and a barrier (FLUSH) starts only after every request submitted before
 * it finished, whatever order the workers finish them in.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "devices/blk_io.h"
#include "vmm/confine/seccomp_filter.h"

#define N 400

static int finished[N];		/* by request number (->sector) */
static int violations, running, max_running;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void exec(struct blk_req *r)
{
	struct timespec ts = { 0, (long)(r->sector * 7919 % 500) * 1000 };

	pthread_mutex_lock(&mu);
	if (r->barrier)
		for (uint64_t i = 0; i < r->sector; i++)
			if (!finished[i])
				violations++;
	if (++running > max_running)
		max_running = running;
	pthread_mutex_unlock(&mu);
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&mu);
	running--;
	finished[r->sector] = 1;
	pthread_mutex_unlock(&mu);
	r->status = 0;
}

/* The workers install their real seccomp table; under ASan its runtime
 * makes calls of its own in them, so there the filter only logs. */
static void sanitizer_log_mode(void)
{
#ifdef __SANITIZE_ADDRESS__
	setenv("MVM_SECCOMP", "log", 1);
#endif
}

TestSuite(blk_io, .init = sanitizer_log_mode);

Test(blk_io, barrier_waits_for_everything_before_it, .timeout = 60)
{
	struct blk_io io;
	int collected = 0;

	cr_assert_eq(blk_io_init(&io, exec), 0);
	cr_assert_eq(blk_io_start(&io), 0);
	for (int i = 0; i < N; i++) {
		struct blk_req *r = blk_io_alloc(&io);

		cr_assert_not_null(r);
		r->sector = (uint64_t)i;
		r->barrier = i % 37 == 36;
		blk_io_submit(&io, r);
	}
	while (collected < N) {
		struct pollfd p = { .fd = io.efd, .events = POLLIN };
		struct blk_req *r;

		cr_assert_eq(poll(&p, 1, 10000), 1, "no completion for 10 s");
		for (r = blk_io_collect(&io); r;) {
			struct blk_req *next = r->next;

			blk_io_free(&io, r);
			collected++;
			r = next;
		}
	}
	cr_assert_eq(blk_io_pending(&io), 0);
	blk_io_fini(&io);
	cr_assert_eq(violations, 0, "%d requests not finished before a later barrier", violations);
	cr_assert_gt(max_running, 1, "requests never ran in parallel");
}

Test(blk_io, wait_idle_then_collect_returns_all, .timeout = 60)
{
	struct blk_io io;
	int n = 0;

	cr_assert_eq(blk_io_init(&io, exec), 0);
	cr_assert_eq(blk_io_start(&io), 0);
	for (int i = 0; i < 40; i++) {
		struct blk_req *r = blk_io_alloc(&io);

		r->sector = (uint64_t)i;
		r->barrier = false;
		blk_io_submit(&io, r);
	}
	blk_io_wait_idle(&io);
	for (struct blk_req *r = blk_io_collect(&io); r; n++) {
		struct blk_req *next = r->next;

		blk_io_free(&io, r);
		r = next;
	}
	cr_assert_eq(n, 40);
	cr_assert_eq(blk_io_pending(&io), 0);
	blk_io_fini(&io);
}

/* A back-end bug that makes a forbidden call (glibc may make one behind a
 * malloc or a free) on a worker. */
static void exec_forbidden(struct blk_req *r)
{
	(void)getppid();
	r->status = 0;
}

/* The child: one request whose back-end makes a forbidden call. */
static void run_forbidden(int err_fd)
{
	struct blk_io io;
	struct blk_req *r;

	dup2(err_fd, 2);
	if (blk_io_init(&io, exec_forbidden) || blk_io_start(&io))
		_exit(2);
	r = blk_io_alloc(&io);
	r->sector = 0;
	r->barrier = false;
	blk_io_submit(&io, r);
	blk_io_wait_idle(&io);
	_exit(0);
}

/* A worker that makes a forbidden call stops the VMM with the line that
 * names it, as every other thread does. Workers block signals, and the
 * kernel resets a blocked SIGSYS to its default action before delivering
 * it: the VMM died of the signal, silently (seen as "lost the connection
 * to the guest agent" and nothing in the log). */
Test(blk_io, forbidden_call_on_a_worker_is_reported, .timeout = 60)
{
	const char *mode = getenv("MVM_SECCOMP");
	char out[512] = "";
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (mode && !strcmp(mode, "log"))
		return;		/* sanitizer builds: the filter only logs */
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		run_forbidden(fds[1]);
	}
	close(fds[1]);
	while (got < (ssize_t)sizeof(out) - 1 &&
	       (n = read(fds[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(!WIFSIGNALED(status), "the VMM died of signal %d, unreported",
		  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == CONFINE_SECCOMP_EXIT,
		  "exit status 0x%x", status);
	cr_assert(strstr(out, "forbidden system call getppid") && strstr(out, "blk thread"),
		  "no report: '%s'", out);
}
