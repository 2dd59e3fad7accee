/* Template bundles end to end without KVM: a template made of files
 * (a state naming a qcow2 layer over an image of the store) exported on
 * one "host" and imported on another (own template store, image store and
 * key). A digest mismatch in each kind of entry is refused with nothing
 * left; the intact bundle imports, passes the start's check there, and a
 * re-import is a no-op (tools/sandbox/template_bundle.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "snapshots/snap_seal.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/state_file.h"
#include "snapshots/template.h"
#include "snapshots/tpl_bundle.h"
#include "tools/sandbox/template_bundle.h"

#define RAM (64ULL << 20)

static char top[64], err[1024], bundle[128];

static void path(char *out, size_t cap, const char *a, const char *b)
{
	snprintf(out, cap, "%s/%s%s%s", top, a, b ? "/" : "", b ? b : "");
}

/* Host 1 or 2: its own stores and key. */
static void host(int n)
{
	char p[256], k[64];

	snprintf(k, sizeof(k), "h%d/templates", n);
	path(p, sizeof(p), k, NULL);
	setenv("MVM_TEMPLATE_DIR", p, 1);
	snprintf(k, sizeof(k), "h%d/images", n);
	path(p, sizeof(p), k, NULL);
	setenv("MVM_IMAGE_DIR", p, 1);
	snprintf(k, sizeof(k), "h%d/host.key", n);
	path(p, sizeof(p), k, NULL);
	setenv("MVM_HOST_KEY", p, 1);
}

static void put(const char *p, const void *data, size_t n, off_t at, off_t size)
{
	int fd = open(p, O_WRONLY | O_CREAT, 0600);

	cr_assert_geq(fd, 0, "%s", p);
	cr_assert_eq(pwrite(fd, data, n, at), (ssize_t)n);
	cr_assert_eq(ftruncate(fd, size), 0);
	close(fd);
}

static void digest(const char *p, struct snap_file *f)
{
	int fd = open(p, O_RDONLY);

	cr_assert_eq(snap_file_digest(fd, &f->size, &f->crc, f->sha256), 0);
	close(fd);
}

/* Host 1's image root.ext4 and template tpl: memory, root.qcow2 over the
 * image, a state listing them with the BASE section, config.json. */
static void make_template(void)
{
	struct snap_header h = { .ram_size = RAM, .nr_regions = 1, .ncpus = 1 };
	struct snap_file f[2] = { { .name = "memory", .format = "memory" },
				  { .name = "root.qcow2", .format = "qcow2" } };
	struct snap_w w = { 0 };
	struct snap_dir_info in;
	struct snap_base b = { 0 };
	char img[256], dir[256], p[300], cfg[1024], real[PATH_MAX];
	int fd;

	host(1);
	path(img, sizeof(img), "h1/images", NULL);
	cr_assert_eq(mkdir(img, 0755), 0);
	path(img, sizeof(img), "h1/images", "root.ext4");
	put(img, "image-root", 10, 0, 1 << 20);
	put(img, "more", 4, 512 << 10, 1 << 20);
	path(dir, sizeof(dir), "h1/templates", NULL);
	cr_assert_eq(mkdir(dir, 0700), 0);
	path(dir, sizeof(dir), "h1/templates", "tpl");
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(p, sizeof(p), "%s/memory", dir);
	put(p, "guest ram", 9, 4096, (off_t)RAM);
	snprintf(p, sizeof(p), "%s/root.qcow2", dir);
	cr_assert_eq(qcow2_create_overlay(p, img, "raw", 0, 16), 0);
	snprintf(p, sizeof(p), "%s/memory", dir);
	digest(p, &f[0]);
	snprintf(p, sizeof(p), "%s/root.qcow2", dir);
	digest(p, &f[1]);
	cr_assert_not_null(realpath(img, real));
	snprintf(b.path, sizeof(b.path), "%s", real);
	fd = open(img, O_RDONLY);
	cr_assert_eq(snap_ident_fd(fd, &b.id), 0);
	close(fd);
	h.regions[0].size = RAM;
	strcpy(h.cpu_vendor, "AuthenticAMD");
	snap_state_begin(&w, &h);
	snap_files_section(&w, f, 2, NULL);
	snap_base_section(&w, &b);
	cr_assert_eq(snap_state_finish(&w), 0);
	snprintf(p, sizeof(p), "%s/state", dir);
	put(p, w.p, w.len, 0, (off_t)w.len);
	snap_w_free(&w);
	snprintf(cfg, sizeof(cfg), "{\"cpus\": 1, \"memory\": %llu, \"mac\": \"52:54:00:12:34:56\", "
		 "\"net\": false, \"image\": \"%s\", \"disk\": \"root.qcow2\", \"disk_format\": "
		 "\"qcow2\", \"root_on_disk\": true}", (unsigned long long)RAM, b.path);
	snprintf(p, sizeof(p), "%s/config.json", dir);
	put(p, cfg, strlen(cfg), 0, (off_t)strlen(cfg));
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(snap_base_sha256(&in.base), 0);
	cr_assert_eq(tpl_seal(dir, "tpl", "src", &in, err, sizeof(err)), 0, "%s", err);
}

