/* Operator policy (tools/sandbox/operator_policy.h): scope by owner, the
 * allow-rule ceiling, images by name, the output root. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/sandbox/operator_policy.h"
#include "tools/sandbox/sandbox.h"

static char root[64];
static struct op_policy pol;

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/mvm-oppol-test.XXXXXX");
	cr_assert(mkdtemp(root));
	setenv("MVM_STATE_DIR", root, 1);
	op_policy_init(&pol);
}

static void teardown(void)
{
	char cmd[128];

	op_policy_free(&pol);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(operator_policy, .init = setup, .fini = teardown);

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* A sandbox directory with a config.json recording @owner ("" = none). */
static void make_sandbox(const char *name, const char *owner)
{
	struct sb_config c = { .cpus = 1, .mem = 512 << 20 };
	char dir[PATH_MAX];

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.owner, sizeof(c.owner), "%s", owner);
	snprintf(c.disk, sizeof(c.disk), "data.img");
	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(sb_config_save(&c), 0);
}

Test(operator_policy, owners_have_a_kind_and_a_plain_id)
{
	char o[OP_OWNER_MAX];

	cr_assert(op_owner_ok("mcp:default"));
	cr_assert(op_owner_ok("tenant:alice@example"));
	cr_assert_not(op_owner_ok(""));
	cr_assert_not(op_owner_ok("mcp:"));
	cr_assert_not(op_owner_ok("root:x"));
	cr_assert_not(op_owner_ok("mcp:a b"));
	cr_assert_not(op_owner_ok("mcp:a\n"));
	cr_assert_eq(op_owner_make("tenant", "bob", o, sizeof(o)), 0);
	cr_assert_str_eq(o, "tenant:bob");
	cr_assert_eq(op_owner_make("tenant", "../x", o, sizeof(o)), -EINVAL);
	cr_assert_eq(op_owner_make("admin", "bob", o, sizeof(o)), -EINVAL);
}

Test(operator_policy, owner_round_trips_through_config_json)
{
	struct sb_config c;

	make_sandbox("mine", "mcp:s1");
	cr_assert_eq(sb_config_load("mine", &c), 0);
	cr_assert_str_eq(c.owner, "mcp:s1");
	sb_config_free(&c);
}

Test(operator_policy, a_caller_sees_only_its_own_sandboxes)
{
	char err[256];

	make_sandbox("mine", "mcp:s1");
	make_sandbox("theirs", "mcp:s2");
	make_sandbox("cli", "");
	cr_assert_eq(op_sandbox_access(&pol, "mcp:s1", "mine", err, sizeof(err)), 0);
	cr_assert_eq(op_sandbox_access(&pol, "mcp:s1", "theirs", err, sizeof(err)), -ENOENT);
	cr_assert_str_eq(err, "no sandbox named theirs");
	cr_assert_eq(op_sandbox_access(&pol, "mcp:s1", "cli", err, sizeof(err)), -ENOENT);
	cr_assert_str_eq(err, "no sandbox named cli");
	/* The same words for a name that does not exist or is malformed. */
	cr_assert_eq(op_sandbox_access(&pol, "mcp:s1", "ghost", err, sizeof(err)), -ENOENT);
	cr_assert_str_eq(err, "no sandbox named ghost");
	cr_assert_eq(op_sandbox_access(&pol, "mcp:s1", "../mine", err, sizeof(err)), -ENOENT);
	/* A caller without a valid identity owns nothing, not even ownerless ones. */
	cr_assert_not(op_may_access(&pol, "", ""));
	cr_assert_not(op_may_access(&pol, NULL, "mcp:s1"));
	pol.all_sandboxes = true;
	cr_assert_eq(op_sandbox_access(&pol, "mcp:s1", "theirs", err, sizeof(err)), 0);
	cr_assert_eq(op_sandbox_access(&pol, "mcp:s1", "cli", err, sizeof(err)), 0);
	cr_assert_eq(op_sandbox_access(&pol, "mcp:s1", "ghost", err, sizeof(err)), -ENOENT);
}

static int rule(const char *r)
{
	char err[512];

	return op_check_allow_rule(&pol, r, err, sizeof(err));
}

