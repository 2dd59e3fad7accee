/* What a start from a snapshot or template takes from its config.json (a
 * file someone may have edited), and what a snapshot, fork or template of a
 * sandbox may reference at all (tools/sandbox/snap_config.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshots/snapshot_dir.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/snap_config.h"
#include "vmm/vm.h"

static char root[64];

static void setup(void)
{
	char p[128];

	snprintf(root, sizeof(root), "/tmp/mvm-snapconfig-test.XXXXXX");
	cr_assert(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/state", root);
	setenv("MVM_STATE_DIR", p, 1);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/state/box", root);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/images", root);
	setenv("MVM_IMAGE_DIR", p, 1);
	cr_assert_eq(mkdir(p, 0700), 0);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(snap_config, .init = setup, .fini = teardown);

/* A state of 256 MiB, 2 vCPUs, no base, and a config that matches it. */
static struct snap_dir_info *state(struct sb_config *c)
{
	struct snap_dir_info *in = calloc(1, sizeof(*in));

	cr_assert(in);
	in->ram_size = 256 << 20;
	in->ncpus = 2;
	in->has_net = true;
	*c = (struct sb_config){ .disk = "data.img", .disk_format = "raw", .cpus = 2,
				 .mem = 256 << 20 };
	return in;
}

Test(snap_config, a_matching_config_is_accepted)
{
	struct sb_config c;
	struct snap_dir_info *in = state(&c);
	char err[512] = "";

	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), 0, "%s", err);
	free(in);
}

/* Memory and vCPUs are the state's: an edited count is refused. */
Test(snap_config, memory_and_vcpus_must_be_the_states)
{
	struct sb_config c;
	struct snap_dir_info *in = state(&c);
	char err[512] = "";

	c.mem = 512 << 20;
	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "memory or vCPUs"), "%s", err);
	c.mem = in->ram_size;
	c.cpus = 4;
	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), -EINVAL);
	free(in);
}

/* A network device, or none, as the state has: an edit is refused before
 * the VMM builds one the state cannot load into. */
Test(snap_config, the_network_device_must_be_the_states)
{
	struct sb_config c;
	struct snap_dir_info *in = state(&c);
	char err[512] = "";

	c.net_off = true;
	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "network device"), "%s", err);
	in->has_net = false;
	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), 0, "%s", err);
	c.net_off = false;
	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), -EINVAL);
	free(in);
}

/* A kernel or initrd path would be opened (Landlock: readable; at the next
 * boot loaded into the guest): refused, whatever file it names. */
Test(snap_config, a_kernel_or_initrd_by_path_is_refused)
{
	struct sb_config c;
	struct snap_dir_info *in = state(&c);
	char err[512] = "";

	strcpy(c.kernel, "/home/user/.ssh/id_ed25519");
	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "kernel /home/user/.ssh/id_ed25519") && strstr(err, "edited?"),
		  "%s", err);
	c.kernel[0] = 0;
	strcpy(c.initrd, "/etc/shadow");
	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "initrd /etc/shadow"), "%s", err);
	free(in);
}

/* `mvm run`'s further disks are host files the snapshot does not hold. */
Test(snap_config, a_further_disk_is_refused)
{
	struct sb_config c;
	struct snap_dir_info *in = state(&c);
	char err[512] = "", path[] = "/dev/sda";

	c.disks[0] = (struct sb_disk){ .path = path };
	c.ndisks = 1;
	cr_assert_eq(sb_snap_config_ok(&c, in, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "disk /dev/sda"), "%s", err);
	cr_assert_eq(sb_config_refs_ok(&c, err, sizeof(err)), -EINVAL);
	free(in);
}

/* Published ports and the DNS server are the new sandbox's own: none from
 * a restore (no options), the options' from a template start. */
Test(snap_config, network_settings_are_the_new_sandboxs_own)
{
	struct sb_config c = { .npublish = 1, .dns_server = "203.0.113.9" };
	struct vm_net net = { .nr_publish = 1, .publish = { "127.0.0.1:8080:80" } };

	c.publish[0] = strdup("0.0.0.0:2222:22");
	sb_snap_config_net(&c, NULL);
	cr_assert_eq(c.npublish, 0);
	cr_assert_str_empty(c.dns_server);
	c.publish[c.npublish++] = strdup("0.0.0.0:2222:22");
	sb_snap_config_net(&c, &net);
	cr_assert_eq(c.npublish, 1);
	cr_assert_str_eq(c.publish[0], "127.0.0.1:8080:80");
	cr_assert_str_empty(c.dns_server);
	sb_config_free(&c);
}

static void save(const char *image, const char *kernel)
{
	struct sb_config c = { .name = "box", .disk = "root.qcow2", .disk_format = "qcow2",
			       .root_on_disk = true, .cpus = 1, .mem = 256 << 20 };

	snprintf(c.image, sizeof(c.image), "%s", image);
	snprintf(c.kernel, sizeof(c.kernel), "%s", kernel);
	cr_assert_eq(sb_config_save(&c), 0);
}

/* Before a snapshot, fork or template: an image given by path, or a
 * kernel, is refused naming the fix; an image of the store is fine. */
Test(snap_config, a_source_must_be_referable)
{
	char err[1024] = "", img[128], other[128];

	snprintf(img, sizeof(img), "%s/images/root.ext4", root);
	snprintf(other, sizeof(other), "%s/root.img", root);
	fclose(fopen(img, "w"));
	fclose(fopen(other, "w"));
	save(img, "");
	cr_assert_eq(sb_snap_source_ok("box", "snapshot", err, sizeof(err)), 0, "%s", err);
	save(other, "");
	cr_assert_eq(sb_snap_source_ok("box", "fork", err, sizeof(err)), -EACCES);
	cr_assert(strstr(err, "cannot fork box: its base image") &&
		  strstr(err, "root.img is not an image of the image store") &&
		  strstr(err, "--image NAME"), "%s", err);
	save(img, "/boot/vmlinuz");
	cr_assert_eq(sb_snap_source_ok("box", "snapshot", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "cannot snapshot box: its kernel /boot/vmlinuz") &&
		  strstr(err, "without it"), "%s", err);
}

/* config.json's disk is a file of the state directory: "." and ".." name
 * directories (the state root: every sandbox's state). */
Test(snap_config, disk_name_is_a_plain_file_of_the_state_dir)
{
	struct sb_config c;
	char p[160];
	FILE *f;

	snprintf(p, sizeof(p), "%s/state/box/config.json", root);
	for (int i = 0; i < 2; i++) {
		f = fopen(p, "w");
		cr_assert(f);
		fprintf(f, "{\"cpus\":1,\"disk\":\"%s\"}", i ? "." : "..");
		fclose(f);
		cr_assert_eq(sb_config_load("box", &c), -EINVAL);
	}
}
