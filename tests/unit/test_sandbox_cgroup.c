/* Where the sandbox's memory cap would count pages that cannot be
 * reclaimed (tools/sandbox/sandbox_cgroup.c): disk files on tmpfs. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "tools/sandbox/sandbox_cgroup.h"

static bool is_tmpfs(const char *path)
{
	struct statfs f;

	return !statfs(path, &f) && f.f_type == TMPFS_MAGIC;
}

/* A writable disk on tmpfs lifts the cap even when the state directory
 * (the cwd) is not on tmpfs: `mvm run --disk /tmp/x.qcow2` with /tmp on
 * tmpfs had the VMM OOM-killed once the guest had written 256 MiB. */
Test(sandbox_cgroup, a_writable_disk_on_tmpfs_counts)
{
	char disk[] = "/dev/shm/mvm-cg-XXXXXX";
	const char *none[] = { NULL }, *on_shm[] = { "/nonexistent-disk", disk, NULL };
	int fd;

	if (is_tmpfs(".") || !is_tmpfs("/dev/shm"))
		cr_skip_test("needs a cwd off tmpfs and /dev/shm on tmpfs");
	fd = mkstemp(disk);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_expect_not(sb_cgroup_written_on_tmpfs(NULL));
	cr_expect_not(sb_cgroup_written_on_tmpfs(none));
	cr_expect(sb_cgroup_written_on_tmpfs(on_shm), "disk %s on tmpfs not seen", disk);
	unlink(disk);
}

/* memory.events as the kernel writes it: the OOM kills are told apart from
 * the other counters, so a VMM the OOM killer ended can be named as such. */
Test(sandbox_cgroup, oom_kills_are_read_from_memory_events)
{
	cr_assert_eq(sb_cgroup_oom_kills("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n"), 1);
	cr_assert_eq(sb_cgroup_oom_kills("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n"), 0);
	cr_assert_eq(sb_cgroup_oom_kills("oom_group_kill 3\n"), 0);
	cr_assert_eq(sb_cgroup_oom_kills("oom_kill 7"), 7);
	cr_assert_eq(sb_cgroup_oom_kills(""), 0);
	cr_assert_eq(sb_cgroup_oom_killed("no-such-sandbox-xyz"), false);
}

/* Already enabled controllers are not written again (each write costs an
 * RCU grace period on every start); a missing one, or a longer name that
 * merely starts with it, is. */
Test(sandbox_cgroup, subtree_controllers_are_matched_as_words)
{
	cr_assert(sb_cgroup_has_controllers("cpu memory pids\n", "+memory +pids"));
	cr_assert(sb_cgroup_has_controllers("memory pids\n", "+memory +pids"));
	cr_assert(sb_cgroup_has_controllers("cpuset cpu io memory pids\n", "+memory +pids +cpu"));
	cr_assert_not(sb_cgroup_has_controllers("cpuset memory pids\n", "+memory +pids +cpu"));
	cr_assert_not(sb_cgroup_has_controllers("memory\n", "+memory +pids"));
	cr_assert_not(sb_cgroup_has_controllers("hugetlb pids_x memory\n", "+memory +pids"));
	cr_assert_not(sb_cgroup_has_controllers("", "+memory +pids"));
	cr_assert_not(sb_cgroup_has_controllers(NULL, "+memory +pids"));
}

/* Where a sandbox lands for each answer the kernel gives: its own cgroup,
 * or (an engine's job, a scope: EBUSY; no delegation: EACCES/EROFS/EPERM;
 * no cgroup v2: ENOENT) the caller's, said so in words. */
Test(sandbox_cgroup, placement_follows_the_kernels_answer)
{
	cr_assert_eq(sb_cgroup_place(0), SB_CG_OWN);
	cr_assert_eq(sb_cgroup_place(-EBUSY), SB_CG_CALLER_BUSY);
	cr_assert_eq(sb_cgroup_place(-EACCES), SB_CG_NOT_DELEGATED);
	cr_assert_eq(sb_cgroup_place(-EROFS), SB_CG_NOT_DELEGATED);
	cr_assert_eq(sb_cgroup_place(-EPERM), SB_CG_NOT_DELEGATED);
	cr_assert_eq(sb_cgroup_place(-ENOENT), SB_CG_NO_V2);
	cr_assert_eq(sb_cgroup_place(-EIO), SB_CG_FAILED);
}