Test(operator_policy, the_default_ceiling_keeps_rules_in_public_space)
{
	cr_assert_eq(rule("example.com:443/tcp"), 0);
	cr_assert_eq(rule("*.example.com"), 0);
	cr_assert_eq(rule("203.0.113.0/24:443/tcp"), 0);
	cr_assert_eq(rule("198.51.100.7"), 0);
	cr_assert_eq(rule("8.8.0.0/16"), 0);
	cr_assert_eq(rule("[2001:db8::]/48"), 0);
	cr_assert_eq(rule("host-loopback:8080/tcp"), -EPERM);
	cr_assert_eq(rule("127.0.0.1"), -EPERM);
	cr_assert_eq(rule("10.1.2.3:22/tcp"), -EPERM);
	cr_assert_eq(rule("172.20.0.0/16"), -EPERM);
	cr_assert_eq(rule("192.168.1.1"), -EPERM);
	cr_assert_eq(rule("100.100.100.100"), -EPERM);
	cr_assert_eq(rule("169.254.169.254"), -EPERM);
	cr_assert_eq(rule("10.0.2.2"), -EPERM);
	cr_assert_eq(rule("0.0.0.0/0"), -EPERM);
	cr_assert_eq(rule("8.0.0.0/8"), -EPERM);
	cr_assert_eq(rule("[::1]"), -EPERM);
	cr_assert_eq(rule("[::ffff:10.0.0.1]"), -EPERM);
	cr_assert_eq(rule("[fd00::1]"), -EPERM);
	cr_assert_eq(rule("[fe80::1]"), -EPERM);
	cr_assert_eq(rule("[2001:db8::]/32"), -EPERM);
	cr_assert_eq(rule("*.com"), -EINVAL);		/* the rule parser's own refusal */
	cr_assert_eq(rule("localhost"), -EINVAL);
	cr_assert_eq(rule("a.localhost"), -EPERM);
	cr_assert_eq(rule("not a rule!"), -EINVAL);
}

Test(operator_policy, the_hosts_own_addresses_are_refused)
{
	char err[512];

	cr_assert_eq(net_addr_parse("203.0.113.77", &pol.host_addrs[0]), 0);
	pol.n_host_addrs = 1;
	cr_assert_eq(op_check_allow_rule(&pol, "203.0.113.77:80/tcp", err, sizeof(err)), -EPERM);
	cr_assert(strstr(err, "host's own"), "%s", err);
	cr_assert_eq(op_check_allow_rule(&pol, "203.0.113.0/24", err, sizeof(err)), -EPERM);
	cr_assert_eq(op_check_allow_rule(&pol, "203.0.113.78", err, sizeof(err)), 0);
}

