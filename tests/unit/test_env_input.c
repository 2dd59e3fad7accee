/* --env-fd / --env-file records (tools/sandbox/env_input.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/sandbox/env_input.h"

static int from_pipe(const char *data, size_t len, char **env, int *n, int max, char *err)
{
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], data, len), (ssize_t)len);
	close(p[1]);
	return env_input_fd(p[0], env, n, max, err, 256);
}

Test(env_input, nul_separated_records_keep_newlines_in_values)
{
	static const char data[] = "A=1\0B=two\nlines\0\0C=\0D=x=y";
	char *env[8], err[256];
	int n = 1;

	env[0] = "KEEP=me";
	cr_assert_eq(from_pipe(data, sizeof(data) - 1, env, &n, 8, err), 0, "%s", err);
	cr_assert_eq(n, 5);
	cr_assert_str_eq(env[1], "A=1");
	cr_assert_str_eq(env[2], "B=two\nlines");
	cr_assert_str_eq(env[3], "C=");
	cr_assert_str_eq(env[4], "D=x=y");
	for (int i = 1; i < n; i++)
		free(env[i]);
}

Test(env_input, a_bad_record_is_refused_without_echoing_it)
{
	static const char bad[] = "A=1\0=secret\0";
	static const char nokey[] = "justavalue";
	char *env[8], err[256];
	int n = 0;

	cr_assert_eq(from_pipe(bad, sizeof(bad) - 1, env, &n, 8, err), -EINVAL);
	cr_assert_null(strstr(err, "secret"), "%s", err);
	for (int i = 0; i < n; i++)
		free(env[i]);
	n = 0;
	cr_assert_eq(from_pipe(nokey, sizeof(nokey) - 1, env, &n, 8, err), -EINVAL);
	cr_assert_eq(n, 0);
}

Test(env_input, the_count_is_capped)
{
	static const char data[] = "A=1\0B=2\0C=3\0";
	char *env[8], err[256];
	int n = 0;

	cr_assert_eq(from_pipe(data, sizeof(data) - 1, env, &n, 2, err), -E2BIG);
	for (int i = 0; i < n; i++)
		free(env[i]);
	cr_assert_lt(env_input_file("/nonexistent/env", env, &n, 8, err, sizeof(err)), 0);
}

Test(env_input, the_option_names_itself_in_errors)
{
	char *env[4], err[512];
	int n = 0;

	cr_assert_eq(env_input_opt("--env-fd", "3x", env, &n, 4, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "--env-fd"), "%s", err);
	cr_assert_eq(env_input_opt("--env-fd", "-1", env, &n, 4, err, sizeof(err)), -EINVAL);
	cr_assert_lt(env_input_opt("--env-file", "/nonexistent/e", env, &n, 4, err, sizeof(err)), 0);
	cr_assert(strstr(err, "--env-file /nonexistent/e"), "%s", err);
	cr_assert_eq(n, 0);
}
