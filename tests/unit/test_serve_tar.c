/* `mvm serve`'s tar (tools/serve/serve_tar.h): a client's archive checked
 * before the guest sees it, and the headers written for a guest's tree. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/serve/serve_tar.h"

struct tb {
	uint8_t buf[1 << 20];
	size_t len;
};

static void add(struct tb *b, uint32_t kind, const char *name, uint32_t mode, const char *data, const char *target)
{
	struct ap_entry e = { .kind = kind, .mode = mode, .size = data ? strlen(data) : 0 };
	long n;

	if (target)
		snprintf(e.target, sizeof(e.target), "%s", target);
	n = sv_tar_header(&e, name, 1700000000, b->buf + b->len, sizeof(b->buf) - b->len);
	cr_assert_gt(n, 0, "header of %s", name);
	b->len += (size_t)n;
	if (data) {
		memcpy(b->buf + b->len, data, e.size);
		b->len += e.size;
		memset(b->buf + b->len, 0, sv_tar_pad(e.size));
		b->len += sv_tar_pad(e.size);
	}
}

static void finish(struct tb *b)
{
	memset(b->buf + b->len, 0, 1024);
	b->len += 1024;
}

/* Rewrite one header's checksum after a test edited it. */
static void resum(uint8_t *h)
{
	unsigned sum = 0;

	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static int parse(struct tb *b, struct sv_tar *t, char *err)
{
	return sv_tar_parse(b->buf, b->len, t, err, 256);
}

static const char *path(const struct sv_tar *t, size_t i, char *out)
{
	snprintf(out, 4096, "%.*s", (int)t->e[i].plen, t->e[i].path);
	return out;
}

Test(serve_tar, our_headers_read_back_with_parents_first_and_dot_slash_dropped)
{
	static struct tb b;
	struct sv_tar t;
	char err[256] = "", p[4096];

	add(&b, AP_DIR, ".", 0750, NULL, NULL);
	add(&b, AP_FILE, "./src/z.c", 0644, "int z;\n", NULL);
	add(&b, AP_SYMLINK, "./link", 0777, NULL, "src/z.c");
	add(&b, AP_FILE, "./src/a.c", 0755, "int a;\n", NULL);
	add(&b, AP_DIR, "./src", 0700, NULL, NULL);
	finish(&b);
	cr_assert_eq(parse(&b, &t, err), 0, "%s", err);
	cr_assert(t.has_root);
	cr_assert_eq(t.root_mode, 0750);
	cr_assert_eq(t.n, 4);
	cr_assert_str_eq(path(&t, 0, p), "link");
	cr_assert_str_eq(t.e[0].target, "src/z.c");
	cr_assert_str_eq(path(&t, 1, p), "src");
	cr_assert_eq(t.e[1].kind, AP_DIR);
	cr_assert_eq(t.e[1].mode, 0700);
	cr_assert_not(t.e[1].added);
	cr_assert_str_eq(path(&t, 2, p), "src/a.c");
	cr_assert_eq(t.e[2].mode, 0755);
	cr_assert_eq(t.e[2].size, 7);
	cr_assert_eq(memcmp(t.e[2].data, "int a;\n", 7), 0);
	cr_assert_str_eq(path(&t, 3, p), "src/z.c");
	cr_assert_eq(t.bytes, 14);
	cr_assert_eq(sv_tar_group_end(&t, 0), 1);
	cr_assert_eq(sv_tar_group_end(&t, 1), 4);
	sv_tar_free(&t);
}

Test(serve_tar, missing_parents_are_added_once_and_a_subtree_stays_together)
{
	static struct tb b;
	struct sv_tar t;
	char err[256] = "", p[4096];

	add(&b, AP_FILE, "a/b/c", 0644, "1", NULL);
	add(&b, AP_FILE, "a-x", 0644, "2", NULL);
	add(&b, AP_FILE, "a/b/d", 0644, "3", NULL);
	finish(&b);
	cr_assert_eq(parse(&b, &t, err), 0, "%s", err);
	cr_assert_eq(t.n, 5);
	cr_assert_str_eq(path(&t, 0, p), "a");
	cr_assert(t.e[0].added);
	cr_assert_eq(t.e[0].mode, 0755);
	cr_assert_str_eq(path(&t, 1, p), "a/b");
	cr_assert_str_eq(path(&t, 2, p), "a/b/c");
	cr_assert_str_eq(path(&t, 3, p), "a/b/d");
	cr_assert_str_eq(path(&t, 4, p), "a-x");	/* '/' sorts first: a's subtree is contiguous */
	cr_assert_eq(sv_tar_group_end(&t, 0), 4);
	sv_tar_free(&t);
}

Test(serve_tar, long_names_go_through_pax_and_gnu_long_names_are_read)
{
	static struct tb b;
	struct sv_tar t;
	char err[256] = "", longp[600], target[300], p[4096];
	uint8_t *h;

	/* d/ + 200 n + / + 200 m: past ustar's 100 bytes, each name within 255. */
	memset(longp, 0, sizeof(longp));
	strcpy(longp, "d/");
	memset(longp + 2, 'n', 200);
	longp[202] = '/';
	memset(longp + 203, 'm', 200);
	memset(target, 't', sizeof(target));
	target[sizeof(target) - 1] = 0;
	add(&b, AP_FILE, longp, 0644, "x", NULL);
	add(&b, AP_SYMLINK, "l", 0777, NULL, target);
	/* A GNU 'L' record naming the next entry. */
	h = b.buf + b.len;
	memset(h, 0, 1024);
	strcpy((char *)h, "././@LongLink");
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 124, "00000000004", 11);
	h[156] = 'L';
	memcpy(h + 257, "ustar  \0", 8);
	resum(h);
	memcpy(h + 512, "gnu\0", 4);
	b.len += 1024;
	add(&b, AP_FILE, "short", 0644, "g", NULL);
	finish(&b);
	cr_assert_eq(parse(&b, &t, err), 0, "%s", err);
	cr_assert_eq(t.n, 5, "%zu", t.n);
	cr_assert_str_eq(path(&t, 0, p), "d");
	cr_assert(t.e[1].added);
	cr_assert_str_eq(path(&t, 2, p), longp);
	cr_assert_str_eq(path(&t, 3, p), "gnu");
	cr_assert_eq(t.e[3].data[0], 'g');
	cr_assert_str_eq(path(&t, 4, p), "l");
	cr_assert_str_eq(t.e[4].target, target);
	sv_tar_free(&t);
}

