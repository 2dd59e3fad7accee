/*
 * `mvm rm NAME...` on stopped sandboxes (state directories only, no VMM):
 * every name is attempted, a failure does not stop the others, each failure
 * is named and makes the exit status non-zero (issue 26).
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli/cmd_sandbox.h"

static char root[64];

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/mvm-rm-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	setenv("MVM_STATE_DIR", root, 1);
	cr_redirect_stderr();
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
	unsetenv("MVM_STATE_DIR");
}

TestSuite(cmd_rm, .init = setup, .fini = teardown);

/* A stopped sandbox's state directory, with a file in it. */
static void make(const char *name)
{
	char p[160];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, name);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/%s/config.json", root, name);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("{}\n", f);
	fclose(f);
}

static bool exists(const char *name)
{
	char p[160];

	snprintf(p, sizeof(p), "%s/%s", root, name);
	return !access(p, F_OK);
}

static int rm(const char *const *names)
{
	char *argv[8] = { "rm", "-f" };
	int argc = 2;

	for (; *names; names++)
		argv[argc++] = (char *)*names;
	argv[argc] = NULL;
	return cmd_rm(argc, argv);
}

Test(cmd_rm, removes_every_name)
{
	make("a");
	make("b");
	make("c");
	cr_assert_eq(rm((const char *[]){ "a", "b", "c", NULL }), 0);
	cr_expect(!exists("a") && !exists("b") && !exists("c"));
}

Test(cmd_rm, a_missing_name_fails_named_and_the_others_go)
{
	char buf[512] = "";
	FILE *err;

	make("a");
	make("b");
	cr_assert_neq(rm((const char *[]){ "a", "nope", "b", "bad/name", NULL }), 0);
	cr_expect(!exists("a") && !exists("b"), "a name after a failed one was not removed");
	fflush(stderr);
	err = cr_get_redirected_stderr();
	cr_assert_not_null(err);
	(void)!fread(buf, 1, sizeof(buf) - 1, err);
	cr_expect(strstr(buf, "no sandbox named nope"), "%s", buf);
	cr_expect(strstr(buf, "no sandbox named bad/name"), "%s", buf);
}
