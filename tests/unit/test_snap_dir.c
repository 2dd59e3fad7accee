/* Snapshot directories as hostile input: snap_verify_dir before a restore,
 * and the template store's seal and cheap identity check (snapshots/template.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio_mmio.h"
#include "snapshots/snap_seal.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/state_file.h"
#include "snapshots/template.h"
#include "snapshots/tpl_ledger.h"

#define RAM (64ULL << 20)

static char dir[64];
static char err[512];
static const char *device;	/* a device section of this name in the next state */
static bool bad_sha;		/* the next state lists a wrong SHA-256 for its base layer */
static uint32_t device_id;	/* its virtio device id */

static void put(const char *name, const void *p, size_t n, off_t size)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, p, n, 0), (ssize_t)n);
	cr_assert_eq(ftruncate(fd, size), 0);
	close(fd);
}

static void crc_of(const char *name, struct snap_file *f)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	cr_assert_eq(snap_file_digest(fd, &f->size, &f->crc, f->sha256), 0);
	close(fd);
}

/* A snapshot with memory and two layers; @names may override the layer
 * names; @base: the image the layers end in (NULL: none). */
static void make_snapshot_on(const char *l1, const char *l2, const struct snap_base *base)
{
	struct snap_header h = { .ram_size = RAM, .nr_regions = 1, .ncpus = 1 };
	struct snap_file f[3] = { { .name = "memory", .format = "memory" },
				  { .format = "raw" }, { .format = "qcow2" } };
	struct snap_w w = { 0 }, s = { 0 };

	snprintf(f[1].name, sizeof(f[1].name), "%s", l1);
	snprintf(f[2].name, sizeof(f[2].name), "%s", l2);
	h.regions[0].size = RAM;
	strcpy(h.cpu_vendor, "AuthenticAMD");
	put("memory", "guest ram", 9, (off_t)RAM);
	put("base.img", "base layer", 10, 1 << 20);
	put("layer-1.qcow2", "QFI\xfb top", 8, 4096);
	crc_of("memory", &f[0]);
	crc_of("base.img", &f[1]);
	crc_of("layer-1.qcow2", &f[2]);
	f[1].sha256[0] ^= bad_sha;
	snap_w_u32(&s, 3);
	for (int i = 0; i < 3; i++) {
		snap_w_blob(&s, f[i].name, (uint32_t)strlen(f[i].name));
		snap_w_blob(&s, f[i].format, (uint32_t)strlen(f[i].format));
		snap_w_u64(&s, f[i].size);
		snap_w_u32(&s, f[i].crc);
		snap_w_blob(&s, f[i].sha256, sizeof(f[i].sha256));
	}
	snap_state_begin(&w, &h);
	snap_state_section(&w, SNAP_SEC_FILE, 0, 2, s.p, s.len);
	if (base)
		snap_base_section(&w, base);
	if (device) {
		struct snap_w d = { 0 };

		snap_w_blob(&d, device, (uint32_t)strlen(device));
		snap_w_u32(&d, device_id);
		snap_state_section(&w, SNAP_SEC_DEV, 1, 1, d.p, d.len);
		snap_w_free(&d);
	}
	cr_assert_eq(snap_state_finish(&w), 0);
	put("state", w.p, w.len, (off_t)w.len);
	snap_w_free(&w);
	snap_w_free(&s);
}

static void make_snapshot(const char *l1, const char *l2)
{
	make_snapshot_on(l1, l2, NULL);
}

static char keydir[64];

