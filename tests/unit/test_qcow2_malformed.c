/* qcow2: hostile and unsupported images are refused with a clear error. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "images/qcow2_format.h"
#include "tests/unit/qcow2_testutil.h"

static char *dir, *img;

static void setup(void)
{
	dir = qt_mkdtemp();
	img = qt_path(dir, "img.qcow2");
	cr_assert_eq(qcow2_create(img, 16 << 20, 16), 0);
}

static void teardown(void)
{
	free(img);
	qt_rmtree(dir);
}

TestSuite(qcow2_bad, .init = setup, .fini = teardown);

static void poke(const char *path, uint64_t off, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY);

	cr_assert(fd >= 0);
	cr_assert_eq(pwrite(fd, p, n, (off_t)off), (ssize_t)n);
	close(fd);
}

static void poke32(uint64_t off, uint32_t v)
{
	uint8_t b[4];

	put_be32(b, v);
	poke(img, off, b, 4);
}

static void poke64(uint64_t off, uint64_t v)
{
	uint8_t b[8];

	put_be64(b, v);
	poke(img, off, b, 8);
}

/* Open @path (read-only or not) expecting @err and a log line with @msg. */
static void expect_open(const char *path, bool ro, const struct qcow2_open_opts *o,
			int err, const char *msg)
{
	FILE *sink = qt_log_start();
	struct blk_backend *b = NULL;
	int rc = blk_open_qcow2(path, ro, o, &b);
	char *log = qt_log_take(sink);

	if (!rc)
		blk_close(b);
	cr_assert_eq(rc, err, "open returned %d, want %d; log: %s", rc, err, log);
	if (msg)
		cr_assert_not_null(strstr(log, msg), "log lacks '%s': %s", msg, log);
	free(log);
}

Test(qcow2_bad, valid_image_opens) { expect_open(img, false, NULL, 0, NULL); }

Test(qcow2_bad, truncated_header)
{
	cr_assert_eq(truncate(img, 50), 0);
	expect_open(img, true, NULL, -EINVAL, "truncated header");
}

Test(qcow2_bad, truncated_v3_header)
{
	cr_assert_eq(truncate(img, 90), 0);
	expect_open(img, true, NULL, -EINVAL, "truncated header");
}

Test(qcow2_bad, bad_magic)
{
	poke32(QH_MAGIC, 0x12345678);
	expect_open(img, true, NULL, -EINVAL, "bad magic");
}

Test(qcow2_bad, bad_version)
{
	poke32(QH_VERSION, 4);
	expect_open(img, true, NULL, -EINVAL, "version 4");
}

Test(qcow2_bad, cluster_bits_low)
{
	poke32(QH_CLUSTER_BITS, 8);
	expect_open(img, true, NULL, -EINVAL, "cluster_bits 8 out of range");
}

Test(qcow2_bad, cluster_bits_high)
{
	poke32(QH_CLUSTER_BITS, 22);
	expect_open(img, true, NULL, -EINVAL, "cluster_bits 22 out of range");
}

Test(qcow2_bad, huge_virtual_size)
{
	poke64(QH_SIZE, 1ULL << 60);
	expect_open(img, true, NULL, -EINVAL, "64 TiB");
}

Test(qcow2_bad, l1_too_small_for_size)
{
	poke64(QH_SIZE, 1ULL << 40);
	expect_open(img, true, NULL, -EINVAL, "too small for the virtual size");
}

Test(qcow2_bad, l1_table_too_large)
{
	poke32(QH_L1_SIZE, 0x10000000);
	expect_open(img, true, NULL, -EINVAL, "L1 table of");
}

Test(qcow2_bad, l1_offset_outside_file)
{
	poke64(QH_L1_OFF, 1ULL << 40);
	expect_open(img, true, NULL, -EINVAL, "L1 table offset");
}

Test(qcow2_bad, l1_offset_unaligned)
{
	poke64(QH_L1_OFF, 3 * 65536 + 8);
	expect_open(img, true, NULL, -EINVAL, "L1 table offset");
}

