/* The template bundle's reader (snapshots/tpl_bundle.h) as hostile input: one
 * test per refusal of the manifest and of an entry's payload. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "snapshots/tpl_bundle.h"

static char err[512];
static struct tb_manifest m;
static uint8_t buf[TB_HDR_LEN + TB_MAX_ENTRIES * TB_REC_LEN + 256];
static size_t len;
static uint64_t total;

static void entry(const char *name, uint32_t kind, uint64_t size, uint64_t stored)
{
	struct tb_entry *e = &m.e[m.n++];

	snprintf(e->name, sizeof(e->name), "%s", name);
	e->kind = kind;
	e->size = size;
	e->stored = stored;
	memset(e->sha256, 0x11 * m.n, 32);
}

/* Re-encode m (a fresh digest) and the total its payload sizes imply. */
static void encode(void)
{
	tb_manifest_encode(&m, buf);
	len = tb_manifest_len(m.n);
	total = len;
	for (int i = 0; i < m.n; i++)
		total += m.e[i].stored;
}

/* A valid manifest: state, config.json, memory, one layer, an image. */
static void valid(void)
{
	memset(&m, 0, sizeof(m));
	snprintf(m.tpl, sizeof(m.tpl), "tpl");
	entry("state", TB_STATE, 100, 116);
	entry("config.json", TB_CONFIG, 2, 18);
	entry("memory", TB_MEMORY, 8192, 16 + 4096);
	entry("root.qcow2", TB_LAYER, 4096, 16 + 4096);
	entry("root.ext4", TB_IMAGE, 1 << 20, 16 + 4096);
	encode();
}

static int parse(void)
{
	struct tb_manifest out;

	err[0] = 0;
	return tb_manifest_parse(buf, len, total, &out, err, sizeof(err));
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* little-endian host */
}

/* The manifest digest of bytes edited in place, so only the edit is wrong. */
static void redigest(void)
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, 96, buf);
	sha256_update(&c, (size_t)m.n * TB_REC_LEN, buf + TB_HDR_LEN);
	sha256_digest(&c, 32, buf + 96);
}

TestSuite(tpl_bundle, .init = valid);

Test(tpl_bundle, valid_manifest_round_trips)
{
	struct tb_manifest out;

	cr_assert_eq(tb_manifest_parse(buf, len, total, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(out.tpl, "tpl");
	cr_assert_eq(out.n, 5);
	cr_assert_str_eq(out.e[4].name, "root.ext4");
	cr_assert_eq(out.e[2].size, 8192);
	cr_assert_eq(memcmp(out.digest, m.digest, 32), 0);
}

Test(tpl_bundle, bad_magic)
{
	buf[0] = 'X';
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "bad magic"), "%s", err);
}

Test(tpl_bundle, other_version)
{
	put32(buf + 8, 2);
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "version 2"), "%s", err);
}

Test(tpl_bundle, truncated_header)
{
	cr_assert_eq(tb_header_count(buf, TB_HDR_LEN - 1, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "truncated header"), "%s", err);
}

Test(tpl_bundle, missing_manifest)
{
	/* A header with no records after it, and a file with nothing at all. */
	len = TB_HDR_LEN;
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "truncated manifest"), "%s", err);
	cr_assert_eq(tb_header_count(buf, 0, err, sizeof(err)), -EBADMSG);
}

Test(tpl_bundle, manifest_shorter_than_its_file_says)
{
	total = len - 1;
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "truncated manifest"), "%s", err);
}

Test(tpl_bundle, edited_manifest)
{
	buf[tb_manifest_len(3) + 72] ^= 1;	/* the layer's size, digest not redone */
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "digest does not match"), "%s", err);
}

Test(tpl_bundle, truncated_entry)
{
	total -= 1;
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "truncated") && strstr(err, "root.ext4"), "%s", err);
}

Test(tpl_bundle, bytes_after_the_last_entry)
{
	total += 1;
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "after its last entry"), "%s", err);
}

Test(tpl_bundle, too_many_entries)
{
	put32(buf + 12, TB_MAX_ENTRIES + 1);
	cr_assert_eq(tb_header_count(buf, TB_HDR_LEN, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "entry count"), "%s", err);
	put32(buf + 12, 3);	/* no room for a layer */
	cr_assert_eq(tb_header_count(buf, TB_HDR_LEN, err, sizeof(err)), -EBADMSG);
	put32(buf + 12, 0xffffffff);
	cr_assert_eq(tb_header_count(buf, TB_HDR_LEN, err, sizeof(err)), -EBADMSG);
}