static void setup(void)
{
	char k[128];

	strcpy(dir, "/tmp/mvm-snapdir-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	strcpy(keydir, "/tmp/mvm-snapkey-XXXXXX");
	cr_assert_not_null(mkdtemp(keydir));
	snprintf(k, sizeof(k), "%s/host.key", keydir);
	setenv("MVM_HOST_KEY", k, 1);
}

static void teardown(void)
{
	char cmd[192];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s && rm -rf %s %s", dir, dir, keydir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(snap_dir, .init = setup, .fini = teardown);

Test(snap_dir, intact_snapshot_verifies)
{
	struct snap_dir_info in;

	make_snapshot("base.img", "layer-1.qcow2");
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(in.nfiles, 3);
	cr_assert_eq(in.ram_size, RAM);
	cr_assert_str_eq(in.f[2].name, "layer-1.qcow2");
}

/* Whether the state has a NIC, from its device sections' names: a start
 * compares it with config.json's "net" before building any device. */
Test(snap_dir, network_device_is_seen)
{
	struct snap_dir_info in;

	make_snapshot("base.img", "layer-1.qcow2");
	cr_assert_eq(snap_dir_info(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(in.has_net);
	device = "virtio-mmio";
	device_id = VIRTIO_ID_BLOCK;
	make_snapshot("base.img", "layer-1.qcow2");
	cr_assert_eq(snap_dir_info(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(in.has_net);
	device = "serial";
	device_id = VIRTIO_ID_NET;	/* not a virtio device: not its id */
	make_snapshot("base.img", "layer-1.qcow2");
	cr_assert_eq(snap_dir_info(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(in.has_net);
	device = "virtio-mmio";
	make_snapshot("base.img", "layer-1.qcow2");
	cr_assert_eq(snap_dir_info(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert(in.has_net);
	device = NULL;
}

Test(snap_dir, changed_layer_is_refused)
{
	struct snap_dir_info in;

	make_snapshot("base.img", "layer-1.qcow2");
	put("base.img", "BASE layer", 10, 1 << 20);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "base.img") && strstr(err, "checksum"), "%s", err);
}

Test(snap_dir, data_moved_into_a_hole_is_refused)
{
	struct snap_dir_info in;
	char path[128];
	int fd;

	make_snapshot("base.img", "layer-1.qcow2");
	/* Same bytes, same size, but at another offset: the checksum covers offsets. */
	snprintf(path, sizeof(path), "%s/base.img", dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	cr_assert_eq(pwrite(fd, "base layer", 10, 8192), 10);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	cr_assert_neq(snap_verify_dir(dir, &in, err, sizeof(err)), 0);
}

Test(snap_dir, truncated_memory_is_refused)
{
	struct snap_dir_info in;
	char path[128];

	make_snapshot("base.img", "layer-1.qcow2");
	snprintf(path, sizeof(path), "%s/memory", dir);
	cr_assert_eq(truncate(path, (off_t)RAM - 4096), 0);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "memory") && strstr(err, "truncated"), "%s", err);
}

Test(snap_dir, names_outside_the_directory_are_refused)
{
	struct snap_dir_info in;

	make_snapshot("../base.img", "layer-1.qcow2");
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	make_snapshot("base.img", "state");
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	make_snapshot("base.img", "base.img");
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
}

Test(snap_dir, flipped_state_is_refused)
{
	struct snap_dir_info in;
	char path[128];
	int fd;

	make_snapshot("base.img", "layer-1.qcow2");
	snprintf(path, sizeof(path), "%s/state", dir);
	fd = open(path, O_WRONLY);
	cr_assert_eq(pwrite(fd, "\xff", 1, 140), 1);
	close(fd);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "checksum"), "%s", err);
}

/* A sealed template of make_snapshot's files (config.json added). */
static void make_template(void)
{
	struct snap_dir_info in;

	make_snapshot("base.img", "layer-1.qcow2");
	put("config.json", "{}", 2, 2);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tpl_seal(dir, "tpl", "src", &in, err, sizeof(err)), 0, "%s", err);
}

/* Rewrite a sealed file as a later writer would (mode restored afterwards). */
static void rewrite(const char *name, const void *p, size_t n, off_t off)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(chmod(path, 0644), 0);
	fd = open(path, O_WRONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, p, n, off), (ssize_t)n);
	close(fd);
	cr_assert_eq(chmod(path, 0444), 0);
}

TestSuite(template, .init = setup, .fini = teardown);

Test(template, sealed_template_checks_and_is_read_only)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct stat st;
	char path[128];

	make_template();
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(in.nfiles, 3);
	cr_assert_eq(m.nfiles, 5);
	cr_assert_str_eq(m.source, "src");
	snprintf(path, sizeof(path), "%s/memory", dir);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0444);
}

Test(template, memory_written_after_sealing_is_refused)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct timespec later = { .tv_sec = 1 };

	make_template();
	nanosleep(&later, NULL);	/* mtime granularity of some file systems */
	rewrite("memory", "X", 1, 4096);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "memory") && strstr(err, "changed"), "%s", err);
}

