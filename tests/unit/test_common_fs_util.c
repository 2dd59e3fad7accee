/* mkdir -p, rm -r and the clocks (common/fs_util.h, common/mono_time.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "common/mono_time.h"

static char root[64];

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/mvm-fsutil-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	(void)!system(cmd);
}

static bool is_dir(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return !lstat(p, &st) && S_ISDIR(st.st_mode);
}

static bool exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return !lstat(p, &st);
}

static void touch(const char *rel)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0, "create %s", p);
	cr_assert_eq(write(fd, "x", 1), 1);
	close(fd);
}

TestSuite(common_fs_util, .init = setup, .fini = teardown);

Test(common_fs_util, mkdir_p_makes_parents_and_takes_existing_ones)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/a/b//c/", root);
	cr_assert_eq(mkdir_p(p, 0700), 0);
	cr_expect(is_dir("a/b/c"));
	cr_expect_eq(mkdir_p(p, 0700), 0, "existing is fine");
	cr_assert_eq(stat(p, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0700);
	touch("a/file");
	snprintf(p, sizeof(p), "%s/a/file", root);
	cr_expect_eq(mkdir_p(p, 0700), -ENOTDIR, "a file in the way");
	snprintf(p, sizeof(p), "%s/a/file/sub", root);
	cr_expect_eq(mkdir_p(p, 0700), -ENOTDIR);
}

Test(common_fs_util, mkdir_p_at_is_relative_to_the_fd)
{
	int dfd = open(root, O_RDONLY | O_DIRECTORY);

	cr_assert_geq(dfd, 0);
	cr_expect_eq(mkdir_p_at(dfd, "x/y/z", 0755), 0);
	cr_expect(is_dir("x/y/z"));
	close(dfd);
}

Test(common_fs_util, rm_tree_removes_files_dirs_and_links_only)
{
	char p[PATH_MAX], t[PATH_MAX];

	cr_assert_eq(mkdir_p_at(AT_FDCWD, strcat(strcpy(p, root), "/tree/d1/d2"), 0700), 0);
	cr_assert_eq(mkdir_p_at(AT_FDCWD, strcat(strcpy(p, root), "/outside/keep"), 0700), 0);
	touch("tree/f");
	touch("tree/d1/f");
	touch("tree/d1/d2/f");
	touch("outside/keep/precious");
	/* Links into the outside: removing the tree must not reach through them. */
	snprintf(t, sizeof(t), "%s/outside/keep", root);
	snprintf(p, sizeof(p), "%s/tree/d1/link-dir", root);
	cr_assert_eq(symlink(t, p), 0);
	snprintf(p, sizeof(p), "%s/tree/link-file", root);
	cr_assert_eq(symlink(strcat(t, "/precious"), p), 0);
	snprintf(p, sizeof(p), "%s/tree", root);
	cr_expect_eq(rm_tree(p), 0);
	cr_expect(!exists("tree"));
	cr_expect(exists("outside/keep/precious"));
	cr_expect_eq(rm_tree(p), -ENOENT);
	/* A link given as the tree: the link goes, its target stays. */
	snprintf(p, sizeof(p), "%s/dirlink", root);
	snprintf(t, sizeof(t), "%s/outside", root);
	cr_assert_eq(symlink(t, p), 0);
	cr_expect_eq(rm_tree(p), 0);
	cr_expect(!exists("dirlink"));
	cr_expect(exists("outside/keep/precious"));
	/* A single file. */
	snprintf(p, sizeof(p), "%s/outside/keep/precious", root);
	cr_expect_eq(rm_tree(p), 0);
	cr_expect(!exists("outside/keep/precious"));
}

/* Deeper than the descriptors it may open (as a guest's tree could be): still removed. */
Test(common_fs_util, rm_tree_of_a_deep_tree_with_few_descriptors)
{
	struct rlimit rl = { 32, 32 };
	int dfd = open(root, O_RDONLY | O_DIRECTORY), next;

	cr_assert_geq(dfd, 0);
	cr_assert_eq(mkdirat(dfd, "deep", 0700), 0);
	next = openat(dfd, "deep", O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < 3000; i++) {
		int fd = next;

		cr_assert_geq(fd, 0);
		cr_assert_eq(mkdirat(fd, "d", 0700), 0);
		close(openat(fd, i % 2 ? "f" : "g", O_WRONLY | O_CREAT, 0600));
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		close(fd);
	}
	close(next);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	cr_expect_eq(rm_tree_at(dfd, "deep"), 0);
	cr_expect(!exists("deep"));
	close(dfd);
}

/* The same clock in three units: each reading lies between the
 * nanosecond readings taken before and after it, however long the
 * machine took between them (no bound on how long: tests/README.md). */
Test(common_mono_time, clocks_advance_together)
{
	struct timespec nap = { 0, 20 * 1000000 };
	int64_t ns0 = mono_now_ns(), ns1, ns2;
	uint64_t ms = mono_now_ms();
	double s;

	ns1 = mono_now_ns();
	cr_expect_leq((int64_t)ms, ns1 / 1000000, "ms %llu after ns %lld", (unsigned long long)ms,
		      (long long)ns1);
	cr_expect_geq((int64_t)ms, ns0 / 1000000);
	s = mono_now_s();
	ns2 = mono_now_ns();
	cr_expect_geq(s, (double)(ns1 / 1000000) / 1000);
	cr_expect_leq(s, (double)ns2 / 1e9 + 1e-6);
	/* The kernel sleeps at least the time asked for (a lower bound it
	 * guarantees on this very clock, which load cannot break). */
	nanosleep(&nap, NULL);
	cr_expect_geq(mono_now_ns() - ns2, 20 * 1000000);
	cr_expect_gt(wall_now_s(), 1.7e9, "seconds since 1970, not since boot");
}
