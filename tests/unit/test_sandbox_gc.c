/* `mvm gc` (tools/sandbox/sandbox_gc.c): which leftovers may be ended, and
 * a state root someone edited reaped without harm outside it. No KVM. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/sandbox/sandbox_gc.h"

/* Only an orphaned process of ours, of the right program and arguments:
 * never a live VMM's helper, a recycled pid, another user's process. */
Test(sandbox_gc, only_a_shown_leftover_may_be_ended)
{
	const struct sb_proc_facts ok = { .alive = true, .same_uid = true, .args_match = true };
	struct sb_proc_facts f;

	cr_assert(sb_gc_may_kill(SB_GC_RELAY, &ok));
	cr_assert(sb_gc_may_kill(SB_GC_HELPER, &ok));
	f = ok, f.alive = false;
	cr_assert_not(sb_gc_may_kill(SB_GC_HELPER, &f), "gone or a zombie");
	f = ok, f.same_uid = false;
	cr_assert_not(sb_gc_may_kill(SB_GC_HELPER, &f), "another user's");
	f = ok, f.args_match = false;
	cr_assert_not(sb_gc_may_kill(SB_GC_RELAY, &f), "a recycled pid: other arguments");
	f = ok, f.exe_other = true;
	cr_assert_not(sb_gc_may_kill(SB_GC_HELPER, &f), "another program named mvm-net");
	f = ok, f.parent_is_mvm = true;
	cr_assert_not(sb_gc_may_kill(SB_GC_HELPER, &f), "a live VMM's helper");
}

Test(sandbox_gc, a_run_sandbox_is_kept_while_its_cli_runs)
{
	char name[32];

	cr_assert_not(sb_gc_run_alive("box"));
	cr_assert_not(sb_gc_run_alive("run-"));
	cr_assert_not(sb_gc_run_alive("run-1x"));
	snprintf(name, sizeof(name), "run-%d", (int)getpid());
	cr_assert_not(sb_gc_run_alive(name), "this process is no `mvm run`");
}

static void put(const char *root, const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	cr_assert(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static void dir(const char *root, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	cr_assert_eq(mkdir(p, 0700), 0, "%s", p);
}

static bool there(const char *root, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return !lstat(p, &st);
}

/* A child that waits; with @comm its name (prctl). */
static pid_t bystander(const char *comm)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (comm)
			prctl(PR_SET_NAME, comm, 0, 0, 0);
		for (;;)
			pause();
	}
	return pid;
}

/* A pid no process has (a reaped child's). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	cr_assert_gt(pid, 0);
	waitpid(pid, NULL, 0);
	return pid;
}

static int lines;
static void count(void *ctx, const char *line)
{
	(void)ctx;
	cr_log_info("%s", line);
	lines++;
}

/* Edited state: a pid file that is a FIFO, a relay.json and a helper_pid
 * naming unrelated live processes, a cgroup path leading out of the mount,
 * a state directory that is a symlink to a directory outside the root. gc
 * reaps the dead sandboxes, keeps the stopped one, ends no bystander,
 * deletes nothing outside the state root, and does not hang. */
Test(sandbox_gc, an_edited_state_root_is_reaped_without_harm_outside_it)
{
	char root[PATH_MAX], outside[PATH_MAX], p[PATH_MAX], text[256], link[PATH_MAX + 16];
	const char *tmp = getenv("TMPDIR");
	pid_t relay = bystander(NULL), helper = bystander("mvm-net");
	int failures, n;

	snprintf(root, sizeof(root), "%s/mvm-gc.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	cr_assert(mkdtemp(root));
	snprintf(outside, sizeof(outside), "%s/outside", root);
	cr_assert_eq(mkdir(outside, 0700), 0);
	strcat(root, "/state");
	cr_assert_eq(mkdir(root, 0700), 0);
	setenv("MVM_STATE_DIR", root, 1);

	dir(root, "dead");
	put(root, "dead/config.json", "{}");
	snprintf(text, sizeof(text), "%d\n", (int)dead_pid());
	put(root, "dead/pid", text);
	snprintf(text, sizeof(text), "{\"pid\":%d,\"forwards\":[]}", (int)relay);
	put(root, "dead/relay.json", text);
	snprintf(text, sizeof(text), "{\"helper_pid\":%d,\"cgroup\":\"/../../tmp/mvm/dead\"}",
		 (int)helper);
	put(root, "dead/confine.json", text);

	dir(root, "stopped");
	put(root, "stopped/config.json", "{}");

	dir(root, "fifo");
	put(root, "fifo/config.json", "{}");
	snprintf(p, sizeof(p), "%s/fifo/pid", root);
	cr_assert_eq(mkfifo(p, 0600), 0);
	snprintf(p, sizeof(p), "%s/fifo/confine.json", root);
	cr_assert_eq(mkfifo(p, 0600), 0);

	put(outside, "config.json", "{}");
	snprintf(text, sizeof(text), "%d\n", (int)dead_pid());
	put(outside, "pid", text);
	put(outside, "keep", "mine");
	snprintf(link, sizeof(link), "%s/linked", root);
	cr_assert_eq(symlink(outside, link), 0);

	/* A dry run changes nothing. */
	n = sb_gc(true, count, NULL, &failures);
	cr_assert_eq(n, 3, "dead, fifo, linked: %d", n);
	cr_assert_eq(lines, 3);
	cr_assert(there(root, "dead/config.json") && there(root, "fifo") && there(root, "linked"));

	lines = 0;
	n = sb_gc(false, count, NULL, &failures);
	cr_assert_eq(n, 3);
	cr_assert_eq(failures, 0);
	cr_assert_not(there(root, "dead"));
	cr_assert_not(there(root, "fifo"));
	cr_assert_not(there(root, "linked"), "the link goes");
	cr_assert(there(outside, "keep"), "what it pointed at stays");
	cr_assert(there(outside, "config.json"));
	cr_assert(there(root, "stopped/config.json"), "a stopped sandbox is kept");
	cr_assert_eq(kill(relay, 0), 0, "an unrelated process named as the relay lives");
	cr_assert_eq(kill(helper, 0), 0, "a process merely named mvm-net lives");
	/* Nothing left to reap. */
	cr_assert_eq(sb_gc(false, count, NULL, &failures), 0);

	kill(relay, SIGKILL);
	kill(helper, SIGKILL);
	waitpid(relay, NULL, 0);
	waitpid(helper, NULL, 0);
	*strrchr(root, '/') = 0;
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	cr_expect_eq(system(p), 0);
}