Test(template, replaced_layer_is_refused)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	char a[128], b[128];

	make_template();
	/* Same bytes in a new file: another inode. */
	snprintf(a, sizeof(a), "%s/base.img", dir);
	snprintf(b, sizeof(b), "%s/base.copy", dir);
	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_eq(link(a, b), 0);
	cr_assert_eq(unlink(a), 0);
	put("base.img", "base layer", 10, 1 << 20);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "base.img"), "%s", err);
}

Test(template, edited_record_is_refused)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	char path[128];

	make_template();
	snprintf(path, sizeof(path), "%s/%s", dir, TPL_META);
	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_eq(chmod(path, 0644), 0);
	put(TPL_META, "{\"name\":\"tpl\"", 14, 14);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "not a valid template record"), "%s", err);
	cr_assert_eq(tpl_meta_load(dir, &m, err, sizeof(err)), -EBADMSG);
	put(TPL_META, "x", 1, TPL_META_MAX + 1);
	cr_assert_eq(tpl_meta_load(dir, &m, err, sizeof(err)), -EBADMSG);
}

Test(template, names)
{
	cr_assert(tpl_name_ok("py-3.11_web"));
	cr_assert_not(tpl_name_ok(".hidden"));
	cr_assert_not(tpl_name_ok("a/b"));
	cr_assert_not(tpl_name_ok(""));
	cr_assert_not(tpl_name_ok("-x"));
}

/* An image store beside the template: MVM_IMAGE_DIR=@dir/store, with
 * img.ext4 in it, recorded in @b. */
static void make_store(struct snap_base *b)
{
	char store[128], real[4096];
	int fd;

	snprintf(store, sizeof(store), "%s/store", dir);
	cr_assert_eq(mkdir(store, 0755), 0);
	cr_assert_not_null(realpath(store, real));
	setenv("MVM_IMAGE_DIR", real, 1);
	memset(b, 0, sizeof(*b));
	snprintf(b->path, sizeof(b->path), "%s/img.ext4", real);
	fd = open(b->path, O_RDWR | O_CREAT, 0644);
	cr_assert_eq(pwrite(fd, "ext4", 4, 1024), 4);
	cr_assert_eq(snap_ident_fd(fd, &b->id), 0);
	close(fd);
}

/* A sealed template whose layers end in the store's img.ext4. */
static void make_image_template(struct snap_base *b)
{
	struct snap_dir_info in;

	make_store(b);
	make_snapshot_on("base.img", "layer-1.qcow2", b);
	put("config.json", "{}", 2, 2);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert(in.has_base);
	cr_assert_eq(snap_base_sha256(&in.base), 0);
	cr_assert_eq(tpl_seal(dir, "tpl", "src", &in, err, sizeof(err)), 0, "%s", err);
}

Test(template, image_base_is_referenced_and_checked)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct snap_base b;
	struct timespec t[2] = { { 0, UTIME_OMIT }, { 12345, 0 } };

	make_image_template(&b);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert(m.has_base && in.has_base);
	cr_assert_str_eq(m.base.path, b.path);
	cr_assert_str_eq(m.base.sha256_of, "blocks");
	cr_assert_eq(strlen(m.base.sha256), 64);
	/* The image changes: the start is refused, naming it and what to do. */
	cr_assert_eq(utimensat(AT_FDCWD, b.path, t, 0), 0);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, b.path) && strstr(err, "rebuild the template"), "%s", err);
	unsetenv("MVM_IMAGE_DIR");
}

Test(template, image_base_outside_the_store_is_refused)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct snap_base b;
	char other[160];

	make_image_template(&b);
	/* Another store: the recorded base is no image of it. */
	snprintf(other, sizeof(other), "%s/store2", dir);
	cr_assert_eq(mkdir(other, 0755), 0);
	setenv("MVM_IMAGE_DIR", other, 1);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EACCES);
	cr_assert(strstr(err, "not an image of the image store"), "%s", err);
	unsetenv("MVM_IMAGE_DIR");
}