static void setup(void)
{
	char digest_hex[SHA256_HEX];
	uint64_t bytes;

	strcpy(top, "/tmp/mvm-tplbundle-XXXXXX");
	cr_assert_not_null(mkdtemp(top));
	path(bundle, sizeof(bundle), "h1", NULL);
	cr_assert_eq(mkdir(bundle, 0700), 0);
	path(bundle, sizeof(bundle), "h2", NULL);
	cr_assert_eq(mkdir(bundle, 0700), 0);
	make_template();
	path(bundle, sizeof(bundle), "b.tpl", NULL);
	cr_assert_eq(sb_template_export("tpl", bundle, digest_hex, &bytes, err, sizeof(err)), 0,
		     "%s", err);
	host(2);
}

static void teardown(void)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s; rm -rf %s", top, top);
	cr_assert_eq(system(cmd), 0);
}

/* Nothing, hidden or not, in host 2's stores. */
static void nothing_left(void)
{
	static const char *const dirs[] = { "h2/templates", "h2/images" };

	for (int i = 0; i < 2; i++) {
		char p[256], cmd[300];

		path(p, sizeof(p), dirs[i], NULL);
		snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s 2>/dev/null)\"", p);
		cr_assert_eq(system(cmd), 0, "%s is not empty", p);
	}
}

/* Flip the first data byte of entry @k's payload. */
static void flip_entry(int k)
{
	uint8_t h[TB_HDR_LEN + TB_MAX_ENTRIES * TB_REC_LEN], c;
	struct tb_manifest m;
	struct stat st;
	uint64_t off;
	int fd = open(bundle, O_RDWR), n;

	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(pread(fd, h, TB_HDR_LEN, 0), TB_HDR_LEN);
	n = tb_header_count(h, TB_HDR_LEN, err, sizeof(err));
	cr_assert_eq(pread(fd, h, tb_manifest_len(n), 0), (ssize_t)tb_manifest_len(n));
	cr_assert_eq(tb_manifest_parse(h, tb_manifest_len(n), (uint64_t)st.st_size, &m, err,
				       sizeof(err)), 0, "%s", err);
	off = tb_manifest_len(n);
	for (int i = 0; i < k; i++)
		off += m.e[i].stored;
	off += 16;	/* past the first extent's header */
	cr_assert_eq(pread(fd, &c, 1, (off_t)off), 1);
	c ^= 0x20;
	cr_assert_eq(pwrite(fd, &c, 1, (off_t)off), 1);
	close(fd);
}

static void refused_entry(int k, const char *name)
{
	struct sb_import r;
	char want[128];

	flip_entry(k);
	cr_assert_eq(sb_template_import(bundle, NULL, &r, err, sizeof(err)), -EBADMSG);
	snprintf(want, sizeof(want), "entry '%s': its SHA-256 does not match", name);
	cr_assert(strstr(err, want) && strstr(err, "nothing was imported"), "%s", err);
	nothing_left();
}

TestSuite(tpl_import, .init = setup, .fini = teardown);

Test(tpl_import, edited_state_is_refused) { refused_entry(0, "state"); }
Test(tpl_import, edited_config_is_refused) { refused_entry(1, "config.json"); }
Test(tpl_import, edited_memory_is_refused) { refused_entry(2, "memory"); }
Test(tpl_import, edited_layer_is_refused) { refused_entry(3, "root.qcow2"); }
Test(tpl_import, edited_image_is_refused) { refused_entry(4, "root.ext4"); }

Test(tpl_import, truncated_bundle_is_refused)
{
	struct sb_import r;
	struct stat st;

	cr_assert_eq(stat(bundle, &st), 0);
	cr_assert_eq(truncate(bundle, st.st_size - 1), 0);
	cr_assert_eq(sb_template_import(bundle, NULL, &r, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "truncated"), "%s", err);
	nothing_left();
}

