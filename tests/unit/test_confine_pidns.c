/* The VMM's PID namespace (vmm/confine/pidns.h): the host's pids read back,
 * a /proc of its own, and a parent that lives and ends as the VMM does;
 * the capabilities of both (vmm/confine/caps.h). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/file_io.h"
#include "vmm/confine/caps.h"
#include "vmm/confine/pidns.h"

Test(confine_pidns, fdinfo_pid_is_read_from_its_line)
{
	cr_expect_eq(confine_fdinfo_pid("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n"
					"Pid:\t4242\nNSpid:\t4242\t2\n"), 4242);
	cr_expect_eq(confine_fdinfo_pid("Pid:\t17"), 17);
	/* NSpid is not Pid; gone (-1), missing, garbage: no pid. */
	cr_expect_eq(confine_fdinfo_pid("NSpid:\t5\t1\n"), -1);
	cr_expect_eq(confine_fdinfo_pid("Pid:\t-1\nNSpid:\t-1\n"), -1);
	cr_expect_eq(confine_fdinfo_pid("pos:\t0\n"), -1);
	cr_expect_eq(confine_fdinfo_pid("Pid:\t12x\n"), -1);
	cr_expect_eq(confine_fdinfo_pid(""), -1);
}

Test(confine_pidns, outside_a_namespace_pids_are_our_own)
{
	cr_expect_eq(confine_pidns_flags(), 0);
	cr_expect_eq(confine_pidns_self(), getpid());
	cr_expect_eq(confine_pidns_host_pid(1234), 1234);
}

/* The last field of "NSpid:" in the host's /proc/@pid/status (its pid in
 * its innermost namespace), or -1. */
static int innermost_pid(pid_t pid)
{
	char p[64], line[256];
	int last = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	f = fopen(p, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6)) {
			char *t = strrchr(line, '\t');

			last = t ? atoi(t + 1) : -1;
		}
	if (f)
		fclose(f);
	return last;
}

static int proc_entries(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] >= '0' && e->d_name[0] <= '9';
	if (d)
		closedir(d);
	return n;
}

struct seen {
	int flags, pid, entries, ipc_same;
	pid_t self_host, kid_host, kid_local;
};

/* In the new namespace: what it looks like, to the test through @fd; a
 * child of ours stays (sleeping) until the test has looked at it. */
static void inside(int fd, ino_t host_ipc)
{
	struct seen s = { .flags = confine_pidns_flags(), .pid = getpid() };
	struct stat st;
	pid_t kid = fork();

	if (kid == 0) {
		pause();
		_exit(0);
	}
	s.kid_local = kid;
	s.kid_host = confine_pidns_host_pid(kid);
	s.self_host = confine_pidns_self();
	confine_pidns_seal();
	s.entries = proc_entries();
	s.ipc_same = !stat("/proc/self/ns/ipc", &st) && st.st_ino == host_ipc;
	(void)!write(fd, &s, sizeof(s));
	close(fd);
	sleep(2);	/* the test reads the host's /proc meanwhile */
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	_exit(7);
}