Test(operator_policy, allow_max_permits_what_it_covers_and_no_more)
{
	char path[128], err[512];

	snprintf(path, sizeof(path), "%s/allow-max", root);
	write_file(path, "# the operator's ceiling\n\nhost-loopback:8000-8999/tcp\n10.1.0.0/16\n"
			 "*.corp.example\n  [fd00::]/8  \n");
	cr_assert_eq(op_policy_load_allow_max(&pol, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rule("host-loopback:8080/tcp"), 0);
	cr_assert_eq(rule("host-loopback:22/tcp"), -EPERM);
	cr_assert_eq(rule("host-loopback"), -EPERM);		/* every port: wider than the ceiling */
	cr_assert_eq(rule("10.1.2.0/24:22/tcp"), 0);
	cr_assert_eq(rule("10.2.0.1"), -EPERM);
	cr_assert_eq(rule("10.0.0.0/8"), -EPERM);
	cr_assert_eq(rule("git.corp.example"), 0);
	cr_assert_eq(rule("*.a.corp.example"), 0);
	cr_assert_eq(rule("corp.example"), 0);			/* a public name: the default allows it */
	cr_assert_eq(rule("[fd12::1]"), 0);
	cr_assert_eq(rule("192.168.0.1"), -EPERM);
}

Test(operator_policy, a_bad_allow_max_file_names_its_line_and_changes_nothing)
{
	char path[128], err[512] = "";

	snprintf(path, sizeof(path), "%s/allow-max", root);
	write_file(path, "10.1.0.0/16\n\nthis is no rule\n");
	cr_assert_eq(op_policy_load_allow_max(&pol, path, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "line 3"), "%s", err);
	cr_assert_eq(pol.allow_max.n, 0);
	cr_assert_eq(rule("10.1.2.3"), -EPERM);
	cr_assert_lt(op_policy_load_allow_max(&pol, "/nonexistent/x", err, sizeof(err)), 0);
}

Test(operator_policy, images_by_store_name_only)
{
	char store[128], img[128], out[PATH_MAX], err[512];

	snprintf(store, sizeof(store), "%s/images", root);
	cr_assert_eq(mkdir(store, 0700), 0);
	setenv("MVM_IMAGE_DIR", store, 1);
	snprintf(img, sizeof(img), "%s/debian.ext4", store);
	write_file(img, "x");
	cr_assert_eq(op_image_resolve(&pol, "debian", out, sizeof(out), err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(out, img);
	cr_assert_eq(op_image_resolve(&pol, img, out, sizeof(out), err, sizeof(err)), -EPERM);
	cr_assert_eq(op_image_resolve(&pol, "/etc/passwd", out, sizeof(out), err, sizeof(err)), -EPERM);
	cr_assert_eq(op_image_resolve(&pol, "../x", out, sizeof(out), err, sizeof(err)), -EPERM);
	/* A name not in the store never falls back to the current directory. */
	cr_assert_eq(chdir("/etc"), 0);
	cr_assert_eq(op_image_resolve(&pol, "passwd", out, sizeof(out), err, sizeof(err)), -ENOENT);
	/* A symlink planted in the store is not an image. */
	snprintf(img, sizeof(img), "%s/evil.ext4", store);
	cr_assert_eq(symlink("/etc/passwd", img), 0);
	cr_assert_eq(op_image_resolve(&pol, "evil", out, sizeof(out), err, sizeof(err)), -ENOENT);
	pol.allow_host_paths = true;
	cr_assert_eq(op_image_resolve(&pol, "/srv/img.ext4", out, sizeof(out), err, sizeof(err)), 0);
	cr_assert_str_eq(out, "/srv/img.ext4");
	cr_assert_eq(op_check_template(&pol, "py", err, sizeof(err)), 0);
	cr_assert_eq(op_check_template(&pol, "/tmp/t", err, sizeof(err)), -EPERM);
	cr_assert_eq(op_check_template(&pol, "a\n", err, sizeof(err)), -EPERM);
}

Test(operator_policy, the_default_output_root_is_private)
{
	char state[128], err[512], want[256];
	struct stat st;

	snprintf(state, sizeof(state), "%s/xdg", root);
	setenv("XDG_STATE_HOME", state, 1);
	cr_assert_eq(op_out_root_set(&pol, NULL, "mcp-out", err, sizeof(err)), 0, "%s", err);
	snprintf(want, sizeof(want), "%s/mvm/mcp-out", state);
	cr_assert_str_eq(pol.out_root, want);
	cr_assert_eq(stat(want, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700);
	cr_assert_eq(chmod(want, 0777), 0);
	cr_assert_eq(op_out_root_set(&pol, want, NULL, err, sizeof(err)), -EPERM);
}

Test(operator_policy, outputs_resolve_beneath_the_root_and_never_through_a_symlink)
{
	char out[128], abs[PATH_MAX], leaf[NAME_MAX + 1], err[512], p[256];
	int fd = -1;

	snprintf(out, sizeof(out), "%s/out", root);
	cr_assert_eq(op_out_root_set(&pol, out, NULL, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(op_out_resolve(&pol, "a/b/bundle", false, &fd, leaf, abs, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(leaf, "bundle");
	snprintf(p, sizeof(p), "%s/a/b/bundle", pol.out_root);
	cr_assert_str_eq(abs, p);
	cr_assert_eq(mkdirat(fd, leaf, 0700), 0);
	close(fd);
	cr_assert_eq(access(p, F_OK), 0);
	/* Exists now: refused. */
	cr_assert_eq(op_out_resolve(&pol, p, false, &fd, leaf, abs, err, sizeof(err)), -EEXIST);
	/* Lexically out. */
	cr_assert_eq(op_out_resolve(&pol, "../x", false, &fd, leaf, abs, err, sizeof(err)), -EINVAL);
	cr_assert_eq(op_out_resolve(&pol, "a/./x", false, &fd, leaf, abs, err, sizeof(err)), -EINVAL);
	cr_assert_eq(op_out_resolve(&pol, "/tmp/x", false, &fd, leaf, abs, err, sizeof(err)), -EINVAL);
	cr_assert_eq(op_out_resolve(&pol, "", false, &fd, leaf, abs, err, sizeof(err)), -EINVAL);
	/* A symlink inside the root pointing out is never followed. */
	snprintf(p, sizeof(p), "%s/esc", pol.out_root);
	cr_assert_eq(symlink("/tmp", p), 0);
	cr_assert_lt(op_out_resolve(&pol, "esc/x", false, &fd, leaf, abs, err, sizeof(err)), 0);
	cr_assert(strstr(err, "symlink"), "%s", err);
	cr_assert_lt(op_out_resolve(&pol, "esc/y/z", false, &fd, leaf, abs, err, sizeof(err)), 0);
	cr_assert_neq(access("/tmp/y", F_OK), 0, "a directory was made through the symlink");
	/* Nor one as the leaf (it exists). */
	cr_assert_eq(op_out_resolve(&pol, "esc", false, &fd, leaf, abs, err, sizeof(err)), -EEXIST);
}
