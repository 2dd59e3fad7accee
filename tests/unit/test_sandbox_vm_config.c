/* The VM of a sandbox from its config.json (sb_vm_config): create's
 * sandboxes as before, and `mvm run`'s further disks, initrd and command
 * line, which now go through config.json too. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/sandbox/sandbox.h"
#include "snapshots/snapshot_dir.h"
#include "tools/sandbox/snap_config.h"
#include "tools/sandbox/sandbox_vm_config.h"

static char root[64], dir[128];
static struct sb_vm_bufs bufs;

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/mvm-vmconfig-test.XXXXXX");
	cr_assert(mkdtemp(root));
	setenv("MVM_STATE_DIR", root, 1);
	setenv("MVM_GUEST_DIR", "/guest", 1);
	snprintf(dir, sizeof(dir), "%s/box", root);
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(chdir(dir), 0);	/* sb_vm_config runs in the state directory */
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(sandbox_vm_config, .init = setup, .fini = teardown);

/* Save @c as box's config.json, load it back and build the VM from it. */
static void roundtrip(const struct sb_config *c, struct sb_config *back, struct vm_config *vc)
{
	char err[256] = "";

	cr_assert_eq(sb_config_save(c), 0);
	cr_assert_eq(sb_config_load("box", back), 0);
	cr_assert_eq(sb_vm_config(back, &bufs, vc, err, sizeof(err)), 0, "%s", err);
}

Test(sandbox_vm_config, create_data_disk_is_vda_at_data)
{
	struct sb_config c = { .name = "box", .disk = "data.img", .disk_format = "raw", .cpus = 2,
			       .mem = 256 << 20, .cid = 5 }, back;
	struct vm_config vc;

	roundtrip(&c, &back, &vc);
	cr_assert_str_eq(vc.kernel_path, "/guest/vmlinux");
	cr_assert_str_eq(vc.initrd_path, "/guest/initramfs.cpio");
	cr_assert_null(vc.extra_cmdline);
	cr_assert_eq(vc.nr_disks, 1);
	cr_assert_str_eq(vc.disks[0].path, "data.img");
	cr_assert_str_eq(vc.argv[0], "mvm-agent");
	cr_assert_str_eq(vc.argv[1], "--mount");
	cr_assert_str_eq(vc.argv[2], "/dev/vda:/data");
	cr_assert_null(vc.argv[3]);
	cr_assert_eq(vc.cpus, 2);
	cr_assert_eq(vc.vsock_cid, 5);
	sb_config_free(&back);
}

/* --lifetime: config.json keeps when it ends; the VM gets what is left of
 * it as its stop time, and a sandbox past it does not start. */
Test(sandbox_vm_config, a_lifetime_is_the_vms_stop_time_and_none_left_no_start)
{
	struct sb_config c = { .name = "box", .disk = "data.img", .disk_format = "raw", .cpus = 1,
			       .mem = 256 << 20 }, back;
	struct vm_config vc;
	char err[256] = "";

	roundtrip(&c, &back, &vc);
	cr_assert_eq(vc.stop_after_ms, 0, "no lifetime, no stop time");
	sb_config_free(&back);
	c.expires = (double)time(NULL) + 3600;
	roundtrip(&c, &back, &vc);
	cr_assert_eq(back.expires, c.expires);
	cr_assert(vc.stop_after_ms > 3500 * 1000ull && vc.stop_after_ms <= 3600 * 1000ull,
		  "stop after %llu ms", (unsigned long long)vc.stop_after_ms);
	sb_config_free(&back);
	c.expires = (double)time(NULL) - 5;
	cr_assert_eq(sb_config_save(&c), 0);
	cr_assert_eq(sb_config_load("box", &back), 0);
	cr_assert_eq(sb_vm_config(&back, &bufs, &vc, err, sizeof(err)), -ETIME);
	cr_assert(strstr(err, "lifetime"), "%s", err);
	sb_config_free(&back);
}

