/* policy.json of a sandbox: built from create's options, rewritten after
 * run-time changes, read for dry runs of a stopped sandbox. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_policy.h"

static char root[64], file[128];

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/mvm-policy-test.XXXXXX");
	cr_assert(mkdtemp(root));
	setenv("MVM_STATE_DIR", root, 1);
	snprintf(file, sizeof(file), "%s/box", root);
	cr_assert_eq(mkdir(file, 0700), 0);
	snprintf(file, sizeof(file), "%s/box/%s", root, SB_POLICY_FILE);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(sandbox_policy, .init = setup, .fini = teardown);

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

static int check(const char *dest, char *why)
{
	return sb_policy_check("box", dest, why, 256);
}

Test(sandbox_policy, options_become_the_stored_policy)
{
	struct vm_net n = { .enabled = true, .mode = "allowlist" };
	char err[512] = "", why[256];

	n.allow[n.nr_allow++] = "203.0.113.0/24:443/tcp";
	n.allow[n.nr_allow++] = "host-loopback:8080/tcp";
	cr_assert_eq(sb_policy_create("box", &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(check("203.0.113.9:443/tcp", why), 1, "%s", why);
	cr_assert_eq(check("203.0.113.9:80/tcp", why), 0, "%s", why);
	cr_assert_eq(check("host-loopback:8080/tcp", why), 1, "%s", why);
	cr_assert_eq(check("198.51.100.1:443/tcp", why), 0, "%s", why);
	cr_assert(strstr(why, "not-allowlisted"), "why: %s", why);
}

Test(sandbox_policy, policy_file_keeps_its_settings_and_gains_allow_rules)
{
	char pf[128], err[512] = "", why[256];
	struct vm_net n = { .enabled = true, .policy_path = pf };
	FILE *f;

	snprintf(pf, sizeof(pf), "%s/in.json", root);
	f = fopen(pf, "w");
	fputs("{\"version\":1,\"mode\":\"open\",\"deny\":[\"203.0.113.7\"],"
	      "\"dns\":{\"ttl_min\":10,\"ttl_max\":60}}", f);
	fclose(f);
	n.allow[n.nr_allow++] = "example.com:443/tcp";
	cr_assert_eq(sb_policy_create("box", &n, err, sizeof(err)), 0, "%s", err);
	cr_assert(strstr(slurp(file), "\"ttl_max\""), "dns settings kept: %s", slurp(file));
	cr_assert_eq(check("198.51.100.1:22/tcp", why), 1, "open mode kept: %s", why);
	cr_assert_eq(check("203.0.113.7:22/tcp", why), 0, "deny kept: %s", why);
	cr_assert(strstr(slurp(file), "example.com:443/tcp"));
}

Test(sandbox_policy, bad_options_name_the_option_and_write_nothing)
{
	struct vm_net n = { .enabled = true };
	char err[512] = "";

	n.allow[n.nr_allow++] = "example.com:443-80";
	cr_assert_neq(sb_policy_create("box", &n, err, sizeof(err)), 0);
	cr_assert(strstr(err, "--allow example.com:443-80"), "%s", err);
	cr_assert(strstr(err, "reversed"), "%s", err);
	cr_assert_neq(access(file, F_OK), 0, "a policy file was written");
}

Test(sandbox_policy, run_time_rules_replace_mode_and_lists_only)
{
	struct vm_net n = { .enabled = true };
	char err[512] = "", why[256];

	n.allow[n.nr_allow++] = "203.0.113.0/24";
	cr_assert_eq(sb_policy_create("box", &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sb_policy_persist(file, "{\"mode\":\"allowlist\","
				       "\"allow\":[\"203.0.113.0/24\",\"host-loopback:5432/tcp\"],"
				       "\"deny\":[\"203.0.113.7\"]}"), 0);
	cr_assert_eq(check("host-loopback:5432/tcp", why), 1, "%s", why);
	cr_assert_eq(check("203.0.113.7:80/tcp", why), 0, "%s", why);
	cr_assert_eq(check("203.0.113.8:80/tcp", why), 1, "%s", why);
	cr_assert(strstr(slurp(file), "\"version\""), "version kept: %s", slurp(file));
	cr_assert_neq(sb_policy_persist(file, "{\"allow\":[]}"), 0, "incomplete show accepted");
	cr_assert_eq(check("203.0.113.8:80/tcp", why), 1, "a failed persist changed the file");
}

Test(sandbox_policy, stopped_sandbox_edits_and_show)
{
	char err[512] = "", why[256], *json = NULL;

	/* No policy file yet (a sandbox from before): allowlist, no rules. */
	cr_assert_eq(sb_policy_show("box", &json, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(json, "{\"mode\":\"allowlist\",\"allow\":[],\"deny\":[]}");
	free(json);
	cr_assert_eq(sb_policy_edit("box", "allow", "203.0.113.0/24", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sb_policy_edit("box", "deny", "203.0.113.7", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(check("203.0.113.9:80/tcp", why), 1, "%s", why);
	cr_assert_eq(check("203.0.113.7:80/tcp", why), 0, "%s", why);
	cr_assert_neq(sb_policy_edit("box", "remove", "nope.example.com", err, sizeof(err)), 0);
	cr_assert(strstr(err, "no rule"), "%s", err);
	cr_assert_neq(sb_policy_edit("box", "allow", "example.com:9-1", err, sizeof(err)), 0);
	cr_assert_eq(sb_policy_edit("box", "remove", "203.0.113.7", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sb_policy_show("box", &json, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(json, "{\"mode\":\"allowlist\",\"allow\":[\"203.0.113.0/24\"],\"deny\":[]}");
	free(json);
}
