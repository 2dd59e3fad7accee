/* Where the sandbox's memory cap would count pages that cannot be
 * reclaimed (tools/sandbox/sandbox_cgroup.c): disk files on tmpfs. */
#include <criterion/criterion.h>
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