Test(serve_tar, a_hard_link_becomes_a_copy_of_its_file)
{
	static struct tb b;
	struct sv_tar t;
	char err[256] = "";
	uint8_t *h;

	add(&b, AP_FILE, "f", 0600, "data", NULL);
	add(&b, AP_SYMLINK, "h", 0644, NULL, "./f");
	h = b.buf + b.len - 512;
	h[156] = '1';
	resum(h);
	finish(&b);
	cr_assert_eq(parse(&b, &t, err), 0, "%s", err);
	cr_assert_eq(t.n, 2);
	cr_assert_eq(t.e[1].kind, AP_FILE);
	cr_assert_eq(t.e[1].size, 4);
	cr_assert_eq(memcmp(t.e[1].data, "data", 4), 0);
	cr_assert_eq(t.bytes, 8);
	sv_tar_free(&t);
}

/* One archive built by @build must be refused with @why in the message. */
static void refused(void (*build)(struct tb *), const char *why)
{
	static struct tb b;
	struct sv_tar t;
	char err[256] = "";

	memset(&b, 0, sizeof(b));
	build(&b);
	cr_assert_eq(parse(&b, &t, err), 400, "accepted; expected '%s'", why);
	cr_assert(strstr(err, why), "'%s' does not say '%s'", err, why);
	cr_assert_eq(t.n, 0);
	cr_assert_null(t.e);
}

