/* A guest's tree stream as tar (tools/serve/serve_tree_out.h): what a
 * client gets is a whole archive of checked entries, or a cut stream. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tools/serve/serve_tar.h"
#include "tools/serve/serve_tree_out.h"

static int sp[2];

static void entry(uint32_t kind, const char *path, const char *data, const char *target)
{
	struct ap_entry e = { .kind = kind, .mode = kind == AP_DIR ? 0755 : 0644, .size = data ? strlen(data) : 0 };
	static uint8_t buf[2 * AP_PATH_MAX + 64];
	long n;

	snprintf(e.path, sizeof(e.path), "%s", path);
	if (target)
		snprintf(e.target, sizeof(e.target), "%s", target);
	n = ap_entry_encode(&e, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	cr_assert_eq(ap_write_frame(sp[1], AP_ENTRY, buf, (size_t)n), 0);
	if (data && data[0])
		cr_assert_eq(ap_write_frame(sp[1], AP_DATA, data, strlen(data)), 0);
}

static void *conv(uint32_t root_kind, const char *root_data, uint64_t cap)
{
	struct ap_entry root = { .kind = root_kind, .mode = 0755, .size = root_data ? strlen(root_data) : 0 };
	void *t;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	t = sv_tree_out_new(sp[0], cap, &root, "x", 1700000000);
	cr_assert_not_null(t);
	if (root_data)
		cr_assert_eq(ap_write_frame(sp[1], AP_DATA, root_data, strlen(root_data)), 0);
	return t;
}

/* Everything the converter gives: its length, or -1 if it cut the stream (writer still open). */
static long drain_open(void *t, uint8_t *out, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while ((n = sv_tree_out_read(t, (char *)out + len, cap - len < 4096 ? cap - len : 4096)) > 0)
		len += (size_t)n;
	sv_tree_out_free(t);
	return n < 0 ? -1 : (long)len;
}

static long drain(void *t, uint8_t *out, size_t cap)
{
	close(sp[1]);
	return drain_open(t, out, cap);
}

Test(serve_tree_out, an_honest_tree_becomes_a_whole_archive_without_the_unsafe_entries)
{
	static uint8_t out[1 << 20];
	void *t = conv(AP_DIR, NULL, 1 << 20);
	struct sv_tar tar;
	char err[256];
	long n;

	entry(AP_DIR, "a", NULL, NULL);
	entry(AP_FILE, "a/f", "hello", NULL);
	entry(AP_SYMLINK, "l", NULL, "a/f");
	entry(AP_FILE, "bad\nname", "bad", NULL);	/* a control character: left out, its bytes read */
	entry(AP_SYMLINK, "out", NULL, "/etc/passwd");	/* leaves the tree: left out */
	entry(AP_FILE, "z", "", NULL);
	cr_assert_eq(ap_write_frame(sp[1], AP_END, NULL, 0), 0);
	n = drain(t, out, sizeof(out));
	cr_assert_gt(n, 0);
	cr_assert_eq(sv_tar_parse(out, (size_t)n, &tar, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tar.n, 4);
	cr_assert_eq(memcmp(tar.e[1].path, "a/f", 3), 0);
	cr_assert_eq(memcmp(tar.e[1].data, "hello", 5), 0);
	cr_assert_str_eq(tar.e[2].target, "a/f");
	cr_assert_eq(tar.e[3].size, 0);
	sv_tar_free(&tar);
}

Test(serve_tree_out, a_file_root_is_one_entry_named_after_it)
{
	static uint8_t out[1 << 16];
	void *t = conv(AP_FILE, "abc", 1 << 20);
	struct sv_tar tar;
	char err[256];
	long n;

	cr_assert_eq(ap_write_frame(sp[1], AP_END, NULL, 0), 0);
	n = drain(t, out, sizeof(out));
	cr_assert_eq(sv_tar_parse(out, (size_t)n, &tar, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tar.n, 1);
	cr_assert_eq(tar.e[0].plen, 1);
	cr_assert_eq(tar.e[0].path[0], 'x');
	cr_assert_eq(memcmp(tar.e[0].data, "abc", 3), 0);
	sv_tar_free(&tar);
}

static uint8_t big[512 << 10];

/* A file entry, then one DATA frame of all of it: far over AP_CHUNK, within a frame's 1 MiB. */
static void *big_frame(void *arg)
{
	struct ap_entry e = { .kind = AP_FILE, .mode = 0644, .size = sizeof(big) };
	static uint8_t buf[AP_PATH_MAX + 64];

	(void)arg;
	snprintf(e.path, sizeof(e.path), "f");
	ap_write_frame(sp[1], AP_ENTRY, buf, (size_t)ap_entry_encode(&e, buf, sizeof(buf)));
	ap_write_frame(sp[1], AP_DATA, big, sizeof(big));
	shutdown(sp[1], SHUT_WR);
	return NULL;
}

Test(serve_tree_out, a_guest_that_breaks_the_rules_cuts_the_stream)
{
	static uint8_t out[4 << 20];
	pthread_t w;
	void *t;

	/* Before the fix this DATA frame overran the converter's buffer (ASan: heap overflow). */
	t = conv(AP_DIR, NULL, 4 << 20);
	cr_assert_eq(pthread_create(&w, NULL, big_frame, NULL), 0);
	cr_assert_eq(drain_open(t, out, sizeof(out)), -1);
	close(sp[1]);	/* the writer may be blocked: a closed reader ends its write */
	pthread_join(w, NULL);
	/* Files past the cap. */
	t = conv(AP_DIR, NULL, 8);
	entry(AP_FILE, "a", "12345", NULL);
	entry(AP_FILE, "b", "67890", NULL);
	cr_assert_eq(drain(t, out, sizeof(out)), -1);
	/* A second root. */
	t = conv(AP_DIR, NULL, 1 << 20);
	entry(AP_DIR, "", NULL, NULL);
	cr_assert_eq(drain(t, out, sizeof(out)), -1);
	/* The stream ends without END. */
	t = conv(AP_DIR, NULL, 1 << 20);
	entry(AP_FILE, "a", "12345", NULL);
	cr_assert_eq(drain(t, out, sizeof(out)), -1);
	/* A file root followed by more entries. */
	t = conv(AP_FILE, "abc", 1 << 20);
	entry(AP_FILE, "more", "x", NULL);
	cr_assert_eq(drain(t, out, sizeof(out)), -1);
}
