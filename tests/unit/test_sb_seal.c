/* The host key, the seals of a sandbox's records, and the ranges of a
 * config's numbers (common/host_key.h, tools/sandbox/sb_seal.h,
 * tools/sandbox/sandbox_config.c): issue 27 items 1 and 3. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/host_key.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sb_seal.h"

static char root[64];

static void setup(void)
{
	char p[128];

	snprintf(root, sizeof(root), "/tmp/mvm-seal-test.XXXXXX");
	cr_assert(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/state", root);
	setenv("MVM_STATE_DIR", p, 1);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/cfg/mvm/host.key", root);
	setenv("MVM_HOST_KEY", p, 1);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(seal, .init = setup, .fini = teardown);

static struct sb_config config(const char *name)
{
	struct sb_config c = { .cpus = 1, .mem = 256 << 20, .cid = 3, .disk_format = "raw" };

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.disk, sizeof(c.disk), "data.img");
	return c;
}

static void make_sandbox(const char *name)
{
	char p[256];
	struct sb_config c = config(name);

	snprintf(p, sizeof(p), "%s/state/%s", root, name);
	cr_assert_eq(mkdir(p, 0700), 0);
	cr_assert_eq(sb_config_save(&c), 0);
}

static void put(const char *name, const char *file, const char *text)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/state/%s/%s", root, name, file);
	cr_assert_eq(file_write_atomic(p, text), 0);
}

Test(seal, the_key_is_made_private_on_first_use_and_kept)
{
	uint8_t a[HOST_KEY_LEN], b[HOST_KEY_LEN];
	char p[128], err[256] = "";
	bool made = false;
	struct stat st;

	cr_assert_eq(host_key_get(a, &made, err, sizeof(err)), 0, "%s", err);
	cr_assert(made);
	snprintf(p, sizeof(p), "%s/cfg/mvm/host.key", root);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(st.st_size, HOST_KEY_LEN);
	cr_assert_eq(host_key_get(b, &made, err, sizeof(err)), 0, "%s", err);
	cr_assert(!made);
	cr_assert_eq(memcmp(a, b, HOST_KEY_LEN), 0);
}

Test(seal, a_key_others_could_read_or_a_symlink_is_refused)
{
	uint8_t k[HOST_KEY_LEN];
	char p[128], q[140], err[256] = "";

	cr_assert_eq(host_key_get(k, NULL, err, sizeof(err)), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/cfg/mvm/host.key", root);
	cr_assert_eq(chmod(p, 0644), 0);
	cr_assert_eq(host_key_get(k, NULL, err, sizeof(err)), -EPERM);
	cr_assert(strstr(err, "not a private file"), "%s", err);
	cr_assert_eq(chmod(p, 0600), 0);
	snprintf(q, sizeof(q), "%s.real", p);
	cr_assert_eq(rename(p, q), 0);
	cr_assert_eq(symlink(q, p), 0);
	cr_assert_neq(host_key_get(k, NULL, err, sizeof(err)), 0);
}

/* Length-prefixed parts: moving a byte between parts changes the MAC, and
 * so does another key. */
Test(seal, the_mac_binds_each_part_and_the_key)
{
	uint8_t k1[HOST_KEY_LEN] = { 1 }, k2[HOST_KEY_LEN] = { 2 };
	const void *ab_c[] = { "ab", "c" }, *a_bc[] = { "a", "bc" };
	size_t l1[] = { 2, 1 }, l2[] = { 1, 2 };
	char h1[HOST_MAC_HEX], h2[HOST_MAC_HEX], h3[HOST_MAC_HEX], h4[HOST_MAC_HEX];

	host_mac_with(k1, ab_c, l1, 2, h1);
	host_mac_with(k1, a_bc, l2, 2, h2);
	host_mac_with(k2, ab_c, l1, 2, h3);
	host_mac_with(k1, ab_c, l1, 2, h4);
	cr_assert(!host_mac_equal(h1, h2));
	cr_assert(!host_mac_equal(h1, h3));
	cr_assert(host_mac_equal(h1, h4));
	cr_assert(!host_mac_equal(h1, "00"));
}

Test(seal, a_config_the_cli_wrote_passes)
{
	char err[512] = "";

	make_sandbox("box");
	cr_assert_eq(sb_seal_check("box", err, sizeof(err)), 0, "%s", err);
}

/* What a taken-over VMM can do to its own state directory. */
Test(seal, an_edited_config_is_refused_saying_so)
{
	char err[512] = "";

	make_sandbox("box");
	put("box", "config.json", "{\"cpus\": 1, \"kernel\": \"/etc/shadow\"}");
	cr_assert_eq(sb_seal_check("box", err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "config.json of sandbox box changed since mvm wrote it"), "%s", err);
}

