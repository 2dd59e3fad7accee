/*
 * OCI layers applied to a staging tree (images/oci_layer.c), with tars made
 * here by libarchive's writer: whiteouts and opaque directories as the
 * image spec defines them, and every hostile kind refused with a message
 * naming the entry, nothing written outside the tree.
 */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <archive.h>
#include <archive_entry.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/fs_util.h"
#include "common/sha256.h"
#include "images/oci_layer.h"
#include "images/oci_stage.h"

struct ent {
	const char *path;
	mode_t type;		/* AE_IF*; 0: regular */
	unsigned mode;
	int uid;
	const char *data;	/* regular: content; symlink: target */
	const char *hardlink;
};

static char dir[64], outside[96], layer[96];
static struct oci_stage st;
static char err[512];

static void setup(void)
{
	char stage[96];

	snprintf(dir, sizeof(dir), "/tmp/mvm-ocilayer.XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	snprintf(layer, sizeof(layer), "%s/layer.tar", dir);
	snprintf(stage, sizeof(stage), "%s/root", dir);
	cr_assert_eq(mkdir(outside, 0755), 0);
	cr_assert_eq(oci_stage_init(&st, stage), 0);
}

static void teardown(void)
{
	oci_stage_free(&st);
	rm_tree(dir);
}

TestSuite(oci_layer, .init = setup, .fini = teardown);

/* A tar of @n entries at @layer (@gzip: compressed); its diff_id into @hex. */
static void make_tar(const struct ent *e, size_t n, int gzip, char hex[SHA256_HEX])
{
	struct archive *a = archive_write_new();
	char uncompressed[128];
	int fd;

	snprintf(uncompressed, sizeof(uncompressed), "%s.raw", layer);
	archive_write_set_format_pax_restricted(a);
	cr_assert_eq(archive_write_open_filename(a, uncompressed), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *ae = archive_entry_new();
		mode_t type = e[i].type ? e[i].type : AE_IFREG;

		archive_entry_set_pathname(ae, e[i].path);
		archive_entry_set_filetype(ae, type);
		archive_entry_set_perm(ae, e[i].mode ? e[i].mode : (type == AE_IFDIR ? 0755 : 0644));
		archive_entry_set_uid(ae, e[i].uid);
		if (type == AE_IFLNK)
			archive_entry_set_symlink(ae, e[i].data);
		if (e[i].hardlink)
			archive_entry_set_hardlink(ae, e[i].hardlink);
		if (type == AE_IFCHR)
			archive_entry_set_rdev(ae, makedev(1, 3));
		if (type == AE_IFREG && e[i].data && !e[i].hardlink)
			archive_entry_set_size(ae, (la_int64_t)strlen(e[i].data));
		cr_assert_eq(archive_write_header(a, ae), ARCHIVE_OK, "%s", archive_error_string(a));
		if (type == AE_IFREG && e[i].data && !e[i].hardlink)
			archive_write_data(a, e[i].data, strlen(e[i].data));
		archive_entry_free(ae);
	}
	archive_write_free(a);
	fd = open(uncompressed, O_RDONLY);
	cr_assert_eq(sha256_fd_hex(fd, hex), 0);
	close(fd);
	if (!gzip) {
		cr_assert_eq(rename(uncompressed, layer), 0);
		return;
	}
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "gzip -c %s > %s", uncompressed, layer);
	cr_assert_eq(system(cmd), 0);
}

static int apply_lim(const struct ent *e, size_t n, const struct oci_limits *lim)
{
	char hex[SHA256_HEX];
	int fd, ret;

	make_tar(e, n, 1, hex);
	fd = open(layer, O_RDONLY);
	cr_assert_geq(fd, 0);
	err[0] = 0;
	ret = oci_layer_apply(&st, fd, hex, lim, err, sizeof(err));
	close(fd);
	if (ret)
		cr_assert(err[0], "a refusal says why");
	return ret;
}

static int apply(const struct ent *e, size_t n)
{
	return apply_lim(e, n, &oci_limits_default);
}

#define APPLY(...) apply((const struct ent[]){ __VA_ARGS__ }, \
			 sizeof((const struct ent[]){ __VA_ARGS__ }) / sizeof(struct ent))

static int exists(const char *rel)
{
	struct stat s;

	return !fstatat(st.root, rel, &s, AT_SYMLINK_NOFOLLOW);
}