Test(sandbox_cgroup, the_note_names_the_callers_cgroup_and_what_is_not_set)
{
	char b[768];

	sb_cgroup_note(0, "/job", false, b, sizeof(b));
	cr_assert_str_eq(b, "");
	sb_cgroup_note(-EBUSY, "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0", false, b,
		       sizeof(b));
	cr_assert(strstr(b, "the caller's cgroup /system.slice/slurmstepd.scope/job_7/step_0/user/task_0 holds processes"), "%s", b);
	cr_assert(strstr(b, "stays in it and is charged to it, under its limits"), "%s", b);
	cr_assert(strstr(b, "memory.max, pids.max) are not set"), "%s", b);
	sb_cgroup_note(-EBUSY, "/job", true, b, sizeof(b));
	cr_assert(strstr(b, "cpu.max"), "a --cpu-quota that is not in force is named: %s", b);
	sb_cgroup_note(-EACCES, "/user.slice/session-3.scope", false, b, sizeof(b));
	cr_assert(!strncmp(b, "no delegated cgroup subtree: ", 29), "%s", b);
	cr_assert(strstr(b, "/user.slice/session-3.scope"), "%s", b);
	sb_cgroup_note(-EROFS, "/", false, b, sizeof(b));
	cr_assert(!strncmp(b, "no delegated cgroup subtree: ", 29), "%s", b);
	sb_cgroup_note(-ENOENT, "", false, b, sizeof(b));
	cr_assert(strstr(b, "no cgroup v2"), "%s", b);
}

Test(sandbox_cgroup, the_v2_line_of_proc_pid_cgroup)
{
	char out[64];

	cr_assert_eq(sb_cgroup_line("0::/job/step\n", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/job/step");
	cr_assert_eq(sb_cgroup_line("0::/\n", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/");
	cr_assert_eq(sb_cgroup_line("12:memory:/x\n1:name=systemd:/y\n0::/z", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/z");
	cr_assert_eq(sb_cgroup_line("12:memory:/x\n", out, sizeof(out)), -ENOENT);
	cr_assert_eq(sb_cgroup_line("0::/gone (deleted)\n", out, sizeof(out)), -ENOENT);
	cr_assert_eq(sb_cgroup_line("0::relative\n", out, sizeof(out)), -ENOENT);
	cr_assert_eq(sb_cgroup_line("0::/a-path-longer-than-eight\n", out, 8), -ENOENT);
	cr_assert_eq(sb_cgroup_line("", out, sizeof(out)), -ENOENT);
}

/* A recorded cgroup comes from a state directory someone may have edited:
 * only NAME's own mvm/NAME, below some cgroup, with no way out of the mount. */
Test(sandbox_cgroup, a_recorded_cgroup_path_is_checked)
{
	cr_assert(sb_cgroup_path_ok("/mvm/box", "box"));
	cr_assert(sb_cgroup_path_ok("/job/mvm/box", "box"));
	cr_assert(sb_cgroup_path_ok("/system.slice/slurmstepd.scope/job_7/step_0/user/task_0/mvm/b.1", "b.1"));
	cr_assert(sb_cgroup_path_ok("/user.slice/user-1000.slice/user@1000.service/app.slice/mvm/x", "x"));
	cr_assert_not(sb_cgroup_path_ok("/job/mvm/other", "box"));
	cr_assert_not(sb_cgroup_path_ok("/job/mvm/box/", "box"));
	cr_assert_not(sb_cgroup_path_ok("/job/mvm/boxx", "box"));
	cr_assert_not(sb_cgroup_path_ok("/job/xmvm/box", "box"));
	cr_assert_not(sb_cgroup_path_ok("job/mvm/box", "box"));
	cr_assert_not(sb_cgroup_path_ok("//mvm/box", "box"));
	cr_assert_not(sb_cgroup_path_ok("/../../etc/mvm/box", "box"));
	cr_assert_not(sb_cgroup_path_ok("/a/../mvm/box", "box"));
	cr_assert_not(sb_cgroup_path_ok("/./mvm/box", "box"));
	cr_assert_not(sb_cgroup_path_ok("/a b/mvm/box", "box"));
	cr_assert_not(sb_cgroup_path_ok("/a\n/mvm/box", "box"));
	cr_assert_not(sb_cgroup_path_ok("/mvm/..", ".."));
	cr_assert_not(sb_cgroup_path_ok("", "box"));
	cr_assert_not(sb_cgroup_path_ok("/mvm/", ""));
}