Test(tpl_bundle, unexpected_entry_names)
{
	static const char *const names[] = { "template.json", "seal", "state", "config.json",
					     "memory" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		valid();
		snprintf(m.e[3].name, sizeof(m.e[3].name), "%s", names[i]);
		encode();
		cr_assert_eq(parse(), -EBADMSG, "%s accepted", names[i]);
	}
	valid();
	snprintf(m.e[0].name, sizeof(m.e[0].name), "memory");	/* state first, by name */
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "unexpected entry name"), "%s", err);
}

Test(tpl_bundle, duplicate_entry_name)
{
	memset(&m, 0, sizeof(m));
	snprintf(m.tpl, sizeof(m.tpl), "tpl");
	entry("state", TB_STATE, 100, 116);
	entry("config.json", TB_CONFIG, 2, 18);
	entry("memory", TB_MEMORY, 8192, 16 + 4096);
	entry("a.qcow2", TB_LAYER, 4096, 16 + 4096);
	entry("a.qcow2", TB_LAYER, 4096, 16 + 4096);
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "twice"), "%s", err);
}

Test(tpl_bundle, path_like_names)
{
	static const char *const names[] = { "../layer", "a/b", "/etc/passwd", ".hidden", "..",
					     "-opt", "sp ace", "tab\tname", "" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		valid();
		snprintf(m.e[3].name, sizeof(m.e[3].name), "%s", names[i]);
		encode();
		cr_assert_eq(parse(), -EBADMSG, "'%s' accepted", names[i]);
		valid();
		snprintf(m.e[4].name, sizeof(m.e[4].name), "%s", names[i]);
		encode();
		cr_assert_eq(parse(), -EBADMSG, "image '%s' accepted", names[i]);
	}
}

Test(tpl_bundle, name_not_padded_with_zeros)
{
	buf[tb_manifest_len(3) + 20] = 'x';	/* after the layer name's NUL */
	redigest();	/* only the padding is wrong */
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "NUL"), "%s", err);
}

Test(tpl_bundle, bad_template_name)
{
	snprintf(m.tpl, sizeof(m.tpl), "../x");
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "template name"), "%s", err);
}

Test(tpl_bundle, entries_out_of_order)
{
	m.e[3].kind = TB_IMAGE;		/* an image, then another */
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	valid();
	m.e[2].kind = TB_LAYER;		/* no memory */
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	valid();
	m.e[4].kind = 99;
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "out of order"), "%s", err);
}

Test(tpl_bundle, oversize_entries)
{
	m.e[1].size = TB_CONFIG_MAX + 1;
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "too big"), "%s", err);
	valid();
	m.e[0].size = (16u << 20) + 1;
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	valid();
	m.e[2].size = TB_MEMORY_MAX + 1;
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	valid();
	m.e[4].size = UINT64_MAX;
	encode();
	cr_assert_eq(parse(), -EBADMSG);
}

Test(tpl_bundle, payload_bigger_than_its_file_allows)
{
	m.e[1].stored = 2 + 16 + 1;	/* config.json: 2 bytes, one extent at most */
	encode();
	cr_assert_eq(parse(), -EBADMSG);
	cr_assert(strstr(err, "payload size impossible"), "%s", err);
	valid();
	m.e[4].stored = UINT64_MAX;
	encode();
	total = len + 1;
	cr_assert_eq(parse(), -EBADMSG);
}

Test(tpl_bundle, image_not_whole_blocks)
{
	m.e[4].size = 4097;
	encode();
	cr_assert_eq(parse(), -EBADMSG);
}

Test(tpl_bundle, reserved_fields_set)
{
	buf[tb_manifest_len(2) + 68] = 1;
	redigest();
	cr_assert_eq(parse(), -EBADMSG);
}

/* --- one entry's payload --- */

static uint8_t pay[3 * 4096 + 64];
static size_t paylen;

static void extent(uint64_t off, uint64_t n, uint8_t fill)
{
	memcpy(pay + paylen, &off, 8);
	memcpy(pay + paylen + 8, &n, 8);
	memset(pay + paylen + 16, fill, n);
	paylen += 16 + n;
}

static int decode(uint64_t size, uint8_t sha[32])
{
	struct tb_entry e = { .size = size, .stored = paylen };
	struct tb_dec d;
	uint32_t crc;
	int ret;

	tb_dec_init(&d, &e, NULL, NULL);
	ret = tb_dec_feed(&d, pay, paylen, err, sizeof(err));
	return ret ? ret : tb_dec_finish(&d, sha, &crc, err, sizeof(err));
}