Test(qcow2_bad, refcount_table_outside_file)
{
	poke64(QH_RT_OFF, 1ULL << 44);
	expect_open(img, false, NULL, -EINVAL, "refcount table offset");
}

Test(qcow2_bad, refcount_table_huge)
{
	poke32(QH_RT_CLUSTERS, 0x100000);
	expect_open(img, false, NULL, -EINVAL, "refcount table size");
}

Test(qcow2_bad, refcount_order_out_of_range)
{
	poke32(QH_REFCOUNT_ORDER, 7);
	expect_open(img, false, NULL, -EINVAL, "refcount_order");
}

Test(qcow2_bad, header_length_invalid)
{
	poke32(QH_HDR_LEN, 100);
	expect_open(img, true, NULL, -EINVAL, "header length");
	poke32(QH_HDR_LEN, 1 << 20);
	expect_open(img, true, NULL, -EINVAL, "header length");
}

Test(qcow2_bad, extension_length_out_of_bounds)
{
	poke32(QCOW2_V3_HDR_LEN, 0x12345678);
	poke32(QCOW2_V3_HDR_LEN + 4, 0xfffffff0);
	expect_open(img, true, NULL, -EINVAL, "header extension 0x12345678");
}

Test(qcow2_bad, backing_name_out_of_bounds)
{
	poke64(QH_BACKING_OFF, 65000);
	poke32(QH_BACKING_SIZE, 1000);
	expect_open(img, true, NULL, -EINVAL, "backing file name");
}

/* off + size wraps past 2^64 to a small number: must not pass as "inside the header". */
Test(qcow2_bad, backing_name_offset_wraps)
{
	poke64(QH_BACKING_OFF, UINT64_MAX - 7);
	poke32(QH_BACKING_SIZE, 16);
	/* Before the fix: read 8 bytes before the header buffer, refused only for a NUL in them. */
	expect_open(img, true, NULL, -EINVAL, "out of bounds");
}

Test(qcow2_bad, encryption)
{
	poke32(QH_CRYPT, 1);
	expect_open(img, true, NULL, -EINVAL, "encryption");
}

Test(qcow2_bad, crypto_extension)
{
	poke32(QCOW2_V3_HDR_LEN, QCOW2_EXT_CRYPTO);
	poke32(QCOW2_V3_HDR_LEN + 4, 16);
	expect_open(img, true, NULL, -EINVAL, "encryption");
}

