/*
 * dir_publish: a staging directory becomes DST whole or not at all, and an
 * existing DST is never replaced, also on file systems without
 * renameat2(RENAME_NOREPLACE) (9p, some NFS and FUSE mounts), stood in for
 * here by a rename that fails EINVAL as 9p's does.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dir_publish.h"

static char root[64], stage[128], dst[128];

static int rename_einval(int a, const char *b, int c, const char *d, unsigned int flags)
{
	errno = EINVAL;
	return -1;
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static int has(const char *dir, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return !access(p, F_OK);
}

static void setup(void)
{
	char sub[160];

	snprintf(root, sizeof(root), "/tmp/mvm-dirpub-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(stage, sizeof(stage), "%s/.out.mvm-stage", root);
	snprintf(dst, sizeof(dst), "%s/out", root);
	cr_assert_eq(mkdir(stage, 0750), 0);
	put(stage, "changes.patch", "diff\n");
	snprintf(sub, sizeof(sub), "%s/sub", stage);
	cr_assert_eq(mkdir(sub, 0755), 0);
	put(sub, "f", "x");
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(dir_publish, .init = setup, .fini = teardown);

Test(dir_publish, renames_where_noreplace_works)
{
	char err[256] = "";

	cr_assert_eq(dir_publish(stage, dst, err, sizeof(err)), 0, "%s", err);
	cr_expect(has(dst, "changes.patch") && has(dst, "sub/f"));
	cr_expect(access(stage, F_OK) && errno == ENOENT);
}

Test(dir_publish, falls_back_where_the_file_system_lacks_noreplace)
{
	char err[256] = "";
	struct stat st;

	cr_assert_eq(dir_publish_with(stage, dst, rename_einval, err, sizeof(err)), 0, "%s", err);
	cr_expect(has(dst, "changes.patch") && has(dst, "sub/f"));
	cr_expect(access(stage, F_OK) && errno == ENOENT, "the staging directory is gone");
	cr_assert_eq(stat(dst, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0750, "DST keeps the staged mode, got %o", st.st_mode & 07777);
}

Test(dir_publish, fallback_never_replaces_an_existing_destination)
{
	char err[256] = "";

	cr_assert_eq(mkdir(dst, 0755), 0);
	put(dst, "mine", "keep");
	cr_expect_eq(dir_publish_with(stage, dst, rename_einval, err, sizeof(err)), -EEXIST);
	cr_expect(has(dst, "mine") && !has(dst, "changes.patch"), "DST untouched");
	cr_expect(has(stage, "changes.patch") && has(stage, "sub/f"), "the staged files stay for cleanup");
	cr_expect_neq(strstr(err, "not replaced"), NULL, "%s", err);
}

Test(dir_publish, fallback_never_replaces_a_file_or_symlink)
{
	char err[256] = "";

	put(root, "out", "a file");
	cr_expect_eq(dir_publish_with(stage, dst, rename_einval, err, sizeof(err)), -EEXIST);
	unlink(dst);
	cr_assert_eq(symlink("/nonexistent", dst), 0);
	cr_expect_eq(dir_publish_with(stage, dst, rename_einval, err, sizeof(err)), -EEXIST);
	cr_expect(has(stage, "changes.patch"));
}

Test(dir_publish, a_failed_fallback_names_the_file_system_limit_and_leaves_no_destination)
{
	char err[512] = "", sub[160];

	/* A staged entry that cannot be moved (its directory is not writable). */
	snprintf(sub, sizeof(sub), "%s/sub", stage);
	cr_assert_eq(chmod(sub, 0555), 0);
	if (geteuid() == 0) {
		/* root ignores permissions: make the move fail by removing the destination's parent instead. */
		chmod(sub, 0755);
		cr_skip_test("runs as root");
	}
	cr_assert_eq(chmod(stage, 0555), 0);
	cr_expect_neq(dir_publish_with(stage, dst, rename_einval, err, sizeof(err)), 0);
	cr_expect_neq(strstr(err, "RENAME_NOREPLACE"), NULL, "%s", err);
	cr_expect(access(dst, F_OK) && errno == ENOENT, "no half destination is left");
	cr_expect(has(stage, "changes.patch") && has(stage, "sub/f"), "everything went back to the stage");
	chmod(stage, 0755);
	chmod(sub, 0755);
}

/* `mvm cp` out publishes single files and symlinks the same way (issue 26). */
Test(dir_publish, fallback_links_a_file_and_never_replaces_one)
{
	char err[256] = "", f[160], buf[16] = "";
	struct stat st;
	FILE *in;

	snprintf(f, sizeof(f), "%s/changes.patch", stage);
	cr_assert_eq(chmod(f, 0640), 0);
	put(root, "out", "mine");
	cr_expect_eq(dir_publish_with(f, dst, rename_einval, err, sizeof(err)), -EEXIST);
	cr_expect_neq(strstr(err, "not replaced"), NULL, "%s", err);
	in = fopen(dst, "r");
	cr_assert_not_null(in);
	cr_expect_eq(fread(buf, 1, sizeof(buf) - 1, in), 4);
	fclose(in);
	cr_expect_str_eq(buf, "mine", "DST untouched");
	cr_expect(has(stage, "changes.patch"), "the staged file stays for cleanup");
	unlink(dst);
	cr_assert_eq(dir_publish_with(f, dst, rename_einval, err, sizeof(err)), 0, "%s", err);
	cr_expect(!has(stage, "changes.patch"), "the staged name is gone");
	cr_assert_eq(lstat(dst, &st), 0);
	cr_expect(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0640 && st.st_nlink == 1);
	cr_expect_eq(st.st_size, 5);
}

Test(dir_publish, fallback_publishes_a_symlink_as_itself)
{
	char err[256] = "", l[160], t[64] = "";
	struct stat st;

	snprintf(l, sizeof(l), "%s/link", stage);
	cr_assert_eq(symlink("/nonexistent/target", l), 0);
	cr_assert_eq(dir_publish_with(l, dst, rename_einval, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(lstat(dst, &st), 0);
	cr_expect(S_ISLNK(st.st_mode));
	cr_expect_gt(readlink(dst, t, sizeof(t) - 1), 0);
	cr_expect_str_eq(t, "/nonexistent/target");
	cr_expect(lstat(l, &st) && errno == ENOENT);
	/* A dangling symlink at DST is an existing DST too. */
	cr_assert_eq(symlink("/x", l), 0);
	cr_expect_eq(dir_publish_with(l, dst, rename_einval, err, sizeof(err)), -EEXIST);
}
