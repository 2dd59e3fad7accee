/* The image base of a snapshot or template (snapshots/snap_base.h): which
 * paths a record may name, identity comparison, the BASE section as hostile
 * input, the start's check and the base's checksum. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/snap_buf.h"
#include "snapshots/snap_base.h"
#include "snapshots/state_file.h"
#include "tests/unit/qcow2_testutil.h"

Test(snap_base, path_ok_only_a_file_directly_in_the_store)
{
	const char *s = "/home/u/.local/share/mvm/images";

	cr_assert(snap_base_path_ok("/home/u/.local/share/mvm/images/browser.ext4", s));
	cr_assert(snap_base_path_ok("/x.ext4", "/"));
	cr_assert_not(snap_base_path_ok("/home/u/.local/share/mvm/images", s));
	cr_assert_not(snap_base_path_ok("/home/u/.local/share/mvm/images/", s));
	cr_assert_not(snap_base_path_ok("/home/u/.local/share/mvm/imagesX/a.ext4", s));
	cr_assert_not(snap_base_path_ok("/home/u/.local/share/mvm/images/sub/a.ext4", s));
	cr_assert_not(snap_base_path_ok("/home/u/.local/share/mvm/images/../../../../.ssh/id", s));
	cr_assert_not(snap_base_path_ok("/home/u/.local/share/mvm/images/..", s));
	cr_assert_not(snap_base_path_ok("/home/u/.local/share/mvm/images/.", s));
	cr_assert_not(snap_base_path_ok("/home/u/.local/share/mvm//images/a.ext4", s));
	cr_assert_not(snap_base_path_ok("home/u/.local/share/mvm/images/a.ext4", s));
	cr_assert_not(snap_base_path_ok("/etc/shadow", s));
	cr_assert_not(snap_base_path_ok("/", "/"));
	cr_assert_not(snap_base_path_ok("/a/b.ext4", "relative"));
	cr_assert_not(snap_base_path_ok("/a/./b.ext4", "/a/."));
}

Test(snap_base, path_ok_bounded)
{
	char p[SNAP_BASE_PATH + 8] = "/s/";

	memset(p + 3, 'a', SNAP_BASE_PATH - 3);
	p[SNAP_BASE_PATH] = 0;
	cr_assert_not(snap_base_path_ok(p, "/s"));
	p[SNAP_BASE_PATH - 1] = 0;
	cr_assert(snap_base_path_ok(p, "/s"));
}

Test(snap_base, ident_differs_names_the_field)
{
	struct snap_ident a = { .size = 10, .ino = 2, .dev = 3, .mtime_ns = 4 }, b = a;

	cr_assert_null(snap_ident_differs(&a, &b));
	b.size = 11;
	cr_assert_str_eq(snap_ident_differs(&a, &b), "size");
	b = a, b.mtime_ns = 5;
	cr_assert_str_eq(snap_ident_differs(&a, &b), "modification time");
	b = a, b.ino = 9;
	cr_assert_str_eq(snap_ident_differs(&a, &b), "inode");
	b = a, b.dev = 9;
	cr_assert_str_eq(snap_ident_differs(&a, &b), "device");
}

/* A BASE section's bytes: path, format, then the four numbers. */
static struct snap_section payload(struct snap_w *w, const char *path, uint32_t plen,
				   const char *fmt, bool numbers)
{
	snap_w_blob(w, path, plen);
	snap_w_blob(w, fmt, (uint32_t)strlen(fmt));
	for (int i = 0; numbers && i < 4; i++)
		snap_w_u64(w, (uint64_t)i + 1);
	return (struct snap_section){ SNAP_SEC_BASE, 0, 1, (uint32_t)w->len, w->p };
}

Test(snap_base, section_round_trip)
{
	struct snap_base b = { .path = "/s/img.ext4", .id = { 1 << 20, 7, 8, -1 } }, back;
	struct snap_w w = { 0 };
	struct snap_section sec;

	snap_base_section(&w, &b);
	cr_assert_eq(w.err, 0);
	sec = (struct snap_section){ SNAP_SEC_BASE, 0, 1, (uint32_t)w.len - 16, w.p + 16 };
	cr_assert_eq(snap_base_decode(&sec, &back), 0);
	cr_assert_str_eq(back.path, b.path);
	cr_assert_null(snap_ident_differs(&b.id, &back.id));
	snap_w_free(&w);
}

Test(snap_base, section_hostile)
{
	struct snap_base b;
	struct snap_w w = { 0 };
	struct snap_section sec;

	sec = payload(&w, "/s/a\0/etc/shadow", 16, "raw", true);
	cr_assert_eq(snap_base_decode(&sec, &b), -EBADMSG, "a NUL inside the path");
	snap_w_free(&w), memset(&w, 0, sizeof(w));
	sec = payload(&w, "/s/a", 4, "qcow2", true);
	cr_assert_eq(snap_base_decode(&sec, &b), -EBADMSG, "a base that is not raw");
	snap_w_free(&w), memset(&w, 0, sizeof(w));
	sec = payload(&w, "/s/a", 4, "raw", false);
	cr_assert_eq(snap_base_decode(&sec, &b), -EBADMSG, "truncated");
	snap_w_free(&w), memset(&w, 0, sizeof(w));
	sec = payload(&w, "/s/a", 4, "raw", true);
	sec.version = 2;
	cr_assert_eq(snap_base_decode(&sec, &b), -EBADMSG, "unknown version");
	sec.version = 1;
	cr_assert_eq(snap_base_decode(&sec, &b), 0);
	snap_w_free(&w);
}

