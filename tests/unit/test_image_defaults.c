/*
 * An imported image's defaults (images/image_defaults.c): read from the
 * NAME.json beside NAME.ext4, Entrypoint before Cmd, the caller's -e
 * winning over the image's Env, and nothing for an image without a record.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/fs_util.h"
#include "images/image_defaults.h"

static char dir[64], img[96], meta[96], err[256];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/mvm-imgdef.XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(img, sizeof(img), "%s/x.ext4", dir);
	snprintf(meta, sizeof(meta), "%s/x.json", dir);
	cr_assert_eq(file_write_atomic(img, ""), 0);
}

static void teardown(void)
{
	rm_tree(dir);
}

TestSuite(image_defaults, .init = setup, .fini = teardown);

Test(image_defaults, entrypoint_cmd_env_workdir)
{
	struct image_defaults d;

	cr_assert_eq(file_write_atomic(meta, "{\"oci\":{\"config\":{\"Entrypoint\":[\"/bin/sh\"],"
					     "\"Cmd\":[\"-c\",\"echo hi\"],\"Env\":[\"A=1\",\"B=2\"],"
					     "\"WorkingDir\":\"/w\",\"User\":\"app\"}}}"), 0);
	cr_assert_eq(image_defaults_load(img, &d, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(d.argv[0], "/bin/sh");
	cr_assert_str_eq(d.argv[2], "echo hi");
	cr_assert_null(d.argv[3]);
	cr_assert_str_eq(d.workdir, "/w");
	cr_assert_str_eq(d.user, "app");

	char *env[8] = { "B=mine", "C=3" };
	int n = 2;

	cr_assert_eq(image_defaults_env(&d, env, &n, 8), 0);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(env[0], "A=1", "the image's first");
	cr_assert_str_eq(env[1], "B=mine", "-e wins: the image's B is left out");
	cr_assert_str_eq(env[2], "C=3");
	n = 2;
	env[0] = "B=mine";
	env[1] = "C=3";
	cr_assert_eq(image_defaults_env(&d, env, &n, 2), -E2BIG);
	image_defaults_free(&d);
}

Test(image_defaults, none_without_a_record)
{
	struct image_defaults d;

	cr_assert_eq(image_defaults_load(img, &d, err, sizeof(err)), 0);
	cr_assert_null(d.argv);
	cr_assert_eq(file_write_atomic(meta, "{\"name\":\"x\",\"sha256\":\"00\"}"), 0);
	cr_assert_eq(image_defaults_load(img, &d, err, sizeof(err)), 0);
	cr_assert_null(d.argv);
	cr_assert_null(d.env);
	cr_assert_eq(file_write_atomic(meta, "{\"oci\":{\"config\":{\"Env\":[\"NOVALUE\"]}}}"), 0);
	cr_assert_eq(image_defaults_load(img, &d, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "malformed"), "%s", err);
	cr_assert_eq(file_write_atomic(meta, "{\"oci\":{\"config\":{\"Cmd\":[1]}}}"), 0);
	cr_assert_eq(image_defaults_load(img, &d, err, sizeof(err)), -EINVAL);
	cr_assert_eq(file_write_atomic(meta, "{\"oci\":{\"config\":{},\"user\":{\"uid\":-1,\"gid\":0}}}"), 0);
	cr_assert_eq(image_defaults_load(img, &d, err, sizeof(err)), -EINVAL, "a negative uid");
	cr_assert_eq(file_write_atomic(meta, "{\"oci\":{\"config\":{},\"user\":{\"uid\":1.5,\"gid\":0}}}"), 0);
	cr_assert_eq(image_defaults_load(img, &d, err, sizeof(err)), -EINVAL, "a fraction");
}

Test(image_defaults, the_user_resolved_at_import)
{
	struct image_defaults d;

	cr_assert_eq(file_write_atomic(meta, "{\"oci\":{\"config\":{\"User\":\"app\"},"
					     "\"user\":{\"uid\":1234,\"gid\":5}}}"), 0);
	cr_assert_eq(image_defaults_load(img, &d, err, sizeof(err)), 0, "%s", err);
	cr_assert(d.has_ids);
	cr_assert_eq(d.uid, 1234);
	cr_assert_eq(d.gid, 5);
	cr_assert_str_eq(d.user, "app");
	image_defaults_free(&d);
}
