/* CLI number parsing and `mvm run` option handling. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "vmm/vm.h"

#include "tools/cli/cmd_run.h"

#define MAX_ENV RUN_MAX_ENV
#define RUN_OPTS_ALLOC sizeof(struct run_opts)

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static uint64_t size_ok(const char *s)
{
	uint64_t v = 0xdeadbeef;

	cr_assert_eq(cli_parse_size(s, &v), 0, "'%s' rejected", s);
	return v;
}

Test(vmm_cli, parse_size_accepts)
{
	cr_assert_eq(size_ok("512M"), 512 * MiB);
	cr_assert_eq(size_ok("512m"), 512 * MiB);
	cr_assert_eq(size_ok("2G"), 2 * GiB);
	cr_assert_eq(size_ok("2g"), 2 * GiB);
	cr_assert_eq(size_ok("2GiB"), 2 * GiB);
	cr_assert_eq(size_ok("2Gi"), 2 * GiB);
	cr_assert_eq(size_ok("2GB"), 2 * GiB);
	cr_assert_eq(size_ok("64"), 64 * MiB, "no suffix means MiB");
	cr_assert_eq(size_ok("1K"), 1024);
	cr_assert_eq(size_ok("1048576K"), GiB);
	cr_assert_eq(size_ok("1T"), 1ULL << 40);
	cr_assert_eq(size_ok("0"), 0);
	cr_assert_eq(size_ok("16777215T"), 16777215ULL << 40, "largest T value");
}

Test(vmm_cli, parse_size_rejects)
{
	static const char *bad[] = {
		"", "-1", "-1G", "12X", "2i", "2iB", "G", "M", "1.5G", "2 G", "2G ", "2GiBs",
		"2Gb1", "0x10M", "1KK", "2B", "abc",
		"18446744073709551616",		/* 2^64 */
		"99999999999999999999999M",
		"17592186044416M",		/* 2^44 MiB = 2^64 bytes */
		"16777216T",			/* 2^64 bytes */
		"18014398509481984K",		/* 2^54 KiB = 2^64 bytes */
	};
	uint64_t v = 77;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(cli_parse_size(bad[i], &v), -EINVAL, "'%s' accepted", bad[i]);
	cr_assert_eq(cli_parse_size(NULL, &v), -EINVAL);
	cr_assert_eq(v, 77, "output written on failure");
}

Test(vmm_cli, parse_int_bounds)
{
	long v = -5;

	cr_assert_eq(cli_parse_int("1", 1, 64, &v), 0);
	cr_assert_eq(v, 1);
	cr_assert_eq(cli_parse_int("64", 1, 64, &v), 0);
	cr_assert_eq(v, 64);
	cr_assert_eq(cli_parse_int("-3", -5, 5, &v), 0);
	cr_assert_eq(v, -3);
	v = 99;
	cr_assert_eq(cli_parse_int("0", 1, 64, &v), -EINVAL);
	cr_assert_eq(cli_parse_int("65", 1, 64, &v), -EINVAL);
	cr_assert_eq(cli_parse_int("", 1, 64, &v), -EINVAL);
	cr_assert_eq(cli_parse_int(NULL, 1, 64, &v), -EINVAL);
	cr_assert_eq(cli_parse_int("abc", 1, 64, &v), -EINVAL);
	cr_assert_eq(cli_parse_int("4x", 1, 64, &v), -EINVAL);
	cr_assert_eq(cli_parse_int("4 ", 1, 64, &v), -EINVAL);
	cr_assert_eq(cli_parse_int("1.0", 1, 64, &v), -EINVAL);
	cr_assert_eq(cli_parse_int("99999999999999999999", 1, LONG_MAX, &v), -EINVAL);
	cr_assert_eq(cli_parse_int("-99999999999999999999", LONG_MIN, 0, &v), -EINVAL);
	cr_assert_eq(v, 99);
}

/* ---- run_parse_args ---- */

struct args {
	int argc;
	char *argv[32];
};

/* Writable copies: the parser edits ":ro" off disk paths in place. */
static struct args *mk(const char *first, ...)
{
	struct args *a = calloc(1, sizeof(*a));
	va_list ap;
	const char *s;

	a->argv[a->argc++] = strdup("run");
	va_start(ap, first);
	for (s = first; s; s = va_arg(ap, const char *))
		a->argv[a->argc++] = strdup(s);
	va_end(ap);
	return a;
}

static void drop(struct args *a)
{
	for (int i = 0; i < a->argc; i++)
		free(a->argv[i]);
	free(a);
}

static int run_parse(struct run_opts *o, int argc, char **argv)
{
	return run_parse_args(o, argc, argv);
}

static int parse(struct run_opts *o, struct args *a)
{
	return run_parse(o, a->argc, a->argv);
}

#define EXPECT_REJECT(...)                                                \
	do {                                                              \
		struct run_opts *o_ = calloc(1, RUN_OPTS_ALLOC);             \
		struct args *a_ = mk(__VA_ARGS__, NULL);                  \
		cr_assert_eq(parse(o_, a_), -1, "accepted: %s %s", a_->argv[1], \
			     a_->argc > 2 ? a_->argv[2] : "");            \
		drop(a_);                                                 \
		free(o_);                                                 \
	} while (0)