Test(template, edited_base_record_is_refused)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct snap_base b;
	char path[128], *text = NULL, *at;
	size_t n = 0;
	FILE *fp;

	make_image_template(&b);
	snprintf(path, sizeof(path), "%s/%s", dir, TPL_META);
	fp = fopen(path, "r");
	cr_assert_eq(getdelim(&text, &n, 0, fp) > 0, true);
	fclose(fp);
	/* template.json names another file of the store than the state does. */
	at = strstr(text, "img.ext4");
	cr_assert_not_null(at);
	memcpy(at, "xyz", 3);
	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_eq(chmod(path, 0644), 0);
	put(TPL_META, text, strlen(text), (off_t)strlen(text));
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "template.json changed since the template was sealed"), "%s", err);
	free(text);
	unsetenv("MVM_IMAGE_DIR");
}

/* Issue 27 item 3: keyed seals. Edited in place with its modification time
 * put back, the memory file is still seen (its change time), and the seal
 * names the exact bytes of state, config.json and template.json. */
Test(template, memory_edited_with_its_mtime_put_back_is_refused)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct timespec t[2];
	struct stat st;
	char path[128];

	make_template();
	snprintf(path, sizeof(path), "%s/memory", dir);
	cr_assert_eq(stat(path, &st), 0);
	rewrite("memory", "X", 1, 4096);
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "memory") && strstr(err, "change time"), "%s", err);
}

/* A template record rewritten whole, identities and all, as anyone who can
 * write the directory could: the seal refuses it. */
Test(template, a_record_made_to_match_is_refused_by_the_seal)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	char path[128];

	make_template();
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	cr_assert_eq(chmod(path, 0644), 0);
	put("config.json", "{\"kernel\":\"/x\"}", 15, 15);
	/* Sealed again, whole, under another key (an attacker's own). */
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tpl_seal(dir, "tpl", "src", &in, err, sizeof(err)), 0, "%s", err);
	snprintf(path, sizeof(path), "%s/host.key", keydir);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "seal does not match the host key"), "%s", err);
}

Test(template, a_template_without_a_seal_is_refused)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	char path[128];

	make_template();
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/" SNAP_SEAL_FILE, dir);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "no seal"), "%s", err);
}

/* A snapshot's seal: state and config.json as written; a config.json
 * edited after, or one put in as a copy, is refused, and so is the state. */
Test(snap_dir, snapshot_seal_names_state_and_config)
{
	struct snap_dir_info in;
	char copy[128], path[128];

	make_snapshot("base.img", "layer-1.qcow2");
	put("config.json", "{}", 2, 2);
	cr_assert_eq(snap_seal_write(dir, "snapshot", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_seal_check_state(dir, NULL, &in, err, sizeof(err)), 0, "%s", err);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	cr_assert_eq(snap_seal_check_copy(dir, NULL, "config.json", path, err, sizeof(err)), 0,
		     "%s", err);
	snprintf(copy, sizeof(copy), "%s/copy.json", dir);
	put("copy.json", "{\"kernel\":\"/etc/passwd\"}", 24, 24);
	cr_assert_eq(snap_seal_check_copy(dir, NULL, "config.json", copy, err, sizeof(err)),
		     -EBADMSG);
	cr_assert(strstr(err, "config.json changed since the snapshot was sealed"), "%s", err);
	/* Another state (same files, one more device section): refused. */
	device = "serial";
	make_snapshot("base.img", "layer-1.qcow2");
	device = NULL;
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_seal_check_state(dir, NULL, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "state changed"), "%s", err);
}

/* Contents are bound by SHA-256, not only by CRC-32C (which is linear:
 * four chosen bytes restore any CRC): a file whose CRC matches the list but
 * whose SHA-256 does not is refused, by the check and by the copy. */
Test(snap_dir, a_file_matching_only_its_crc_is_refused)
{
	struct snap_dir_info in;

	bad_sha = true;
	make_snapshot("base.img", "layer-1.qcow2");
	bad_sha = false;
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "base.img") && strstr(err, "checksum"), "%s", err);
	cr_assert_eq(snap_dir_info(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_copy_layers(dir, &in, keydir, err, sizeof(err)), -EBADMSG);
}

/* A layer, linked into sandboxes (its change time moves anyway), edited in
 * place with its modification time put back: its contents are read. */