Test(qcow2_bad, incompatible_features)
{
	static const struct { uint64_t bits; const char *msg; } c[] = {
		{ QCOW2_INCOMPAT_DIRTY, "dirty bit" },
		{ QCOW2_INCOMPAT_CORRUPT, "corrupt" },
		{ QCOW2_INCOMPAT_DATA_FILE, "external data file" },
		{ QCOW2_INCOMPAT_COMPRESSION, "compression type" },
		{ QCOW2_INCOMPAT_EXTL2, "extended L2" },
		{ 1ULL << 9, "unknown incompatible feature bit 9" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		poke64(QH_INCOMPAT, c[i].bits);
		expect_open(img, true, NULL, -EINVAL, c[i].msg);
	}
}

Test(qcow2_bad, unknown_feature_named_from_table)
{
	uint8_t ext[8 + 48] = { 0 };

	put_be32(ext, QCOW2_EXT_FEATURES);
	put_be32(ext + 4, 48);
	ext[9] = 12;
	strcpy((char *)ext + 10, "quantum entanglement");
	poke(img, QCOW2_V3_HDR_LEN, ext, sizeof(ext));
	poke64(QH_INCOMPAT, 1ULL << 12);
	expect_open(img, true, NULL, -EINVAL, "'quantum entanglement' (bit 12)");
}

/* L1 entry 0 (at 3 clusters) pointing far beyond the end of the file. */
Test(qcow2_bad, l2_offset_outside_file)
{
	struct blk_backend *b;
	uint8_t buf[512];
	FILE *sink;
	char *log;

	poke64(3 * 65536, (1ULL << 40) | QCOW2_OFLAG_COPIED);
	cr_assert_eq(blk_open_qcow2(img, false, NULL, &b), 0);
	sink = qt_log_start();
	cr_assert_eq(b->ops->read(b, buf, 0, sizeof(buf)), -EIO);
	cr_assert_eq(b->ops->write(b, buf, 0, sizeof(buf)), -EIO);
	log = qt_log_take(sink);
	cr_assert_not_null(strstr(log, "L1 entry 0"), "%s", log);
	blk_close(b);
	free(log);
}

/* Write one cluster so an L2 table exists, then return its offset. */
static uint64_t make_l2(void)
{
	struct blk_backend *b;
	uint8_t buf[4096], l1e[8];
	int fd;

	memset(buf, 0x77, sizeof(buf));
	cr_assert_eq(blk_open_qcow2(img, false, NULL, &b), 0);
	cr_assert_eq(b->ops->write(b, buf, 0, sizeof(buf)), 0);
	blk_close(b);
	fd = open(img, O_RDONLY);
	cr_assert_eq(pread(fd, l1e, 8, 3 * 65536), 8);
	close(fd);
	return get_be64(l1e) & QCOW2_OFFSET_MASK;
}

Test(qcow2_bad, l2_entry_outside_file)
{
	uint64_t l2 = make_l2();
	struct blk_backend *b;
	FILE *sink;
	char *log;
	uint8_t buf[512];

	poke64(l2, (1ULL << 45) | QCOW2_OFLAG_COPIED);
	cr_assert_eq(blk_open_qcow2(img, true, NULL, &b), 0);
	sink = qt_log_start();
	cr_assert_eq(b->ops->read(b, buf, 0, sizeof(buf)), -EIO);
	log = qt_log_take(sink);
	cr_assert_not_null(strstr(log, "L2 entry"), "%s", log);
	free(log);
	blk_close(b);
}

Test(qcow2_bad, l2_entry_into_header_cluster)
{
	uint64_t l2 = make_l2();
	struct blk_backend *b;
	FILE *sink;
	char *log;
	uint8_t buf[512];

	poke64(l2, QCOW2_OFLAG_COPIED);	/* offset 0 with no zero flag = unallocated */
	poke64(l2 + 8, 4096 | QCOW2_OFLAG_COPIED);	/* unaligned host offset */
	cr_assert_eq(blk_open_qcow2(img, false, NULL, &b), 0);
	sink = qt_log_start();
	cr_assert_eq(b->ops->read(b, buf, 65536, sizeof(buf)), -EIO);
	cr_assert_eq(b->ops->write(b, buf, 65536, sizeof(buf)), -EIO);
	log = qt_log_take(sink);
	cr_assert_not_null(strstr(log, "L2 entry"), "%s", log);
	free(log);
	blk_close(b);
}

Test(qcow2_bad, compressed_cluster)
{
	uint64_t l2 = make_l2();
	struct blk_backend *b;
	FILE *sink;
	char *log;
	uint8_t buf[512];

	poke64(l2, QCOW2_OFLAG_COMPRESSED | 65536);
	cr_assert_eq(blk_open_qcow2(img, true, NULL, &b), 0);
	sink = qt_log_start();
	cr_assert_eq(b->ops->read(b, buf, 0, sizeof(buf)), -ENOTSUP);
	log = qt_log_take(sink);
	cr_assert_not_null(strstr(log, "compressed clusters not supported"), "%s", log);
	free(log);
	blk_close(b);
}

Test(qcow2_bad, refcount_block_outside_file)
{
	struct blk_backend *b;
	FILE *sink;
	char *log;
	uint8_t buf[512] = { 1 };

	poke64(65536, 1ULL << 42);	/* refcount table entry 0 */
	cr_assert_eq(blk_open_qcow2(img, false, NULL, &b), 0);
	sink = qt_log_start();
	cr_assert_eq(b->ops->write(b, buf, 0, sizeof(buf)), -EIO);
	log = qt_log_take(sink);
	cr_assert_not_null(strstr(log, "refcount block 0"), "%s", log);
	free(log);
	blk_close(b);
}

Test(qcow2_bad, snapshots_refused_for_writing)
{
	poke32(QH_NB_SNAP, 1);
	expect_open(img, false, NULL, -ENOTSUP, "internal snapshots");
}
