/*
 * Two builds of one image at once (images/image_build.c): the second waits
 * for the first and then reuses its image; the builder runs once. Before
 * the lock both ran their builder into the same stage and output (two
 * checkouts' `make test` broke each other's debootstrap). The builder is a
 * script that holds until the test lets it go, through FIFOs, so the order
 * is forced without sleeping.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/fs_util.h"
#include "images/image_build.h"

static char dir[64], path[160];
static int go_fd = -1;

static const char *at(const char *leaf)
{
	snprintf(path, sizeof(path), "%s/%s", dir, leaf);
	return path;
}

static void setup(void)
{
	char script[512];

	snprintf(dir, sizeof(dir), "/tmp/mvm-imglock.XXXXXX");
	cr_assert(mkdtemp(dir));
	cr_assert_eq(mkfifo(at("started"), 0600), 0);
	cr_assert_eq(mkfifo(at("go"), 0600), 0);
	go_fd = open(at("go"), O_RDWR | O_CLOEXEC);
	cr_assert_geq(go_fd, 0);
	snprintf(script, sizeof(script),
		 "echo run >> '%s/runs'\n"
		 "echo started > '%s/started'\n"
		 "read x < '%s/go'\n"
		 "echo image > \"$MVM_IMAGE_OUT\"\n"
		 /* NAME.json last, as images/image-lib.sh writes it */
		 "echo \"{\\\"inputs\\\": \\\"$MVM_IMAGE_INPUTS\\\"}\" > "
		 "\"${MVM_IMAGE_OUT%%.ext4}.json\"\n",
		 dir, dir, dir);
	cr_assert_eq(file_write_atomic(at("build-t.sh"), script), 0);
	setenv("MVM_IMAGE_BUILDERS", dir, 1);
	setenv("MVM_IMAGE_DIR", at("store"), 1);
}

static void teardown(void)
{
	if (go_fd >= 0)
		close(go_fd);
	go_fd = -1;
	rm_tree(dir);
}

/* A child that builds image t with @force and exits 0 if it ran the
 * builder (@want_reused false) or reused the image (true). */
static pid_t build_in_child(bool force, bool want_reused, int out_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct image_build b = {.name = "t", .force = force};
		char err[256];
		int ret;

		setpgid(0, 0); /* with its builder: killed together on a failure */

		if (out_fd >= 0)
			dup2(out_fd, STDOUT_FILENO);
		ret = image_build(&b, err, sizeof(err));
		_exit(ret == 0 && b.reused == want_reused ? 0 : 1);
	}
	setpgid(pid, pid); /* either side may come first */
	return pid;
}

static int status_of(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Reads the second build's output until it says it waits. NULL, or why
 * not: it ended, or its own builder started (no lock: it did not wait).
 */
static const char *await_waiting(int out_fd, int started_fd)
{
	char buf[512];
	size_t len = 0;
	ssize_t n;

	while (!memmem(buf, len, "waiting for it", 14)) {
		struct pollfd p[2] = {{.fd = out_fd, .events = POLLIN},
				      {.fd = started_fd, .events = POLLIN}};

		if (len == sizeof(buf) - 1 || poll(p, 2, -1) < 0)
			return "no 'waiting' line";
		if (p[1].revents & POLLIN)
			return "a second builder ran beside the first";
		n = read(out_fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return "the second build ended without waiting";
		len += (size_t)n;
	}
	return NULL;
}

/* Lets every builder still held go (two lines: one each at most). The
 * FIFO is held open read-write from set-up on, so the lines wait in it for
 * a builder that has not opened it yet (a non-blocking write-only open
 * failed with ENXIO then, and that builder waited out the test's timeout
 * on a loaded machine). */
static void release(void)
{
	(void)!write(go_fd, "\n\n", 2);
}

static void second_build_waits(bool force)
{
	char line[16] = {0}, *runs;
	const char *why;
	int pfd[2], fd;
	pid_t a, b;

	if (force)
		setenv("MVM_IMAGE_INPUTS", "abc", 1);
	a = build_in_child(force, false, -1);
	fd = open(at("started"), O_RDONLY);
	cr_assert_gt(read(fd, line, sizeof(line) - 1), 0); /* A's builder runs */
	close(fd);
	/* Kept open (no writer yet): a second builder's line shows up here. */
	fd = open(at("started"), O_RDONLY | O_NONBLOCK);
	cr_assert_eq(pipe(pfd), 0);
	b = build_in_child(force, true, pfd[1]);
	close(pfd[1]);
	why = await_waiting(pfd[0], fd);
	close(pfd[0]);
	release();
	close(fd);
	if (why) {
		kill(-a, SIGKILL);
		kill(-b, SIGKILL);
	}
	cr_assert_null(why, "%s", why);
	cr_assert_eq(status_of(a), 0, "the first build did not build");
	cr_assert_eq(status_of(b), 0, "the second build did not reuse the first one's image");
	runs = file_read_text(at("runs"), 64);
	cr_assert_str_eq(runs, "run\n", "the builder ran more than once");
	free(runs);
	unsetenv("MVM_IMAGE_INPUTS");
}

TestSuite(image_build_lock, .init = setup, .fini = teardown, .timeout = 60);

Test(image_build_lock, a_second_build_waits_and_reuses_the_image)
{
	second_build_waits(false);
}

/* make's --force rebuild when the recipe changed: a second make wanting the
 * same inputs finds them built and does not rebuild. */
Test(image_build_lock, a_forced_build_with_the_same_inputs_reuses_it)
{
	second_build_waits(true);
}