Test(tpl_import, round_trip_then_no_op)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct sb_import r;
	char dir[256], img[256];

	cr_assert_eq(sb_template_import(bundle, NULL, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(r.noop);
	cr_assert_not(r.image_reused);
	cr_assert_str_eq(r.name, "tpl");
	path(img, sizeof(img), "h2/images", "root.ext4");
	cr_assert_str_eq(r.image, img);
	/* The start's check, with host 2's key and image store. */
	path(dir, sizeof(dir), "h2/templates", "tpl");
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(in.base.path, img);
	cr_assert_str_eq(m.bundle, r.digest);
	/* Host 1's state listed SHA-256s (v2): host 2 tagged the files under
	 * its own key (v3). */
	cr_assert_eq(in.fver, 3);
	cr_assert_eq(sb_template_import(bundle, NULL, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert(r.noop);
	cr_assert_str_eq(r.name, "tpl");
	/* Another name: imported again, the image reused by its digest. */
	cr_assert_eq(sb_template_import(bundle, "tpl2", &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_not(r.noop);
	cr_assert(r.image_reused);
	cr_assert_str_eq(r.image, img);
	path(dir, sizeof(dir), "h2/templates", "tpl2");
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), 0, "%s", err);
}

Test(tpl_import, taken_name_is_refused)
{
	char d[SHA256_HEX], dir[256];
	struct sb_import r;
	uint64_t bytes;

	cr_assert_eq(sb_template_import(bundle, "other", &r, err, sizeof(err)), 0, "%s", err);
	/* Host 2's export of it is another bundle (its name, its layer on
	 * host 2's image): not under a name a different template holds. */
	path(bundle, sizeof(bundle), "b2.tpl", NULL);
	cr_assert_eq(sb_template_export("other", bundle, d, &bytes, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sb_template_export("other", bundle, d, &bytes, err, sizeof(err)), -EEXIST);
	cr_assert(strstr(err, "exists: not replaced"), "%s", err);
	cr_assert_eq(sb_template_import(bundle, "tpl", &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sb_template_import(bundle, "other", &r, err, sizeof(err)), -EEXIST);
	cr_assert(strstr(err, "already exists and is not this bundle") && strstr(err, "--name"),
		  "%s", err);
	path(dir, sizeof(dir), "h2/templates", "other");
	cr_assert_eq(access(dir, F_OK), 0, "the template in place is kept");
}

Test(tpl_import, another_hosts_seal_is_not_trusted)
{
	struct snap_dir_info in;
	struct tpl_meta m;
	struct sb_import r;
	char dir[256];

	cr_assert_eq(sb_template_import(bundle, NULL, &r, err, sizeof(err)), 0, "%s", err);
	host(1);
	path(dir, sizeof(dir), "h2/templates", "tpl");
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "seal"), "%s", err);
}

/* Issue 27: a template's files are tagged under a key of the host that
 * holds it (state FILE section v3, snapshots/snap_mac.h). Host 2's template
 * (v3, host 2's key) exported and imported back on host 1 (another key):
 * host 1 tags the files again under its own key and a fresh salt, and its
 * start's check passes; host 2's tags would not verify there. Fails on the
 * old code: host 2's import kept host 1's SHA-256 list (no fver, no salt). */
Test(tpl_import, a_tagged_template_moves_between_host_keys)
{
	struct snap_dir_info in, in2;
	struct tpl_meta m;
	struct sb_import r;
	char d[SHA256_HEX], dir[256], b2[128];
	uint64_t bytes;

	cr_assert_eq(sb_template_import(bundle, NULL, &r, err, sizeof(err)), 0, "%s", err);
	path(dir, sizeof(dir), "h2/templates", "tpl");
	cr_assert_eq(tpl_check(dir, &in2, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(in2.fver, 3);
	path(b2, sizeof(b2), "b2.tpl", NULL);
	cr_assert_eq(sb_template_export("tpl", b2, d, &bytes, err, sizeof(err)), 0, "%s", err);
	host(1);
	/* Host 2's tags, checked under host 1's key: refused. */
	cr_assert_eq(snap_verify_layers(dir, &in2, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "keyed tag"), "%s", err);
	cr_assert_eq(sb_template_import(b2, "back", &r, err, sizeof(err)), 0, "%s", err);
	path(dir, sizeof(dir), "h1/templates", "back");
	cr_assert_eq(tpl_check(dir, &in, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(in.fver, 3);
	cr_assert_neq(memcmp(in.salt, in2.salt, SNAP_SALT_LEN), 0);
	cr_assert_eq(snap_verify_dir(dir, &in, err, sizeof(err)), 0, "%s", err);
}