Test(template, layer_edited_with_its_mtime_put_back_is_refused)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct timespec t[2];
	struct stat st;
	char path[128];

	make_template();
	snprintf(path, sizeof(path), "%s/base.img", dir);
	cr_assert_eq(stat(path, &st), 0);
	rewrite("base.img", "B", 1, 0);
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "base.img") && strstr(err, "checksum"), "%s", err);
}

/* How many times @path's contents were read while @fn ran (inotify's
 * IN_ACCESS: a read(2) or pread(2) of the file, not an open or a stat). */
static int reads_during(const char *path, void (*fn)(void))
{
	char buf[4096];
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), n = 0;
	ssize_t len;

	cr_assert_geq(fd, 0);
	cr_assert_geq(inotify_add_watch(fd, path, IN_ACCESS), 0);
	fn();
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + len; p += sizeof(struct inotify_event) +
		     ((struct inotify_event *)p)->len)
			n += !!(((struct inotify_event *)p)->mask & IN_ACCESS);
	close(fd);
	return n;
}

static int verify_ret;

static void verify_now(void)
{
	struct snap_dir_info in;

	verify_ret = snap_verify_dir(dir, &in, err, sizeof(err));
}

static void sealed_snapshot(void)
{
	make_snapshot("base.img", "layer-1.qcow2");
	put("config.json", "{}", 2, 2);
	cr_assert_eq(snap_seal_write(dir, "snapshot", err, sizeof(err)), 0, "%s", err);
}

/* Issue 27's benchmarks: a restore hashed every non-zero page of the memory
 * file (twice per `mvm restore`), 3.7x the CRC-32C check it made per MiB
 * before the keyed seals. A sealed snapshot whose memory file is the one
 * sealed (same inode, size, modification and change time) is not read
 * again; its layers still are. Fails before the seal's memory line: the
 * file was read. */
Test(snap_dir, sealed_memory_unchanged_is_not_read_again)
{
	char path[128];

	sealed_snapshot();
	snprintf(path, sizeof(path), "%s/memory", dir);
	cr_assert_eq(reads_during(path, verify_now), 0, "the memory file was read");
	cr_assert_eq(verify_ret, 0, "%s", err);
	snprintf(path, sizeof(path), "%s/base.img", dir);
	cr_assert_gt(reads_during(path, verify_now), 0, "a layer was not read");
	cr_assert_eq(verify_ret, 0, "%s", err);
}

/* Edited in place after the seal, same size, modification time put back:
 * its change time moved, so it is read in full and refused. */
Test(snap_dir, sealed_memory_edited_is_read_and_refused)
{
	struct timespec t[2];
	struct stat st;
	char path[128];

	sealed_snapshot();
	snprintf(path, sizeof(path), "%s/memory", dir);
	cr_assert_eq(stat(path, &st), 0);
	rewrite("memory", "X", 1, 8192);
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	cr_assert_gt(reads_during(path, verify_now), 0, "the edited memory file was not read");
	cr_assert_eq(verify_ret, -EBADMSG);
	cr_assert(strstr(err, "memory") && strstr(err, "checksum"), "%s", err);
}

/* A copy of the snapshot (another inode) is read in full and verifies; a
 * memory file replaced by an edited copy is refused. */
Test(snap_dir, sealed_memory_replaced_is_read)
{
	char path[128], cmd[320];

	sealed_snapshot();
	snprintf(path, sizeof(path), "%s/memory", dir);
	snprintf(cmd, sizeof(cmd), "cp --sparse=always %s %s.new && mv -f %s.new %s", path, path,
		 path, path);
	cr_assert_eq(system(cmd), 0);
	cr_assert_gt(reads_during(path, verify_now), 0, "the replaced memory file was not read");
	cr_assert_eq(verify_ret, 0, "%s", err);
	rewrite("memory", "Y", 1, 4096);
	verify_now();
	cr_assert_eq(verify_ret, -EBADMSG);
}

/* The memory line is under the seal's HMAC: rewritten to name an edited
 * file's new identity, the seal no longer loads, the file is read in full
 * and refused, and the state is refused for want of a valid seal. */