static void absolute(struct tb *b) { add(b, AP_FILE, "/etc/passwd", 0644, "x", NULL); finish(b); }
static void climbing(struct tb *b) { add(b, AP_FILE, "a/../../x", 0644, "x", NULL); finish(b); }
static void twice(struct tb *b) { add(b, AP_FILE, "x", 0644, "1", NULL); add(b, AP_DIR, "./x", 0755, NULL, NULL); finish(b); }
static void under_link(struct tb *b) { add(b, AP_SYMLINK, "l", 0777, NULL, "/etc"); add(b, AP_FILE, "l/passwd", 0644, "x", NULL); finish(b); }
static void under_file(struct tb *b) { add(b, AP_FILE, "f", 0644, "1", NULL); add(b, AP_FILE, "f/g", 0644, "2", NULL); finish(b); }
static void root_file(struct tb *b) { add(b, AP_FILE, ".", 0644, "1", NULL); finish(b); }
static void device(struct tb *b)
{
	add(b, AP_FILE, "null", 0644, NULL, NULL);
	b->buf[b->len - 512 + 156] = '3';
	resum(b->buf + b->len - 512);
	finish(b);
}
static void bad_sum(struct tb *b) { add(b, AP_FILE, "f", 0644, "1", NULL); b->buf[0] = 'g'; finish(b); }
static void past_end(struct tb *b)
{
	add(b, AP_FILE, "f", 0644, "1", NULL);
	memcpy(b->buf + 124, "77777777777", 11);
	resum(b->buf);
}
static void dangling_hardlink(struct tb *b)
{
	add(b, AP_SYMLINK, "h", 0644, NULL, "nowhere");
	b->buf[156] = '1';
	resum(b->buf);
	finish(b);
}
static void not_tar(struct tb *b) { memset(b->buf, 'A', 1024); b->len = 1024; }
static void ragged(struct tb *b) { add(b, AP_FILE, "f", 0644, "1", NULL); b->len += 100; }
static void pax_garbage(struct tb *b)
{
	add(b, AP_FILE, "f", 0644, "9 path=x\n", NULL);
	b->buf[156] = 'x';
	resum(b->buf);
	memcpy(b->buf + 512, "99 pat", 6);
	add(b, AP_FILE, "g", 0644, "1", NULL);
	finish(b);
}

Test(serve_tar, hostile_archives_are_refused_with_a_reason_and_nothing_kept)
{
	refused(absolute, "absolute");
	refused(climbing, "..");
	refused(twice, "twice");
	refused(under_link, "not a directory");
	refused(under_file, "not a directory");
	refused(root_file, "must be a directory");
	refused(device, "type '3'");
	refused(bad_sum, "checksum");
	refused(past_end, "past the end");
	refused(dangling_hardlink, "hard link");
	refused(not_tar, "not a ustar");
	refused(ragged, "512-byte blocks");
	refused(pax_garbage, "pax");
}

Test(serve_tar, an_empty_archive_is_an_empty_tree)
{
	static struct tb b;
	struct sv_tar t;
	char err[256] = "";

	finish(&b);
	cr_assert_eq(parse(&b, &t, err), 0, "%s", err);
	cr_assert_eq(t.n, 0);
	cr_assert_not(t.has_root);
	sv_tar_free(&t);
}

Test(serve_tar, header_fields_are_ustar_and_checksummed)
{
	struct ap_entry e = { .kind = AP_DIR, .mode = 0755 };
	static uint8_t buf[SV_TAR_HDR_MAX];
	unsigned sum = 0, want;

	cr_assert_eq(sv_tar_header(&e, "dir", 5, buf, sizeof(buf)), 512);
	cr_assert_str_eq((char *)buf, "dir/");
	cr_assert_eq(buf[156], '5');
	cr_assert_eq(memcmp(buf + 257, "ustar\0" "00", 8), 0);
	cr_assert_str_eq((char *)buf + 100, "0000755");
	for (int i = 0; i < 512; i++)
		sum += i >= 148 && i < 156 ? ' ' : buf[i];
	sscanf((char *)buf + 148, "%o", &want);
	cr_assert_eq(sum, want);
	cr_assert_eq(sv_tar_header(&e, "", 5, buf, sizeof(buf)), -1);
	cr_assert_eq(sv_tar_header(&e, "x", 5, buf, 100), -1);
}