Test(seal, a_removed_seal_is_refused_not_made_again)
{
	char p[256], err[512] = "";

	make_sandbox("box");
	snprintf(p, sizeof(p), "%s/state/box/config.json.mac", root);
	cr_assert_eq(unlink(p), 0);
	put("box", "config.json", "{\"cpus\": 1, \"kernel\": \"/etc/shadow\"}");
	cr_assert_eq(sb_seal_check("box", err, sizeof(err)), -ENODATA);
	cr_assert(strstr(err, "is missing"), "%s", err);
}

Test(seal, another_sandboxs_sealed_config_does_not_fit)
{
	char a[256], b[256], err[512] = "";

	make_sandbox("one");
	make_sandbox("two");
	for (int i = 0; i < 2; i++) {
		const char *f = i ? "config.json.mac" : "config.json";

		snprintf(a, sizeof(a), "%s/state/one/%s", root, f);
		snprintf(b, sizeof(b), "%s/state/two/%s", root, f);
		cr_assert_eq(rename(a, b), 0);
	}
	cr_assert_eq(sb_seal_check("two", err, sizeof(err)), -EBADMSG);
}

Test(seal, an_unsealed_restore_from_is_refused)
{
	char err[512] = "";

	make_sandbox("box");
	put("box", "restore-from", "/home/someone/evil\n");
	cr_assert_eq(sb_seal_check("box", err, sizeof(err)), -ENODATA);
	cr_assert(strstr(err, "restore-from of sandbox box"), "%s", err);
	cr_assert_eq(sb_seal("box", "restore-from"), 0);
	cr_assert_eq(sb_seal_check("box", err, sizeof(err)), 0, "%s", err);
}

/* A state root from before seals: its sandboxes are sealed on the first
 * check, once; a seal removed later is a change. */
Test(seal, directories_from_before_seals_are_sealed_once)
{
	char p[256], err[512] = "";

	snprintf(p, sizeof(p), "%s/state/old", root);
	cr_assert_eq(mkdir(p, 0700), 0);
	put("old", "config.json", "{\"cpus\": 1, \"disk\": \"data.img\", \"disk_format\": \"raw\"}");
	cr_assert_eq(sb_seal_check("old", err, sizeof(err)), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/state/old/config.json.mac", root);
	cr_assert_eq(unlink(p), 0);
	cr_assert_eq(sb_seal_check("old", err, sizeof(err)), -ENODATA);
}

/* Out-of-range numbers make the config invalid instead of wrapping. */
Test(seal, every_number_of_a_config_is_range_checked)
{
	static const char *const bad[] = {
		"\"cpu_quota\": 4294967296", "\"cpu_quota\": 6401", "\"cpu_quota\": -1",
		"\"cpu_quota\": 1.5", "\"cpus\": 0", "\"cpus\": 65", "\"memory\": -1",
		"\"memory\": 1e300", "\"disk_size\": -5", "\"cid\": -1", "\"cid\": 1e20",
		"\"created\": -1", "\"cpus\": \"1\"", "\"expires\": -1", "\"expires\": 1e12",
	};
	struct sb_config c;
	char text[512];

	make_sandbox("box");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* First: cJSON finds the first of two equal keys. */
		snprintf(text, sizeof(text), "{%s, \"cpus\": 1, \"memory\": 268435456, \"disk\": "
			 "\"data.img\", \"disk_format\": \"raw\"}", bad[i]);
		put("box", "config.json", text);
		cr_expect_eq(sb_config_load("box", &c), -EINVAL, "%s accepted", bad[i]);
	}
	put("box", "config.json", "{\"cpus\": 2, \"memory\": 268435456, \"cpu_quota\": 6400, "
	    "\"disk\": \"data.img\", \"disk_format\": \"raw\"}");
	cr_assert_eq(sb_config_load("box", &c), 0);
	cr_assert_eq(c.cpu_quota, 6400);
	sb_config_free(&c);
}

/* A baseline manifest names where promote writes (host_src): read only as
 * sealed, the bytes returned being the ones checked. */
Test(seal, a_baseline_manifest_is_read_only_as_sealed)
{
	char p[256], err[512] = "", *text = NULL;

	make_sandbox("box");
	snprintf(p, sizeof(p), "%s/state/box/baseline", root);
	cr_assert_eq(mkdir(p, 0700), 0);
	put("box", "baseline/0.json", "{\"host_src\": \"/home/u/proj\"}");
	cr_assert_eq(sb_seal("box", "baseline/0.json"), 0);
	cr_assert_eq(sb_seal_read("box", "baseline/0.json", 1 << 20, &text, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_str_eq(text, "{\"host_src\": \"/home/u/proj\"}");
	free(text);
	text = NULL;
	put("box", "baseline/0.json", "{\"host_src\": \"/home/u/.ssh\"}");
	cr_assert_eq(sb_seal_read("box", "baseline/0.json", 1 << 20, &text, err, sizeof(err)),
		     -EBADMSG);
	cr_assert_null(text);
	cr_assert(strstr(err, "baseline/0.json of sandbox box changed"), "%s", err);
}
