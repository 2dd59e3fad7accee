/* SHA-256 and SHA-1 (over nettle): FIPS 180 / NIST known answers, streaming in odd pieces, files, git blob ids. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nettle/nettle-meta.h>

#include "common/sha1.h"
#include "common/sha256.h"

static const char msg448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char msg896[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
			     "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
static char million[1000000];	/* one million 'a': more than 15 000 blocks */

static void fill_million(void)
{
	memset(million, 'a', sizeof(million));
}

static void finish_sha256(void *ctx, char *hex)
{
	sha256_hex(ctx, hex);
}

static void finish_sha1(void *ctx, char *hex)
{
	sha1_hex(ctx, hex);
}

/* Hash @n bytes in pieces of @step (not a multiple of the 64-byte block), then our hex form. */
static void pieces(const struct nettle_hash *h, void (*finish)(void *, char *), const char *p,
		   size_t n, size_t step, char *hex)
{
	union {
		struct sha256_ctx s256;
		struct sha1_ctx s1;
	} ctx;

	h->init(&ctx);
	for (size_t i = 0; i < n; i += step)
		h->update(&ctx, n - i < step ? n - i : step, (const uint8_t *)p + i);
	finish(&ctx, hex);
}

static void sha256_pieces(const char *p, size_t n, size_t step, char hex[SHA256_HEX])
{
	pieces(&nettle_sha256, finish_sha256, p, n, step, hex);
}

static void sha1_pieces(const char *p, size_t n, size_t step, char hex[SHA1_HEX])
{
	pieces(&nettle_sha1, finish_sha1, p, n, step, hex);
}

/* FIPS 180-2 appendix B and NIST's examples: empty, one block, the padding edge, two blocks, a million. */
Test(common_hash, sha256_known_answers)
{
	const struct {
		const char *msg;
		const char *want;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ msg448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ msg896, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
		{ million, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
	};
	char hex[SHA256_HEX];

	fill_million();
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = v[i].msg == million ? sizeof(million) : strlen(v[i].msg);

		sha256_buf_hex(v[i].msg, n, hex);
		cr_expect_str_eq(hex, v[i].want, "vector %zu", i);
	}
}

Test(common_hash, sha256_streaming_matches_one_shot)
{
	static const size_t steps[] = { 1, 3, 63, 64, 65, 777, 65536 };
	char hex[SHA256_HEX];

	fill_million();
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		sha256_pieces(million, sizeof(million), steps[i], hex);
		cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
				 "step %zu", steps[i]);
	}
	sha256_pieces(msg896, strlen(msg896), 7, hex);
	cr_expect_str_eq(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

Test(common_hash, sha256_of_a_file_from_its_offset)
{
	char path[] = "/tmp/mvm-hash-XXXXXX", hex[SHA256_HEX];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	unlink(path);
	cr_assert_eq(write(fd, "xyz", 3), 3);
	fill_million();
	cr_assert_eq(write(fd, million, sizeof(million)), (ssize_t)sizeof(million));
	cr_assert_eq(lseek(fd, 3, SEEK_SET), 3);
	cr_assert_eq(sha256_fd_hex(fd, hex), 0);
	cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	close(fd);
	cr_expect_eq(sha256_fd_hex(-1, hex), -EBADF);
}

Test(common_hash, sha1_known_answers)
{
	char hex[SHA1_HEX];

	sha1_pieces("", 0, 1, hex);
	cr_expect_str_eq(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	sha1_pieces("abc", 3, 3, hex);
	cr_expect_str_eq(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
	sha1_pieces(msg448, strlen(msg448), 56, hex);
	cr_expect_str_eq(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	sha1_pieces(msg896, strlen(msg896), 112, hex);
	cr_expect_str_eq(hex, "a49b2446a02c645bf419f995b67091253a04a259");
	fill_million();
	sha1_pieces(million, sizeof(million), sizeof(million), hex);
	cr_expect_str_eq(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	sha1_pieces(million, sizeof(million), 777, hex);	/* streaming */
	cr_expect_str_eq(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

/* What `git hash-object` prints for the same contents. */
Test(common_hash, git_blob_ids)
{
	char hex[SHA1_HEX];

	git_blob_id("", 0, hex);
	cr_expect_str_eq(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
	git_blob_id("hello\n", 6, hex);
	cr_expect_str_eq(hex, "ce013625030ba8dba906f756967f9e9ca394464a");
}