static char *store;

static void setup(void)
{
	char real[4096];

	store = qt_mkdtemp();
	cr_assert_not_null(realpath(store, real));
	free(store);
	store = strdup(real);
	setenv("MVM_IMAGE_DIR", store, 1);
}

static void teardown(void)
{
	unsetenv("MVM_IMAGE_DIR");
	qt_rmtree(store);
}

/* @name in the store, with @len bytes of @c; its record into @b. */
static void make_base(const char *name, size_t len, int c, struct snap_base *b)
{
	char *p = qt_path(store, name), *buf = malloc(len);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);

	memset(buf, c, len);
	cr_assert(fd >= 0 && write(fd, buf, len) == (ssize_t)len);
	memset(b, 0, sizeof(*b));
	snprintf(b->path, sizeof(b->path), "%s", p);
	cr_assert_eq(snap_ident_fd(fd, &b->id), 0);
	close(fd);
	free(buf), free(p);
}

Test(snap_base, check_unchanged_then_touched, .init = setup, .fini = teardown)
{
	char err[600] = "";
	struct snap_base b;
	struct timespec t[2] = { { 0, UTIME_OMIT }, { 12345, 0 } };

	make_base("img.ext4", 8192, 'x', &b);
	cr_assert_eq(snap_base_check(&b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(utimensat(AT_FDCWD, b.path, t, 0), 0);
	cr_assert_eq(snap_base_check(&b, err, sizeof(err)), -EBADMSG);
	cr_assert_not_null(strstr(err, b.path), "%s", err);
	cr_assert_not_null(strstr(err, "modification time differs"), "%s", err);
}

Test(snap_base, check_refuses_outside_symlink_and_qcow2, .init = setup, .fini = teardown)
{
	char err[600] = "", *lnk = qt_path(store, "lnk.ext4"), *sub = qt_path(store, "d");
	struct snap_base b, q;

	make_base("img.ext4", 4096, 'x', &b);
	cr_assert_eq(symlink(b.path, lnk), 0);
	snprintf(b.path, sizeof(b.path), "%s", lnk);
	cr_assert_eq(snap_base_check(&b, err, sizeof(err)), -EACCES, "a symlink: %s", err);
	cr_assert_not_null(strstr(err, "not an image of the image store"), "%s", err);
	setenv("MVM_IMAGE_DIR", sub, 1);	/* the same file, another store */
	make_base("img.ext4", 4096, 'x', &b);
	cr_assert_eq(snap_base_check(&b, err, sizeof(err)), -EACCES);
	setenv("MVM_IMAGE_DIR", store, 1);
	make_base("q.ext4", 4096, 0, &q);
	{
		int fd = open(q.path, O_WRONLY);

		cr_assert_eq(pwrite(fd, "QFI\xfb", 4, 0), 4);
		cr_assert_eq(snap_ident_fd(fd, &q.id), 0);
		close(fd);
	}
	cr_assert_eq(snap_base_check(&q, err, sizeof(err)), -EINVAL, "qcow2 as a base: %s", err);
	free(lnk), free(sub);
}

Test(snap_base, sha256_recorded_or_over_blocks, .init = setup, .fini = teardown)
{
	char *json = qt_path(store, "img.json"), *holes = qt_path(store, "holes.ext4");
	const char *rec = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct snap_base b, h;
	FILE *fp;
	int fd;

	make_base("img.ext4", 3 * 4096, 0, &b);
	/* Explicit zero blocks and holes hash alike: only non-zero blocks count. */
	fd = open(holes, O_RDWR | O_CREAT, 0644);
	cr_assert_eq(ftruncate(fd, 3 * 4096), 0);
	close(fd);
	snprintf(h.path, sizeof(h.path), "%s", holes);
	cr_assert_eq(snap_base_sha256(&b), 0);
	cr_assert_str_eq(b.sha256_of, "blocks");
	cr_assert_eq(strlen(b.sha256), 64);
	cr_assert_eq(snap_base_sha256(&h), 0);
	cr_assert_str_eq(h.sha256, b.sha256);
	/* The store's own record, written after the image, is taken as it is. */
	fp = fopen(json, "w");
	fprintf(fp, "{\"name\": \"img\", \"sha256\": \"%s\"}\n", rec);
	fclose(fp);
	cr_assert_eq(snap_base_sha256(&b), 0);
	cr_assert_str_eq(b.sha256_of, "file");
	cr_assert_str_eq(b.sha256, rec);
	/* An image newer than its record: computed again. */
	{
		struct timespec t[2] = { { 0, UTIME_OMIT }, { 1000, 0 } };

		cr_assert_eq(utimensat(AT_FDCWD, json, t, 0), 0);
	}
	cr_assert_eq(snap_base_sha256(&b), 0);
	cr_assert_str_eq(b.sha256_of, "blocks");
	cr_assert_str_eq(b.sha256, h.sha256);
	free(json), free(holes);
}