static char *content(const char *rel)
{
	static char buf[256];
	int fd = openat(st.root, rel, O_RDONLY | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

Test(oci_layer, whiteouts_and_opaque_directories)
{
	cr_assert_eq(APPLY({ "etc/", AE_IFDIR }, { "etc/a", 0, 0, 0, "a1" }, { "etc/b", 0, 0, 0, "b1" },
			   { "conf/", AE_IFDIR }, { "conf/old", 0, 0, 0, "o" },
			   { "conf/sub/", AE_IFDIR }, { "conf/sub/deep", 0, 0, 0, "d" }), 0, "%s", err);
	/* Layer 2: delete etc/a; make conf opaque but bring conf/new in the
	 * same layer (before the marker: order in the tar does not matter);
	 * a whiteout of its own layer's etc/c does not hide it (the spec). */
	cr_assert_eq(APPLY({ "conf/new", 0, 0, 0, "n" }, { "etc/.wh.a" }, { "conf/.wh..wh..opq" },
			   { "etc/c", 0, 0, 0, "c2" }, { "etc/.wh.c" }, { "etc/b", 0, 0, 0, "b2" }),
		     0, "%s", err);
	cr_assert(!exists("etc/a"), "whiteout deletes the lower file");
	cr_assert_str_eq(content("etc/b"), "b2", "an upper file replaces the lower one");
	cr_assert_str_eq(content("etc/c"), "c2", "a whiteout hides lower layers only");
	cr_assert(!exists("conf/old") && !exists("conf/sub"), "opaque hides the lower children");
	cr_assert_str_eq(content("conf/new"), "n", "opaque keeps its own layer's children");
	/* Layer 3: a whiteout of a directory removes the whole subtree; a file
	 * replaces a directory. */
	cr_assert_eq(APPLY({ ".wh.conf" }, { "etc", 0, 0, 0, "now a file" }), 0, "%s", err);
	cr_assert(!exists("conf"));
	cr_assert_str_eq(content("etc"), "now a file");
	/* Layer 4: the file becomes an opaque directory (what a build that
	 * replaced it records), and a symlink may be replaced by a directory. */
	cr_assert_eq(APPLY({ "lnk", AE_IFLNK, 0777, 0, "/" }), 0, "%s", err);
	cr_assert_eq(APPLY({ "etc/", AE_IFDIR }, { "etc/.wh..wh..opq" }, { "etc/x", 0, 0, 0, "x" },
			   { "lnk/", AE_IFDIR }, { "lnk/y", 0, 0, 0, "y" }), 0, "%s", err);
	cr_assert_str_eq(content("etc/x"), "x");
	cr_assert_str_eq(content("lnk/y"), "y", "the directory replaced the link, not followed it");
}

Test(oci_layer, hostile_names_are_refused)
{
	static const char *bad[] = { "../escape", "/abs/file", "a/../../escape", "a/.wh..wh.plnk" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(APPLY({ bad[i], 0, 0, 0, "x" }), -EINVAL, "accepted %s", bad[i]);
		cr_assert(strstr(err, bad[i]) || strstr(err, "no such"), "names the entry: %s", err);
	}
	cr_assert(!exists("escape") && !exists("abs"));
}

Test(oci_layer, devices_and_setid_outside_the_policy)
{
	cr_assert_eq(APPLY({ "dev/null", AE_IFCHR, 0666 }), -EINVAL);
	cr_assert(strstr(err, "device node"), "%s", err);
	cr_assert_eq(APPLY({ "bin/su", 0, 04755, 1000, "x" }), -EINVAL);
	cr_assert(strstr(err, "setuid"), "setuid to a non-root owner: %s", err);
	cr_assert_eq(APPLY({ "bin/su", 0, 04777, 0, "x" }), -EINVAL);
	cr_assert(strstr(err, "setuid"), "world-writable setuid: %s", err);
	cr_assert_eq(APPLY({ "d/", AE_IFDIR, 04755 }), -EINVAL, "setuid directory");
	/* Within the policy: kept, in the recorded mode only (never on the host). */
	cr_assert_eq(APPLY({ "bin/passwd", 0, 04755, 0, "x" }, { "srv/", AE_IFDIR, 02775, 5 }), 0, "%s", err);
	struct stat s;

	cr_assert_eq(fstatat(st.root, "bin/passwd", &s, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(s.st_mode & 07777, 0600, "staged without set-id bits or others' access");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uint64_t bytes;

	cr_assert_eq(oci_stage_owner_script(&st, f, &bytes), 0);
	fclose(f);
	cr_assert(strstr(text, "sif \"/bin/passwd\" mode 0104755\n"), "%s", text);
	cr_assert(strstr(text, "sif \"/srv\" uid 5\n"), "%s", text);
	cr_assert(strstr(text, "sif \"/bin\" mode 040755\n"), "implicit directory: %s", text);
	free(text);
}

Test(oci_layer, links_never_lead_out)
{
	char target[160];

	/* A lower layer's symlink must not redirect an upper layer's write. */
	snprintf(target, sizeof(target), "%s", outside);
	cr_assert_eq(APPLY({ "lib", AE_IFLNK, 0777, 0, target }), 0, "%s", err);
	cr_assert_eq(APPLY({ "lib/evil", 0, 0, 0, "x" }), -ELOOP);
	cr_assert(strstr(err, "lib/evil") && strstr(err, "symlink"), "%s", err);
	cr_assert_eq(APPLY({ "lib/.wh.x" }), -ELOOP, "nor a whiteout");
	/* Hard links: to an outside name, through the link, to nothing. */
	cr_assert_eq(APPLY({ "h1", 0, 0, 0, NULL, "../etc/passwd" }), -EINVAL);
	cr_assert_eq(APPLY({ "h2", 0, 0, 0, NULL, "/etc/passwd" }), -EINVAL);
	cr_assert_eq(APPLY({ "h3", 0, 0, 0, NULL, "lib/x" }), -ELOOP);
	cr_assert_eq(APPLY({ "h4", 0, 0, 0, NULL, "nothing" }), -ENOENT);
	cr_assert_eq(APPLY({ "h5", 0, 0, 0, NULL, "lib" }), -ENOENT, "hard link to a symlink");
	/* The symlink itself is kept as it is: the guest resolves it. */
	char buf[160];
	ssize_t n = readlinkat(st.root, "lib", buf, sizeof(buf) - 1);

	cr_assert_gt(n, 0);
	buf[n] = 0;
	cr_assert_str_eq(buf, target);
	DIR *d = opendir(outside);
	int entries = 0;

	while (readdir(d))
		entries++;
	closedir(d);
	cr_assert_eq(entries, 2, "nothing written outside the tree");
	/* An opaque marker under the link hides the link itself (the layer
	 * makes lib a directory); what it pointed to is not touched. */
	char keep[200];

	snprintf(keep, sizeof(keep), "%s/keep", outside);
	close(creat(keep, 0600));
	cr_assert_eq(APPLY({ "lib/.wh..wh..opq" }, { "lib/z", 0, 0, 0, "z" }), 0, "%s", err);
	cr_assert_str_eq(content("lib/z"), "z");
	cr_assert_eq(access(keep, F_OK), 0, "the link's target directory was not emptied");
	/* A good hard link shares the file. */
	cr_assert_eq(APPLY({ "f", 0, 0, 0, "data" }, { "g", 0, 0, 0, NULL, "f" }), 0, "%s", err);
	cr_assert_str_eq(content("g"), "data");
}

Test(oci_layer, digest_mismatch_writes_nothing)
{
	char hex[SHA256_HEX];
	int fd;

	make_tar((const struct ent[]){ { "x", 0, 0, 0, "x" } }, 1, 1, hex);
	hex[0] = hex[0] == '0' ? '1' : '0';
	fd = open(layer, O_RDONLY);
	cr_assert_eq(oci_layer_apply(&st, fd, hex, &oci_limits_default, err, sizeof(err)), -EINVAL);
	close(fd);
	cr_assert(strstr(err, "diff_id"), "%s", err);
	cr_assert(!exists("x"));
}

Test(oci_layer, size_caps)
{
	struct oci_limits lim = oci_limits_default;

	lim.max_file = 3;
	cr_assert_eq(apply_lim((const struct ent[]){ { "big", 0, 0, 0, "1234" } }, 1, &lim), -EFBIG);
	cr_assert(strstr(err, "big") && strstr(err, "size limit"), "%s", err);
	lim = oci_limits_default;
	lim.max_entries = st.entries + 2;
	cr_assert_eq(apply_lim((const struct ent[]){ { "a" }, { "b" }, { "c" } }, 3, &lim), -E2BIG);
	cr_assert(strstr(err, "entries"), "%s", err);
	lim = oci_limits_default;
	lim.max_bytes = st.stream_bytes + 1024;
	int r = apply_lim((const struct ent[]){ { "a", 0, 0, 0, "x" } }, 1, &lim);
	cr_assert_eq(r, -E2BIG, "%d %s", r, err);
	cr_assert(strstr(err, "unpack to over"), "%s", err);
}

Test(oci_layer, decompression_bomb)
{
	struct oci_limits lim = oci_limits_default;
	static char zeros[1 << 20];
	char hex[SHA256_HEX];
	int fd;

	memset(zeros, 'z', sizeof(zeros) - 1);
	lim.ratio_floor = 256 << 10;
	lim.max_ratio = 50;
	make_tar((const struct ent[]){ { "bomb", 0, 0, 0, zeros } }, 1, 1, hex);
	fd = open(layer, O_RDONLY);
	cr_assert_eq(oci_layer_apply(&st, fd, hex, &lim, err, sizeof(err)), -E2BIG);
	close(fd);
	cr_assert(strstr(err, "decompression bomb"), "%s", err);
	cr_assert(!exists("bomb"));
}

Test(oci_layer, not_a_tar)
{
	int fd = open(layer, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert_eq(write(fd, "garbage garbage garbage", 23), 23);
	close(fd);
	fd = open(layer, O_RDONLY);
	cr_assert_neq(oci_layer_apply(&st, fd, NULL, &oci_limits_default, err, sizeof(err)), 0);
	close(fd);
	cr_assert(err[0]);
}
