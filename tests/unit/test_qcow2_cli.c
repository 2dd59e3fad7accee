/* `mvm image` verb: exit codes and the images it creates. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdlib.h>
#include <string.h>

#include "images/qcow2.h"
#include "tests/unit/qcow2_testutil.h"
#include "tools/cli/cmd_image.h"

static char *dir;

static void setup(void)
{
	dir = qt_mkdtemp();
	cr_redirect_stdout();	/* info/ls/usage text is not the test's output */
	cr_redirect_stderr();
}

static void teardown(void)
{
	qt_rmtree(dir);
}

TestSuite(qcow2_cli, .init = setup, .fini = teardown);

#define RUN(...) run((char *[]){ "image", __VA_ARGS__, NULL })

static int run(char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return cmd_image(argc, argv);
}

Test(qcow2_cli, create_info_ls)
{
	char *base = qt_path(dir, "base.raw"), *ov = qt_path(dir, "ov.qcow2");
	char *ov2 = qt_path(dir, "ov2.qcow2"), *plain = qt_path(dir, "p.qcow2");
	struct qcow2_info info;

	qt_random_file(base, 4 << 20, 1);
	cr_assert_eq(RUN("create", "--base", base, ov), 0);
	cr_assert_eq(qcow2_info_get(ov, NULL, &info), 0);
	cr_assert_eq(info.virtual_size, 4 << 20);
	cr_assert_eq(info.chain_len, 1);
	cr_assert_str_eq(info.chain[0].format, "raw");
	qcow2_info_free(&info);
	/* A qcow2 base is never taken for raw by default. */
	cr_assert_eq(RUN("create", "--base", ov, ov2), 1);
	cr_assert_eq(RUN("create", "--base", ov, "--base-format", "qcow2", "--size", "1G",
			 "--cluster-size", "4K", ov2), 0);
	cr_assert_eq(RUN("create", "--size", "8M", plain), 0);
	cr_assert_eq(qt_run(NULL, "qemu-img check -q %s && qemu-img check -q %s", ov2, plain), 0);
	cr_assert_eq(RUN("info", ov2, "--json"), 0);
	cr_assert_eq(RUN("info", "--format", "raw", base), 0);
	cr_assert_eq(RUN("info", "--format", "qcow2", base), 1);
	cr_assert_eq(setenv("XDG_DATA_HOME", dir, 1), 0);
	cr_assert_eq(RUN("ls"), 0);
	free(base), free(ov), free(ov2), free(plain);
}

Test(qcow2_cli, usage_errors)
{
	char *ov = qt_path(dir, "x.qcow2");

	cr_assert_eq(run((char *[]){ "image", NULL }), 2);
	cr_assert_eq(RUN("--help"), 0);
	cr_assert_eq(RUN("frobnicate"), 2);
	cr_assert_eq(RUN("create"), 2);
	cr_assert_eq(RUN("create", ov), 2);	/* neither --base nor --size */
	cr_assert_eq(RUN("create", "--base", "b", "--base-format", "vmdk", ov), 2);
	cr_assert_eq(RUN("create", "--size", "1M", "--cluster-size", "3K", ov), 2);
	cr_assert_eq(RUN("info"), 2);
	cr_assert_eq(RUN("info", "/nonexistent/x.qcow2"), 1);
	cr_assert_eq(RUN("ls", "extra"), 2);
	free(ov);
}