Test(confine_pidns, vmm_is_pid_1_with_its_own_proc_and_the_host_knows_its_pids)
{
	struct seen s = { 0 };
	struct stat ipc;
	int fds[2], st = 0, ret;
	pid_t keeper;

	cr_assert_eq(stat("/proc/self/ns/ipc", &ipc), 0);
	cr_assert_eq(pipe(fds), 0);
	keeper = fork();
	if (keeper == 0) {
		close(fds[0]);
		ret = confine_pidns_enter();
		if (ret == 0)
			_exit(77);	/* not allowed here */
		if (ret < 0)
			_exit(1);
		inside(fds[1], ipc.st_ino);
	}
	close(fds[1]);
	ret = (int)read(fds[0], &s, sizeof(s));
	close(fds[0]);
	if (ret == 0) {
		waitpid(keeper, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
			cr_skip_test("user namespaces are not allowed here");
	}
	cr_assert_eq(ret, (int)sizeof(s), "the VMM said nothing");
	cr_expect_eq(s.flags, CONFINE_NS_USER | CONFINE_NS_PID | CONFINE_NS_MOUNT | CONFINE_NS_IPC);
	cr_expect_eq(s.pid, 1);
	cr_expect_eq(s.entries, 2, "its /proc shows %d processes, not its own two", s.entries);
	cr_expect_not(s.ipc_same, "still in the host's IPC namespace");
	/* The host's pids: the VMM's a child of the keeper, 1 inside; its child's too. */
	cr_expect_neq(s.self_host, 1);
	cr_expect_eq(innermost_pid(s.self_host), 1);
	cr_expect_neq(s.kid_host, s.kid_local);
	cr_expect_eq(innermost_pid(s.kid_host), s.kid_local);
	waitpid(keeper, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 7, "the keeper ended with %#x, not as the VMM",
		  st);
}

/* pid 1 of a namespace is spared signals it has no handler for: kill -TERM
 * still ends the VMM (its handler), and the keeper ends as the VMM did. */
Test(confine_pidns, kill_term_ends_the_vmm_and_its_keeper)
{
	int st = 0, ret;
	pid_t keeper = fork();

	if (keeper == 0) {
		ret = confine_pidns_enter();
		if (ret == 0)
			_exit(77);
		if (ret < 0)
			_exit(1);
		raise(SIGTERM);
		_exit(2);
	}
	waitpid(keeper, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		cr_skip_test("user namespaces are not allowed here");
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM,
		  "kill -TERM did not end the VMM: %#x", st);
}

/* Gone, or a zombie nobody reaped yet. */
static bool gone(pid_t pid)
{
	char p[64], buf[256], *rp;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	f = fopen(p, "r");
	if (!f)
		return true;
	buf[0] = 0;
	(void)!fgets(buf, sizeof(buf), f);
	fclose(f);
	rp = strrchr(buf, ')');
	return rp && (rp[2] == 'Z' || rp[2] == 'X');
}

struct vmm_said {
	pid_t vmm;	/* the host's pid */
	int said;	/* what @probe returned in it */
};

/* A keeper (returned) whose VMM, in its new namespaces, runs @probe (or
 * nothing), tells the test its host pid and the answer, and waits to be
 * killed. Skips the test where user namespaces are refused. */
static pid_t keeper_and_vmm(int (*probe)(void), struct vmm_said *out)
{
	struct vmm_said v = { 0 };
	int fds[2], st = 0, ret;
	pid_t keeper;

	cr_assert_eq(pipe(fds), 0);
	keeper = fork();
	if (keeper == 0) {
		close(fds[0]);
		ret = confine_pidns_enter();
		if (ret <= 0)
			_exit(ret == 0 ? 77 : 1);
		v.said = probe ? probe() : 0;
		v.vmm = confine_pidns_self();
		(void)!write(fds[1], &v, sizeof(v));
		pause();
		_exit(0);
	}
	close(fds[1]);
	ret = (int)read(fds[0], out, sizeof(*out));
	close(fds[0]);
	if (ret != (int)sizeof(*out)) {
		waitpid(keeper, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
			cr_skip_test("user namespaces are not allowed here");
		cr_assert_fail("the VMM said nothing: %#x", st);
	}
	return keeper;
}

/* The VMM never outlives its keeper (mvm run kills the keeper). */
Test(confine_pidns, vmm_dies_with_its_keeper)
{
	struct vmm_said v;
	pid_t keeper = keeper_and_vmm(NULL, &v), vmm = v.vmm;
	int st = 0;

	cr_assert(!gone(vmm));
	kill(keeper, SIGKILL);
	waitpid(keeper, &st, 0);
	for (int i = 0; i < 200 && !gone(vmm); i++)
		usleep(10000);
	cr_expect(gone(vmm), "the VMM outlived its keeper");
}

/* A process's /proc/PID/status (malloc'd), or NULL. */
static char *status_of(pid_t pid)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	return file_read_text(p, 16383);
}

static bool status_has(const char *status, const char *line)
{
	return status && strstr(status, line);
}

/* In the VMM, once in its namespaces: 1 if it can still make namespaces, 2
 * if it can gain nothing, 4 if it then drops all. */
static int vmm_caps(void)
{
	char *vs = status_of(getpid());
	int said = 0, ret;

	if (!status_has(vs, "CapEff:\t0000000000000000"))
		said |= 1;
	if (status_has(vs, "CapBnd:\t0000000000000000") &&
	    prctl(PR_GET_SECUREBITS) == (0xff & ~SECBIT_KEEP_CAPS))
		said |= 2;
	free(vs);
	ret = confine_caps_drop();
	vs = status_of(getpid());
	if (!ret && confine_caps_none(vs) == 1)
		said |= 4;
	free(vs);
	return said;
}

/* What the VMM holds once in its namespaces: its effective capabilities for
 * the rest of set-up, but no bounding set (an exec, its network helper,
 * gains nothing) and securebits it cannot undo; then, at confinement, none
 * at all. The keeper holds none and runs under its own filter. */
Test(confine_pidns, nothing_to_gain_in_the_vmm_nothing_held_by_the_keeper)
{
	struct vmm_said v;
	pid_t keeper = keeper_and_vmm(vmm_caps, &v);
	int st = 0, vmm_said = v.said;
	char *ks;

	cr_expect(vmm_said & 1, "the VMM lost its effective capabilities before confinement");
	cr_expect(vmm_said & 2, "the VMM could still gain capabilities");
	cr_expect(vmm_said & 4, "the VMM kept capabilities after confine_caps_drop()");
	/* The keeper confines itself beside the VMM's start, not before it: a
	 * state to reach (slow under ASan), looked at until a deadline. */
	ks = status_of(keeper);
	for (int i = 0; i < 1000 && ks && !status_has(ks, "\nSeccomp:\t2\n"); i++) {
		usleep(10000);
		free(ks);
		ks = status_of(keeper);
	}
	cr_assert(ks);
	cr_expect(status_has(ks, "\nSeccomp:\t2\n"), "the keeper is not filtered: %s", ks);
	cr_expect(status_has(ks, "\nNoNewPrivs:\t1\n"));
	cr_expect_eq(confine_caps_none(ks), 1, "the keeper holds capabilities: %s", ks);
	free(ks);
	/* Under its filter it still ends as the VMM did: killed by the same signal. */
	kill(v.vmm, SIGKILL);
	waitpid(keeper, &st, 0);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the keeper ended with %#x", st);
}

Test(confine_caps, none_only_when_all_five_sets_are_empty)
{
	static const char none[] = "Name:\tmvm\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
				   "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
				   "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\n";
	char s[sizeof(none)];

	cr_expect_eq(confine_caps_none(none), 1);
	/* Any one set holding anything: the bounding set of a plain user's process. */
	memcpy(s, none, sizeof(s));
	memcpy(strstr(s, "CapBnd:\t") + 8, "000001ffffffffff", 16);
	cr_expect_eq(confine_caps_none(s), 0);
	memcpy(s, none, sizeof(s));
	s[strstr(s, "CapAmb:\t") - s + 8 + 15] = '1';
	cr_expect_eq(confine_caps_none(s), 0);
	/* A set missing (a kernel before ambient sets), empty or not hex: unknown. */
	cr_expect_eq(confine_caps_none("CapInh:\t0\nCapPrm:\t0\nCapEff:\t0\nCapBnd:\t0\n"), -1);
	cr_expect_eq(confine_caps_none("CapInh:\t0\nCapPrm:\t0\nCapEff:\t\nCapBnd:\t0\nCapAmb:\t0"),
		     -1);
	cr_expect_eq(confine_caps_none("CapInh:\t0\nCapPrm:\t0\nCapEff:\tzz\nCapBnd:\t0\nCapAmb:\t0"),
		     -1);
	/* Only a field at the start of a line counts. */
	cr_expect_eq(confine_caps_none("XCapInh:\t1\nCapInh:\t0\nCapPrm:\t0\nCapEff:\t0\nCapBnd:\t0\n"
				       "CapAmb:\t0\n"), 1);
}
