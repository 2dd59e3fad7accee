/* qcow2: differential tests against qemu-img / qemu-io. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "tests/unit/qcow2_testutil.h"

#define VSIZE (64ULL << 20)

static char *dir;

static void setup(void)
{
	dir = qt_mkdtemp();
}

static void teardown(void)
{
	qt_rmtree(dir);
	dir = NULL;
}

TestSuite(qcow2_diff, .init = setup, .fini = teardown);

/* base.raw (random, shorter than the disk) and ref.raw = base + zeroes. */
static int make_base_and_ref(uint64_t base_size)
{
	char *base = qt_path(dir, "base.raw"), *ref = qt_path(dir, "ref.raw");
	int fd;

	qt_random_file(base, base_size, 42);
	cr_assert_eq(qt_run(NULL, "cp %s %s && truncate -s %llu %s", base, ref,
			    (unsigned long long)VSIZE, ref), 0);
	fd = open(ref, O_RDWR);
	cr_assert(fd >= 0);
	free(base);
	free(ref);
	return fd;
}

static void assert_check_clean(const char *img)
{
	char *out;
	int rc = qt_run(&out, "qemu-img check -f qcow2 %s", img);

	cr_assert_eq(rc, 0, "qemu-img check %s exit %d:\n%s", img, rc, out);
	cr_assert_null(strstr(out, "leaked"), "leaks:\n%s", out);
	free(out);
}

static void assert_same(const char *img, const char *ref)
{
	char *out;
	int rc = qt_run(&out, "qemu-img compare -f qcow2 -F raw %s %s", img, ref);

	cr_assert_eq(rc, 0, "qemu-img compare exit %d:\n%s", rc, out);
	free(out);
}

static void mvm_writes(const char *img, int ref, uint64_t seed, int nops,
		       unsigned bits, const struct qcow2_open_opts *o)
{
	bool v2 = strstr(img, "v2") != NULL;	/* v2 discard keeps backing data */
	struct blk_backend *b;

	cr_assert_eq(blk_open_qcow2(img, false, o, &b), 0);
	cr_assert_eq(b->size, VSIZE);
	qt_random_ops(b, ref, seed, nops, bits, !v2);
	blk_close(b);
}

static void overlay_roundtrip(unsigned bits)
{
	char *ov = qt_path(dir, "ov.qcow2"), *ref = qt_path(dir, "ref.raw");
	int fd = make_base_and_ref(24 << 20);

	cr_assert_eq(qcow2_create_overlay(ov, "base.raw", "raw", VSIZE, bits), 0);
	mvm_writes(ov, fd, bits * 1000 + 1, 600, bits, NULL);
	/* Reopen: a second session appends to what the first left behind. */
	mvm_writes(ov, fd, bits * 1000 + 2, 300, bits, NULL);
	close(fd);
	assert_check_clean(ov);
	assert_same(ov, ref);
	free(ov);
	free(ref);
}

Test(qcow2_diff, mvm_overlay_64k) { overlay_roundtrip(16); }
Test(qcow2_diff, mvm_overlay_4k) { overlay_roundtrip(12); }
/* 512-byte clusters force refcount table growth and many refcount blocks. */
Test(qcow2_diff, mvm_overlay_512) { overlay_roundtrip(9); }
Test(qcow2_diff, mvm_overlay_2m) { overlay_roundtrip(21); }

Test(qcow2_diff, mvm_plain_image)
{
	char *img = qt_path(dir, "plain.qcow2"), *ref = qt_path(dir, "ref.raw");
	int fd;

	cr_assert_eq(qt_run(NULL, "truncate -s %llu %s", (unsigned long long)VSIZE, ref), 0);
	fd = open(ref, O_RDWR);
	cr_assert_eq(qcow2_create(img, VSIZE, 16), 0);
	mvm_writes(img, fd, 7, 500, 16, NULL);
	close(fd);
	assert_check_clean(img);
	assert_same(img, ref);
	free(img);
	free(ref);
}

Test(qcow2_diff, qemu_created_overlay)
{
	char *ov = qt_path(dir, "ov.qcow2"), *ref = qt_path(dir, "ref.raw");
	int fd = make_base_and_ref(VSIZE);

	cr_assert_eq(qt_run(NULL, "cd %s && qemu-img create -q -f qcow2 -b base.raw "
			    "-F raw ov.qcow2 %llu", dir, (unsigned long long)VSIZE), 0);
	mvm_writes(ov, fd, 99, 600, 16, NULL);
	close(fd);
	assert_check_clean(ov);
	assert_same(ov, ref);
	free(ov);
	free(ref);
}

/* qemu-io writes a pattern (or zero clusters with -z) to @img and the
 * same bytes go to the reference. */
static void qemu_io_write(const char *img, int ref, int pattern, uint64_t off,
			  size_t len)
{
	uint8_t *buf = malloc(len);

	cr_assert_eq(qt_run(NULL, "qemu-io -f qcow2 -c 'write %s %llu %zu' %s",
			    pattern < 0 ? "-z" : "-P 0", (unsigned long long)off, len, img),
		     0);
	if (pattern >= 0)
		cr_assert_eq(qt_run(NULL, "qemu-io -f qcow2 -c 'write -P %d %llu %zu' %s",
				    pattern, (unsigned long long)off, len, img), 0);
	memset(buf, pattern < 0 ? 0 : pattern, len);
	cr_assert_eq(pwrite(ref, buf, len, (off_t)off), (ssize_t)len);
	free(buf);
}