Test(vmm_cli, run_options_before_the_command)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("--cpus", "2", "--memory", "1G", "-e", "A=1", "--env", "B=x y",
			    "-w", "/srv", "--kernel", "/k", "--cmdline", "quiet", "--console",
			    "--timing", "--", "ls", "-l", "--cpus", "9", NULL);

	cr_assert_eq(parse(o, a), 0);
	cr_assert_eq(o->cfg.cpus, 2);
	cr_assert_eq(o->cfg.mem_size, GiB);
	cr_assert_str_eq(o->cfg.kernel_path, "/k");
	cr_assert_str_eq(o->cfg.workdir, "/srv");
	cr_assert_str_eq(o->cfg.extra_cmdline, "quiet");
	cr_assert(o->timing);
	cr_assert(o->cfg.console_fd >= 0);
	cr_assert_str_eq(o->cfg.env[0], "A=1");
	cr_assert_str_eq(o->cfg.env[1], "B=x y");
	cr_assert_null(o->cfg.env[2]);
	/* Everything after "--" is the command, options included. */
	cr_assert_str_eq(o->cfg.argv[0], "ls");
	cr_assert_str_eq(o->cfg.argv[1], "-l");
	cr_assert_str_eq(o->cfg.argv[2], "--cpus");
	cr_assert_str_eq(o->cfg.argv[3], "9");
	cr_assert_null(o->cfg.argv[4]);
	drop(a);
	free(o);
}

Test(vmm_cli, run_defaults_and_command_without_separator)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("echo", "-n", "--memory", "x", NULL);

	cr_assert_eq(parse(o, a), 0);
	cr_assert_eq(o->cfg.cpus, 1);
	cr_assert_eq(o->cfg.mem_size, 256 * MiB);
	cr_assert_eq(o->cfg.nr_disks, 0);
	cr_assert_not(o->cfg.root_on_disk);
	cr_assert_null(o->cfg.initrd_path);
	cr_assert_eq(o->cfg.console_fd, -1);
	/* Option parsing stops at the command: its own flags are not mvm's. */
	cr_assert_str_eq(o->cfg.argv[0], "echo");
	cr_assert_str_eq(o->cfg.argv[1], "-n");
	cr_assert_str_eq(o->cfg.argv[2], "--memory");
	cr_assert_null(o->cfg.env[0]);
	drop(a);
	free(o);
}

Test(vmm_cli, run_missing_command)
{
	EXPECT_REJECT("--cpus", "2");
	EXPECT_REJECT("--cpus", "2", "--");
	EXPECT_REJECT("--");
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	char *argv[] = { "run", NULL };
	cr_assert_eq(run_parse(o, 1, argv), -1);
	free(o);
}

Test(vmm_cli, run_bad_cpus)
{
	EXPECT_REJECT("--cpus", "0", "--", "true");
	EXPECT_REJECT("--cpus", "65", "--", "true");
	EXPECT_REJECT("--cpus", "abc", "--", "true");
	EXPECT_REJECT("--cpus", "-1", "--", "true");
	EXPECT_REJECT("--cpus", "", "--", "true");
	EXPECT_REJECT("--cpus=4x", "--", "true");
	EXPECT_REJECT("--cpus");
}

Test(vmm_cli, run_max_cpus_accepted)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("--cpus=64", "true", NULL);

	cr_assert_eq(parse(o, a), 0);
	cr_assert_eq(o->cfg.cpus, 64);
	drop(a);
	free(o);
}

Test(vmm_cli, run_bad_memory) { EXPECT_REJECT("--memory", "lots", "--", "true"); }
Test(vmm_cli, run_bad_memory_suffix) { EXPECT_REJECT("--memory=12X", "--", "true"); }
Test(vmm_cli, run_negative_memory) { EXPECT_REJECT("--memory", "-512M", "--", "true"); }
Test(vmm_cli, run_unknown_option) { EXPECT_REJECT("--bogus", "--", "true"); }
Test(vmm_cli, run_unknown_short_option) { EXPECT_REJECT("-q", "--", "true"); }

Test(vmm_cli, run_rootfs_and_initrd_exclusive)
{
	EXPECT_REJECT("--rootfs", "r.img", "--initrd", "i.cpio", "--", "true");
	EXPECT_REJECT("--initrd", "i.cpio", "--rootfs", "r.img", "--", "true");
	EXPECT_REJECT("--rootfs", "a.img", "--rootfs", "b.img", "--", "true");
}

Test(vmm_cli, run_env_needs_key_and_equals)
{
	EXPECT_REJECT("-e", "FOO", "--", "true");
	EXPECT_REJECT("--env", "=value", "--", "true");
	EXPECT_REJECT("-e", "", "--", "true");
}

Test(vmm_cli, run_env_value_may_contain_equals_and_be_empty)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("-e", "A=b=c", "-e", "E=", "--", "env", NULL);

	cr_assert_eq(parse(o, a), 0);
	cr_assert_str_eq(o->cfg.env[0], "A=b=c");
	cr_assert_str_eq(o->cfg.env[1], "E=");
	cr_assert_null(o->cfg.env[2]);
	drop(a);
	free(o);
}