Test(snap_dir, a_memory_line_made_to_match_is_refused)
{
	struct snap_dir_info in;
	char path[128], seal[128], text[4096], *line;
	struct stat st;
	FILE *fp;
	size_t n;

	sealed_snapshot();
	rewrite("memory", "Z", 1, 4096);
	snprintf(path, sizeof(path), "%s/memory", dir);
	cr_assert_eq(stat(path, &st), 0);
	snprintf(seal, sizeof(seal), "%s/" SNAP_SEAL_FILE, dir);
	fp = fopen(seal, "r");
	cr_assert_not_null(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = 0;
	line = strstr(text, "\nmemory ");
	cr_assert_not_null(line, "no memory line in the seal: %s", text);
	{
		char rest[4096], *hmac = strstr(line, "\nhmac ");

		cr_assert_not_null(hmac);
		snprintf(rest, sizeof(rest), "%s", hmac);
		snprintf(line, sizeof(text) - (size_t)(line - text), "\nmemory %llu %llu %llu %lld %lld%s",
			 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			 (unsigned long long)st.st_size,
			 (long long)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
			 (long long)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec, rest);
	}
	cr_assert_eq(chmod(seal, 0644), 0);
	fp = fopen(seal, "w");
	cr_assert_not_null(fp);
	fputs(text, fp);
	fclose(fp);
	cr_assert_gt(reads_during(path, verify_now), 0, "the memory file was not read");
	cr_assert_eq(verify_ret, -EBADMSG);
	cr_assert_eq(snap_dir_info(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_seal_check_state(dir, NULL, &in, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "seal does not match"), "%s", err);
}

/* Issue 27's benchmarks: a template start read every disk layer against its
 * tag, 1.7x the CLI's instructions of the build before keyed tags. A start
 * holding the layers under read leases reads none that is unchanged since
 * the last start recorded it in the ledger (snapshots/tpl_ledger.h); any
 * other is read as before. */
static char ledger[160];
static int held_ret;
static struct tpl_hold held;

static void check_held(void)
{
	static struct snap_dir_info in;
	static struct tpl_meta m;

	tpl_hold_release(&held);
	tpl_hold_init(&held, ledger);
	held_ret = tpl_check_held(dir, &in, &m, &held, err, sizeof(err));
}

/* A start: checked, then (were it linking) recorded; leases released. */
static void start_and_record(void)
{
	snprintf(ledger, sizeof(ledger), "%s/ledger", keydir);
	check_held();
	cr_assert_eq(held_ret, 0, "%s", err);
	tpl_hold_commit(&held);
	tpl_hold_release(&held);
}

/* Fails before the ledger: every start read base.img. */
Test(template, a_start_reads_no_layer_unchanged_since_the_last)
{
	char path[128];

	make_template();
	start_and_record();
	snprintf(path, sizeof(path), "%s/base.img", dir);
	cr_assert_eq(reads_during(path, check_held), 0, "an unchanged layer was read again");
	cr_assert_eq(held_ret, 0, "%s", err);
	cr_assert(held.same[1] && held.same[2]);
	tpl_hold_release(&held);
}

/* The point of reading them at all: edited in place after the ledger, its
 * modification time put back, a layer is read and refused. */
Test(template, a_layer_edited_after_the_last_start_is_read_and_refused)
{
	struct timespec t[2];
	struct stat st;
	char path[128];

	make_template();
	start_and_record();
	snprintf(path, sizeof(path), "%s/base.img", dir);
	cr_assert_eq(stat(path, &st), 0);
	rewrite("base.img", "B", 1, 0);
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	cr_assert_gt(reads_during(path, check_held), 0, "the edited layer was not read");
	cr_assert_eq(held_ret, -EBADMSG);
	cr_assert(strstr(err, "base.img") && strstr(err, "checksum"), "%s", err);
	tpl_hold_release(&held);
}

/* A ledger of another template under the name (another template.json) is
 * no evidence: the layers are read. */
Test(template, a_ledger_of_another_template_json_is_not_used)
{
	char path[128], text[4096];
	FILE *fp;
	size_t n;

	make_template();
	start_and_record();
	fp = fopen(ledger, "r");
	cr_assert_not_null(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = 0;
	cr_assert(!strncmp(text, "mvm-ledger 1 ", 13), "%s", text);
	text[13] = text[13] == '0' ? '1' : '0';
	fp = fopen(ledger, "w");
	cr_assert_not_null(fp);
	fputs(text, fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/base.img", dir);
	cr_assert_gt(reads_during(path, check_held), 0, "the layer was not read");
	cr_assert_eq(held_ret, 0, "%s", err);
	tpl_hold_release(&held);
}

/* A layer someone holds open for writing gets no lease: it is not taken
 * for unchanged (its writer may write at any time), but read. */
Test(template, a_layer_open_for_writing_is_read)
{
	char path[128];
	int w;

	make_template();
	start_and_record();
	snprintf(path, sizeof(path), "%s/base.img", dir);
	cr_assert_eq(chmod(path, 0644), 0);
	w = open(path, O_WRONLY);
	cr_assert_geq(w, 0);
	cr_assert_eq(chmod(path, 0444), 0);
	cr_assert_gt(reads_during(path, check_held), 0, "the layer was not read");
	cr_assert_eq(held.fd[1], -1, "a layer open for writing was held");
	close(w);
	tpl_hold_release(&held);
}

/* A start as sb_template_prepare makes it: checked, each layer linked into
 * @sdir, recorded; leases released. */
static void start_linking(const char *sdir)
{
	char a[160], b[160];

	snprintf(ledger, sizeof(ledger), "%s/ledger", keydir);
	check_held();
	cr_assert_eq(held_ret, 0, "%s", err);
	for (const char *f = "base.img\0layer-1.qcow2\0"; *f; f += strlen(f) + 1) {
		snprintf(a, sizeof(a), "%s/%s", dir, f);
		snprintf(b, sizeof(b), "%s/%s", sdir, f);
		cr_assert_eq(link(a, b), 0, "%s", b);
	}
	tpl_hold_commit(&held);
	tpl_hold_release(&held);
}

/* A removal unlinks its links under leases and records the layers again:
 * the next start reads none. Fails without tpl_unlink_layers (the unlink
 * moved the change time: base.img was read). */
Test(template, a_start_after_a_removal_reads_no_layer)
{
	char sdir[160], path[128];

	make_template();
	snprintf(sdir, sizeof(sdir), "%s/sandbox", keydir);
	cr_assert_eq(mkdir(sdir, 0700), 0);
	start_linking(sdir);
	tpl_unlink_layers(dir, ledger, sdir);
	snprintf(path, sizeof(path), "%s/base.img", sdir);
	cr_assert_eq(access(path, F_OK), -1, "the link was not removed");
	snprintf(path, sizeof(path), "%s/base.img", dir);
	cr_assert_eq(reads_during(path, check_held), 0, "an unchanged layer was read again");
	cr_assert_eq(held_ret, 0, "%s", err);
	tpl_hold_release(&held);
}

/* A layer edited while a sandbox had it linked is not recorded by that
 * sandbox's removal: the next start reads it and refuses it. */
Test(template, a_layer_edited_before_a_removal_is_still_refused)
{
	struct timespec t[2];
	struct stat st;
	char sdir[160], path[128];

	make_template();
	snprintf(sdir, sizeof(sdir), "%s/sandbox", keydir);
	cr_assert_eq(mkdir(sdir, 0700), 0);
	start_linking(sdir);
	snprintf(path, sizeof(path), "%s/base.img", dir);
	cr_assert_eq(stat(path, &st), 0);
	rewrite("base.img", "B", 1, 0);
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	tpl_unlink_layers(dir, ledger, sdir);
	cr_assert_gt(reads_during(path, check_held), 0, "the edited layer was not read");
	cr_assert_eq(held_ret, -EBADMSG);
	tpl_hold_release(&held);
}

/* The state file is never linked: held and unchanged since a recorded
 * start, its bytes are not hashed again (its SHA-256 cost a start in the
 * box as much as the rest of the check); edited, it is refused as before. */
Test(template, an_unchanged_state_is_known_and_an_edited_one_refused)
{
	struct timespec t[2];
	struct stat st;
	char path[128];

	make_template();
	start_and_record();
	check_held();
	cr_assert_eq(held_ret, 0, "%s", err);
	cr_assert(held.same[0], "the state's ledger line did not match");
	tpl_hold_release(&held);
	snprintf(path, sizeof(path), "%s/state", dir);
	cr_assert_eq(stat(path, &st), 0);
	rewrite("state", "M", 1, 0);
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
	check_held();
	cr_assert_eq(held_ret, -EBADMSG);
	cr_assert(!held.same[0]);
	tpl_hold_release(&held);
}