static void assert_mvm_reads(const char *img, const char *ref,
			     const struct qcow2_open_opts *o)
{
	struct blk_backend *b;
	size_t len;
	uint8_t *want = qt_slurp(ref, &len), *got = malloc(len);

	cr_assert_eq(blk_open_qcow2(img, true, o, &b), 0);
	cr_assert_eq(b->size, len);
	/* Odd-sized reads so runs start and stop inside clusters. */
	for (size_t off = 0; off < len; off += 777777) {
		size_t n = len - off < 777777 ? len - off : 777777;

		cr_assert_eq(b->ops->read(b, got + off, off, n), 0);
	}
	for (size_t i = 0; i < len; i++)
		cr_assert_eq(got[i], want[i], "mvm read differs from reference at %zu", i);
	blk_close(b);
	free(want);
	free(got);
}

Test(qcow2_diff, chain_of_four)
{
	char *l1 = qt_path(dir, "l1.qcow2"), *l2 = qt_path(dir, "l2.qcow2");
	char *l3 = qt_path(dir, "l3.qcow2"), *ref = qt_path(dir, "ref.raw");
	int fd = make_base_and_ref(40 << 20);
	struct qcow2_info info;

	cr_assert_eq(qt_run(NULL, "cd %s && qemu-img create -q -f qcow2 -o cluster_size=4k "
			    "-b base.raw -F raw l1.qcow2 64M", dir), 0);
	qemu_io_write(l1, fd, 0xab, 1 << 20, 300 << 10);
	qemu_io_write(l1, fd, -1, 8 << 20, 1 << 20);	/* zero clusters */
	cr_assert_eq(qcow2_create_overlay(l2, "l1.qcow2", "qcow2", 0, 16), 0);
	mvm_writes(l2, fd, 5, 300, 16, NULL);
	cr_assert_eq(qt_run(NULL, "cd %s && qemu-img create -q -f qcow2 -b l2.qcow2 "
			    "-F qcow2 l3.qcow2", dir), 0);
	qemu_io_write(l3, fd, 0x5a, 3 << 20, 64 << 10);
	mvm_writes(l3, fd, 6, 300, 16, NULL);
	close(fd);
	assert_mvm_reads(l3, ref, NULL);
	assert_same(l3, ref);
	assert_check_clean(l2);
	assert_check_clean(l3);
	cr_assert_eq(qcow2_info_get(l3, NULL, &info), 0);
	cr_assert_eq(info.chain_len, 3);
	cr_assert_str_eq(info.chain[2].format, "raw");
	cr_assert_str_eq(info.chain[0].format, "qcow2");
	cr_assert_eq(info.virtual_size, VSIZE);
	qcow2_info_free(&info);
	free(l1), free(l2), free(l3), free(ref);
}

Test(qcow2_diff, v2_image_read_and_write)
{
	char *ov = qt_path(dir, "v2.qcow2"), *ref = qt_path(dir, "ref.raw");
	int fd = make_base_and_ref(VSIZE);
	char *out;

	cr_assert_eq(qt_run(NULL, "cd %s && qemu-img create -q -f qcow2 -o compat=0.10 "
			    "-b base.raw -F raw v2.qcow2", dir), 0);
	qemu_io_write(ov, fd, 0x11, 5 << 20, 200 << 10);
	qemu_io_write(ov, fd, 0x22, (33 << 20) + 512, 70144);
	assert_mvm_reads(ov, ref, NULL);
	mvm_writes(ov, fd, 8, 300, 16, NULL);
	close(fd);
	assert_mvm_reads(ov, ref, NULL);
	assert_same(ov, ref);
	assert_check_clean(ov);
	cr_assert_eq(qt_run(&out, "qemu-img info %s", ov), 0);
	cr_assert_not_null(strstr(out, "compat: 0.10"), "%s", out);
	free(out), free(ov), free(ref);
}

/* Every refcount width QEMU can create (refcount_order 0..6) is kept
 * exact by mvm's allocator; 4K clusters make refcount blocks fill up. */
Test(qcow2_diff, all_refcount_widths)
{
	char *ov = qt_path(dir, "rc.qcow2"), *ref = qt_path(dir, "ref.raw");

	for (int bits = 1; bits <= 64; bits *= 2) {
		int fd;

		unlink(ov);
		unlink(ref);
		cr_assert_eq(qt_run(NULL, "truncate -s %llu %s", (unsigned long long)VSIZE, ref), 0);
		cr_assert_eq(qt_run(NULL, "qemu-img create -q -f qcow2 -o refcount_bits=%d,"
				    "cluster_size=4096 %s %llu", bits, ov,
				    (unsigned long long)VSIZE), 0);
		fd = open(ref, O_RDWR);
		mvm_writes(ov, fd, (uint64_t)bits, 250, 12, NULL);
		close(fd);
		assert_check_clean(ov);
		assert_same(ov, ref);
	}
	free(ov);
	free(ref);
}