Test(vmm_cli, run_too_many_env)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	int argc = 1 + 2 * (MAX_ENV + 1) + 2;
	char **argv = calloc((size_t)argc + 1, sizeof(char *));
	char (*vals)[16] = calloc(MAX_ENV + 1, 16);
	int n = 0;

	argv[n++] = "run";
	for (int i = 0; i <= MAX_ENV; i++) {
		snprintf(vals[i], 16, "V%d=1", i);
		argv[n++] = "-e";
		argv[n++] = vals[i];
	}
	argv[n++] = "--";
	argv[n++] = "true";
	cr_assert_eq(run_parse(o, n, argv), -1, "env array would overflow");
	/* MAX_ENV itself is fine. */
	n = 0;
	argv[n++] = "run";
	for (int i = 0; i < MAX_ENV; i++) {
		argv[n++] = "-e";
		argv[n++] = vals[i];
	}
	argv[n++] = "--";
	argv[n++] = "true";
	argv[n] = NULL;
	cr_assert_eq(run_parse(o, n, argv), 0);
	cr_assert_str_eq(o->cfg.env[MAX_ENV - 1], vals[MAX_ENV - 1]);
	cr_assert_null(o->cfg.env[MAX_ENV]);
	free(vals);
	free(argv);
	free(o);
}

Test(vmm_cli, run_disks_in_order_with_read_only)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("--disk", "a.img:ro", "--disk", "b.img", "--disk", "c:ro:x",
			    "--", "true", NULL);

	cr_assert_eq(parse(o, a), 0);
	cr_assert_eq(o->cfg.nr_disks, 3);
	cr_assert_str_eq(o->cfg.disks[0].path, "a.img");
	cr_assert(o->cfg.disks[0].read_only);
	cr_assert_str_eq(o->cfg.disks[1].path, "b.img");
	cr_assert_not(o->cfg.disks[1].read_only);
	/* Only a trailing ":ro" is the flag. */
	cr_assert_str_eq(o->cfg.disks[2].path, "c:ro:x");
	cr_assert_not(o->cfg.disks[2].read_only);
	cr_assert_not(o->cfg.root_on_disk);
	drop(a);
	free(o);
}

Test(vmm_cli, run_rootfs_becomes_the_first_disk)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("--disk", "data1.img", "--disk", "data2.img:ro", "--rootfs",
			    "root.img:ro", "--disk", "data3.img", "--", "true", NULL);

	cr_assert_eq(parse(o, a), 0);
	cr_assert(o->cfg.root_on_disk);
	cr_assert_eq(o->cfg.nr_disks, 4);
	cr_assert_str_eq(o->cfg.disks[0].path, "root.img");
	cr_assert(o->cfg.disks[0].read_only);
	/* The others keep their relative order behind it. */
	cr_assert_str_eq(o->cfg.disks[1].path, "data1.img");
	cr_assert_not(o->cfg.disks[1].read_only);
	cr_assert_str_eq(o->cfg.disks[2].path, "data2.img");
	cr_assert(o->cfg.disks[2].read_only);
	cr_assert_str_eq(o->cfg.disks[3].path, "data3.img");
	drop(a);
	free(o);
}

Test(vmm_cli, run_too_many_disks)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("--disk", "1", "--disk", "2", "--disk", "3", "--disk", "4",
			    "--disk", "5", "--disk", "6", "--disk", "7", "--disk", "8",
			    "--disk", "9", "--", "true", NULL);

	cr_assert_eq(VM_MAX_DISKS, 8);
	cr_assert_eq(parse(o, a), -1);
	drop(a);
	free(o);
}

Test(vmm_cli, run_help)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("--help", NULL);

	cr_assert_eq(parse(o, a), 1);
	drop(a);
	free(o);
}

/* create's options on run: --copy HOST:GUEST (repeatable), --disk-size SIZE. */
Test(vmm_cli, run_takes_create_options)
{
	struct run_opts *o = calloc(1, RUN_OPTS_ALLOC);
	struct args *a = mk("--copy", "./src:/src", "--copy", "a:b", "--disk-size", "2G",
			    "--env", "K=V", "--", "true", NULL);

	cr_assert_eq(parse(o, a), 0);
	cr_assert_eq(o->ncopies, 2);
	cr_assert_str_eq(o->copies[0], "./src:/src");
	cr_assert_eq(o->disk_size, 2048 * MiB);
	cr_assert_str_eq(o->env[0], "K=V");
	cr_assert_eq(o->cfg.nr_disks, 0, "the /data disk is added when the sandbox is made");
	drop(a);
	free(o);
}

Test(vmm_cli, run_bad_copy) { EXPECT_REJECT("--copy", "no-colon", "--", "true"); }
Test(vmm_cli, run_tiny_disk_size) { EXPECT_REJECT("--disk-size", "1M", "--", "true"); }
Test(vmm_cli, run_bad_disk_size) { EXPECT_REJECT("--disk-size", "big", "--", "true"); }