Test(sandbox_vm_config, create_config_json_has_no_run_fields)
{
	struct sb_config c = { .name = "box", .disk = "data.img", .disk_format = "raw", .cpus = 1 };
	char buf[4096] = "";
	FILE *f;

	cr_assert_eq(sb_config_save(&c), 0);
	f = fopen("config.json", "r");
	cr_assert(f);
	cr_assert(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	fclose(f);
	cr_assert_null(strstr(buf, "\"disks\""));
	cr_assert_null(strstr(buf, "\"initrd\""));
	cr_assert_null(strstr(buf, "\"cmdline\""));
}

Test(sandbox_vm_config, run_rootfs_disks_and_data_disk_in_order)
{
	struct sb_config c = { .name = "box", .disk_format = "raw", .kernel = "/k/bzImage",
			       .initrd = "/k/initrd.cpio", .cmdline = "quiet loglevel=0",
			       .root_on_disk = true, .cpus = 1, .cid = 3, .ndisks = 3 }, back;
	struct vm_config vc;

	c.disks[0] = (struct sb_disk){ .path = "/img/root.ext4", .format = "raw" };
	c.disks[1] = (struct sb_disk){ .path = "/img/extra.qcow2", .format = "qcow2", .read_only = true };
	c.disks[2] = (struct sb_disk){ .path = "data.img", .data = true };
	roundtrip(&c, &back, &vc);
	cr_assert_str_eq(vc.kernel_path, "/k/bzImage");
	cr_assert_str_eq(vc.initrd_path, "/k/initrd.cpio");
	cr_assert_str_eq(vc.extra_cmdline, "quiet loglevel=0");
	cr_assert(vc.root_on_disk);
	cr_assert_eq(vc.nr_disks, 3);
	cr_assert_str_eq(vc.disks[0].path, "/img/root.ext4");
	cr_assert_str_eq(vc.disks[1].path, "/img/extra.qcow2");
	cr_assert_str_eq(vc.disks[1].format, "qcow2");
	cr_assert(vc.disks[1].read_only);
	cr_assert_not(vc.disks[0].read_only);
	cr_assert_str_eq(vc.disks[2].path, "data.img");
	cr_assert_str_eq(vc.argv[2], "/dev/vdc:/data");
	sb_config_free(&back);
}

Test(sandbox_vm_config, run_image_overlay_then_data_disk)
{
	struct sb_config c = { .name = "box", .disk = "root.qcow2", .disk_format = "qcow2",
			       .image = "/store/minimal.ext4", .root_on_disk = true, .cpus = 1,
			       .ndisks = 1 }, back;
	struct vm_config vc;

	c.disks[0] = (struct sb_disk){ .path = "data.img", .data = true };
	roundtrip(&c, &back, &vc);
	cr_assert_eq(vc.nr_disks, 2);
	cr_assert_str_eq(vc.disks[0].path, "root.qcow2");
	cr_assert_str_eq(vc.disks[0].backing_root, "/store");
	cr_assert_str_eq(vc.disks[1].format, "raw");	/* stated, as vm_devices wants */
	cr_assert_str_eq(vc.argv[2], "/dev/vdb:/data");
	sb_config_free(&back);
}

Test(sandbox_vm_config, run_root_image_without_data_disk_mounts_nothing)
{
	struct sb_config c = { .name = "box", .disk = "root.qcow2", .disk_format = "qcow2",
			       .image = "/store/minimal.ext4", .root_on_disk = true, .cpus = 1 }, back;
	struct vm_config vc;

	roundtrip(&c, &back, &vc);
	cr_assert_str_eq(vc.argv[0], "mvm-agent");
	cr_assert_null(vc.argv[1]);
	sb_config_free(&back);
}

Test(sandbox_vm_config, malformed_disk_entry_is_refused)
{
	struct sb_config back;
	FILE *f = fopen("config.json", "w");

	cr_assert(f);
	fputs("{\"cpus\":1,\"disk_format\":\"raw\",\"disks\":[{\"path\":\"x\",\"format\":\"vmdk\"}]}", f);
	fclose(f);
	cr_assert_eq(sb_config_load("box", &back), -EINVAL);
}

/* Each sandbox its own MAC: drawn fresh, kept in config.json, given to the
 * VM's NIC; two draws differ; none is multicast or the old shared default. */
Test(sandbox_vm_config, own_mac_is_saved_and_reaches_the_nic)
{
	static const uint8_t old_default[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	struct sb_config c = { .name = "box", .disk_format = "raw", .cpus = 1, .mem = 256 << 20,
			       .cid = 3 }, other = c, back;
	struct vm_config vc;

	cr_assert_eq(sb_config_new_mac(&c), 0);
	cr_assert_eq(sb_config_new_mac(&other), 0);
	cr_assert(memcmp(c.mac, other.mac, 6), "two sandboxes drew the same MAC");
	cr_assert(memcmp(c.mac, old_default, 6));
	cr_assert_eq(c.mac[0] & 1, 0, "multicast MAC");
	roundtrip(&c, &back, &vc);
	cr_assert_arr_eq(back.mac, c.mac, 6);
	cr_assert_arr_eq(vc.net.mac, c.mac, 6);
}

static int load_with_mac(const char *mac_json)
{
	struct sb_config back;
	FILE *f = fopen("config.json", "w");
	int ret;

	cr_assert(f);
	fprintf(f, "{\"cpus\":1,\"disk_format\":\"raw\",\"mac\":%s}", mac_json);
	fclose(f);
	ret = sb_config_load("box", &back);
	if (!ret)
		sb_config_free(&back);
	return ret;
}

Test(sandbox_vm_config, a_bad_mac_makes_the_config_invalid)
{
	cr_assert_eq(load_with_mac("\"52:54:00:ab:cd:ef\""), 0);
	cr_assert_eq(load_with_mac("\"53:54:00:ab:cd:ef\""), -EINVAL, "multicast");
	cr_assert_eq(load_with_mac("\"00:00:00:00:00:00\""), -EINVAL, "zero");
	cr_assert_eq(load_with_mac("\"52:54:00:ab:cd\""), -EINVAL, "short");
	cr_assert_eq(load_with_mac("\"52:54:00:ab:cd:ef:01\""), -EINVAL, "long");
	cr_assert_eq(load_with_mac("\"52-54-00-ab-cd-ef\""), -EINVAL, "dashes");
	cr_assert_eq(load_with_mac("42"), -EINVAL, "not a string");
}

Test(sandbox_vm_config, a_config_from_before_macs_gets_the_default)
{
	static const uint8_t zero[6];
	struct sb_config back;
	FILE *f = fopen("config.json", "w");

	cr_assert(f);
	fputs("{\"cpus\":1,\"disk_format\":\"raw\"}", f);
	fclose(f);
	cr_assert_eq(sb_config_load("box", &back), 0);
	cr_assert_arr_eq(back.mac, zero, 6);
	sb_config_free(&back);
}

/* A snapshot's or template's config.json names exactly the image its state
 * references, or none when it references none: the VMM then accepts that
 * one file below the sandbox's layers. */
Test(sandbox_vm_config, config_base_agrees_with_the_state)
{
	struct sb_config c = { .disk = "root.qcow2", .disk_format = "qcow2",
			       .image = "/store/minimal.ext4", .root_on_disk = true };
	struct snap_dir_info *in = calloc(1, sizeof(*in));
	char err[256];

	in->has_base = true;
	strcpy(in->base.path, "/store/minimal.ext4");
	cr_assert_eq(sb_config_base_ok(&c, in, err, sizeof(err)), 0);
	strcpy(c.image, "/store/other.ext4");
	cr_assert_eq(sb_config_base_ok(&c, in, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "disagree"), "%s", err);
	strcpy(c.image, "/store/minimal.ext4");
	c.root_on_disk = false;
	cr_assert_eq(sb_config_base_ok(&c, in, err, sizeof(err)), -EINVAL);
	c.root_on_disk = true;
	in->has_base = false;	/* a config naming an image its state does not */
	cr_assert_eq(sb_config_base_ok(&c, in, err, sizeof(err)), -EINVAL);
	c = (struct sb_config){ .disk = "data.img", .disk_format = "raw" };
	cr_assert_eq(sb_config_base_ok(&c, in, err, sizeof(err)), 0);
	strcpy(c.disk_format, "qcow2");	/* an overlay with no image to end in */
	cr_assert_eq(sb_config_base_ok(&c, in, err, sizeof(err)), -EINVAL);
	free(in);
}

/* After a checkpoint, restore or template start the disk is a chain of
 * layers here ending in the image: that one file, not its directory. */
Test(sandbox_vm_config, layered_image_disk_allows_exactly_its_base)
{
	struct sb_config c = { .name = "box", .disk = "root.qcow2", .disk_format = "qcow2",
			       .image = "/store/minimal.ext4", .root_on_disk = true, .cpus = 1 }, back;
	struct vm_config vc;
	FILE *fp = fopen("disk-top", "w");

	fprintf(fp, "layer-2.qcow2 qcow2 3 2\n");
	fclose(fp);
	roundtrip(&c, &back, &vc);
	cr_assert_str_eq(vc.disks[0].path, "layer-2.qcow2");
	cr_assert_str_eq(vc.disks[0].backing_root, ".");
	cr_assert_str_eq(vc.disks[0].backing_file, "/store/minimal.ext4");
	sb_config_free(&back);
}