Test(tpl_bundle, payload_digest_is_the_files)
{
	uint8_t file[3 * 4096] = { 0 }, a[32], b[32];
	uint32_t crc;

	paylen = 0;
	extent(0, 4096, 7);
	extent(8192, 4096, 9);
	memset(file, 7, 4096);
	memset(file + 8192, 9, 4096);
	cr_assert_eq(decode(sizeof(file), a), 0, "%s", err);
	tb_digest_buf(file, sizeof(file), b, &crc);
	cr_assert_eq(memcmp(a, b, 32), 0);
	/* A zero block sent as data changes nothing: the digest is the contents'. */
	paylen = 0;
	extent(0, 4096, 7);
	extent(4096, 4096, 0);
	extent(8192, 4096, 9);
	cr_assert_eq(decode(sizeof(file), a), 0, "%s", err);
	cr_assert_eq(memcmp(a, b, 32), 0);
}

Test(tpl_bundle, malformed_extents)
{
	uint8_t sha[32];

	paylen = 0;
	extent(100, 4096, 1);			/* unaligned */
	cr_assert_eq(decode(8192, sha), -EBADMSG);
	cr_assert(strstr(err, "malformed extent"), "%s", err);
	paylen = 0;
	extent(4096, 4096, 1);
	extent(0, 4096, 1);			/* backwards: overlapping */
	cr_assert_eq(decode(8192, sha), -EBADMSG);
	paylen = 0;
	extent(4096, 8192, 1);			/* past the size */
	cr_assert_eq(decode(8192, sha), -EBADMSG);
	paylen = 0;
	extent(0, 0, 1);			/* empty */
	cr_assert_eq(decode(8192, sha), -EBADMSG);
	paylen = 0;
	extent(0, 100, 1);			/* a short block not at the end */
	cr_assert_eq(decode(8192, sha), -EBADMSG);
	paylen = 0;
	extent(8192, 100, 1);			/* a short block at the end: fine */
	cr_assert_eq(decode(8292, sha), 0, "%s", err);
}

Test(tpl_bundle, payload_ends_inside_an_extent)
{
	struct tb_entry e = { .size = 8192 };
	struct tb_dec d;
	uint8_t sha[32];
	uint32_t crc;

	paylen = 0;
	extent(0, 4096, 1);
	e.stored = paylen;
	tb_dec_init(&d, &e, NULL, NULL);
	cr_assert_eq(tb_dec_feed(&d, pay, paylen - 1, err, sizeof(err)), 0);
	cr_assert_eq(tb_dec_finish(&d, sha, &crc, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "inside an extent"), "%s", err);
	/* More than recorded. */
	tb_dec_init(&d, &e, NULL, NULL);
	cr_assert_eq(tb_dec_feed(&d, pay, paylen, err, sizeof(err)), 0);
	cr_assert_eq(tb_dec_feed(&d, pay, 1, err, sizeof(err)), -EBADMSG);
}

Test(tpl_bundle, writer_and_reader_agree)
{
	int fd = memfd_create("bundle", 0), in = memfd_create("file", 0);
	uint8_t *file = calloc(1, 5 * 4096 + 10), a[32], b[32], *out;
	struct tb_entry e = { .size = 5 * 4096 + 10 };
	struct tb_enc enc;
	struct tb_dec d;
	uint32_t ca, cb;

	memset(file + 4096, 3, 4096);
	memset(file + 2 * 4096 + 17, 4, 1);
	memset(file + 5 * 4096, 5, 10);
	cr_assert_eq(pwrite(in, file, e.size, 0), (ssize_t)e.size);
	tb_enc_begin(&enc, fd, 0, e.size);
	cr_assert_eq(tb_enc_fd(&enc, in), 0);
	cr_assert_eq(tb_enc_end(&enc, &e.stored, a, &ca), 0);
	cr_assert_eq(e.stored, 16 + 2 * 4096 + 16 + 10, "one extent of the two blocks, one of the tail");
	out = malloc(e.stored);
	cr_assert_eq(pread(fd, out, e.stored, 0), (ssize_t)e.stored);
	tb_dec_init(&d, &e, NULL, NULL);
	cr_assert_eq(tb_dec_feed(&d, out, e.stored, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tb_dec_finish(&d, b, &cb, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(memcmp(a, b, 32), 0);
	cr_assert_eq(ca, cb);
	free(out);
	free(file);
	close(fd);
	close(in);
}
