/* qcow2: backing-chain security (loops, depth, root, format). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "images/qcow2_format.h"
#include "tests/unit/qcow2_testutil.h"

static char *dir;

static void setup(void)
{
	dir = qt_mkdtemp();
}

static void teardown(void)
{
	qt_rmtree(dir);
}

TestSuite(qcow2_chain, .init = setup, .fini = teardown);

static void rnd_file(const char *name, uint64_t size, uint64_t seed)
{
	char *p = qt_path(dir, name);

	qt_random_file(p, size, seed);
	free(p);
}

static int try_open(const char *path, const struct qcow2_open_opts *o, char **log)
{
	FILE *sink = qt_log_start();
	struct blk_backend *b = NULL;
	int rc = blk_open_qcow2(path, false, o, &b);

	*log = qt_log_take(sink);
	if (!rc)
		blk_close(b);
	return rc;
}

static void expect(const char *path, const struct qcow2_open_opts *o, int err,
		   const char *msg)
{
	char *log;
	int rc = try_open(path, o, &log);

	cr_assert_eq(rc, err, "open %s: %d, want %d; log: %s", path, rc, err, log);
	if (msg)
		cr_assert_not_null(strstr(log, msg), "log lacks '%s': %s", msg, log);
	free(log);
}

Test(qcow2_chain, self_loop)
{
	char *a = qt_path(dir, "a.qcow2");

	cr_assert_eq(qcow2_create_overlay(a, "a.qcow2", "qcow2", 1 << 20, 16), 0);
	expect(a, NULL, -ELOOP, "backing file loop");
	free(a);
}

Test(qcow2_chain, two_image_loop_via_symlink)
{
	char *a = qt_path(dir, "a.qcow2"), *b = qt_path(dir, "b.qcow2");
	char *l = qt_path(dir, "link.qcow2");

	cr_assert_eq(qcow2_create_overlay(a, "b.qcow2", "qcow2", 1 << 20, 16), 0);
	cr_assert_eq(qcow2_create_overlay(b, "link.qcow2", "qcow2", 1 << 20, 16), 0);
	cr_assert_eq(symlink("a.qcow2", l), 0);
	expect(a, NULL, -ELOOP, "backing file loop");
	free(a), free(b), free(l);
}

Test(qcow2_chain, depth_limit)
{
	char name[32], prev[32];

	rnd_file("base.raw", 1 << 20, 1);
	strcpy(prev, "base.raw");
	for (int i = 0; i < QCOW2_MAX_CHAIN + 1; i++) {
		char *p;

		snprintf(name, sizeof(name), "l%02d.qcow2", i);
		p = qt_path(dir, name);
		cr_assert_eq(qcow2_create_overlay(p, prev, i ? "qcow2" : "raw", 1 << 20, 16), 0);
		if (i == QCOW2_MAX_CHAIN - 2)	/* 15 qcow2 + raw = 16 images */
			expect(p, NULL, 0, NULL);
		if (i == QCOW2_MAX_CHAIN)
			expect(p, NULL, -ELOOP, "backing chain longer than 16");
		strcpy(prev, name);
		free(p);
	}
}

Test(qcow2_chain, backing_outside_root)
{
	char *other = qt_mkdtemp(), *base = qt_path(other, "base.raw");
	char *ov = qt_path(dir, "ov.qcow2");
	struct qcow2_open_opts trusted = { .trust_backing = true };
	struct qcow2_open_opts wide = { .allowed_root = "/" };
	struct qcow2_open_opts narrow = { .allowed_root = dir };

	qt_random_file(base, 1 << 20, 2);
	cr_assert_eq(qcow2_create_overlay(ov, base, "raw", 0, 16), 0);
	expect(ov, NULL, -EACCES, "outside the allowed directory");
	expect(ov, &narrow, -EACCES, "outside the allowed directory");
	expect(ov, &trusted, 0, NULL);
	expect(ov, &wide, 0, NULL);
	qt_rmtree(other);
	free(base), free(ov);
}

/* A sandbox's layers above its image: that exact base file is accepted
 * outside the allowed root, another file beside it (a tampered backing
 * name) is not, nor is the base reached through a second layer that names
 * a neighbour. */
Test(qcow2_chain, also_file_exactly)
{
	char *store = qt_mkdtemp(), *base = qt_path(store, "img.ext4");
	char *other = qt_path(store, "other.ext4");
	char *ov = qt_path(dir, "root.qcow2"), *top = qt_path(dir, "layer-1.qcow2");
	char *bad = qt_path(dir, "bad.qcow2");
	struct qcow2_open_opts o = { .allowed_root = dir, .also_file = base };

	qt_random_file(base, 1 << 20, 4);
	qt_random_file(other, 1 << 20, 5);
	cr_assert_eq(qcow2_create_overlay(ov, base, "raw", 0, 16), 0);
	cr_assert_eq(qcow2_create_overlay(top, "root.qcow2", "qcow2", 0, 16), 0);
	expect(top, &o, 0, NULL);
	expect(top, &(struct qcow2_open_opts){ .allowed_root = dir }, -EACCES,
	       "outside the allowed directory");
	cr_assert_eq(qcow2_create_overlay(bad, other, "raw", 0, 16), 0);
	expect(bad, &o, -EACCES, "outside the allowed directory");
	qt_rmtree(store);
	free(base), free(other), free(ov), free(top), free(bad);
}

Test(qcow2_chain, dotdot_and_symlink_escape)
{
	char *sub = qt_path(dir, "store"), *ov = qt_path(dir, "store/ov.qcow2");
	char *ov2 = qt_path(dir, "store/ov2.qcow2"), *lnk = qt_path(dir, "store/in.raw");

	cr_assert_eq(mkdir(sub, 0755), 0);
	rnd_file("secret.raw", 1 << 20, 3);
	cr_assert_eq(qcow2_create_overlay(ov, "../secret.raw", "raw", 0, 16), 0);
	expect(ov, NULL, -EACCES, "outside the allowed directory");
	cr_assert_eq(symlink("../secret.raw", lnk), 0);
	cr_assert_eq(qcow2_create_overlay(ov2, "in.raw", "raw", 0, 16), 0);
	expect(ov2, NULL, -EACCES, "outside the allowed directory");
	free(sub), free(ov), free(ov2), free(lnk);
}

Test(qcow2_chain, missing_backing_format)
{
	char *ov = qt_path(dir, "ov.qcow2");
	struct qcow2_open_opts raw = { .backing_fmt = "raw" };
	struct qcow2_open_opts q = { .backing_fmt = "qcow2" };
	uint8_t t[4];
	int fd;

	rnd_file("base.raw", 1 << 20, 4);
	cr_assert_eq(qcow2_create_overlay(ov, "base.raw", "raw", 0, 16), 0);
	expect(ov, &q, -EINVAL, "differs from the requested 'qcow2'");
	/* Turn the backing format extension into an unknown one. */
	put_be32(t, 0x0badf00d);
	fd = open(ov, O_WRONLY);
	cr_assert_eq(pwrite(fd, t, 4, QCOW2_V3_HDR_LEN), 4);
	close(fd);
	expect(ov, NULL, -EINVAL, "refusing to probe");
	expect(ov, &raw, 0, NULL);
	free(ov);
}

Test(qcow2_chain, missing_backing_file)
{
	char *ov = qt_path(dir, "ov.qcow2");

	cr_assert_eq(qcow2_create_overlay(ov, "nope.raw", "raw", 1 << 20, 16), 0);
	expect(ov, NULL, -ENOENT, "nope.raw");
	free(ov);
}

Test(qcow2_chain, create_refuses_existing_and_bad_format)
{
	char *ov = qt_path(dir, "ov.qcow2");
	FILE *sink = qt_log_start();

	cr_assert_eq(qcow2_create(ov, 1 << 20, 16), 0);
	cr_assert_eq(qcow2_create(ov, 1 << 20, 16), -EEXIST);
	cr_assert_eq(qcow2_create_overlay(ov, "x", "vmdk", 1 << 20, 16), -EINVAL);
	cr_assert_eq(qcow2_create(ov, 1ULL << 50, 16), -EFBIG);
	free(qt_log_take(sink));
	free(ov);
}

Test(qcow2_chain, one_writer_or_many_readers)
{
	char *ov = qt_path(dir, "ov.qcow2");
	struct blk_backend *a, *b, *c;
	FILE *sink;

	cr_assert_eq(qcow2_create(ov, 1 << 20, 16), 0);
	cr_assert_eq(blk_open_qcow2(ov, true, NULL, &a), 0);
	cr_assert_eq(blk_open_qcow2(ov, true, NULL, &b), 0);
	sink = qt_log_start();
	cr_assert_eq(blk_open_qcow2(ov, false, NULL, &c), -EBUSY);
	free(qt_log_take(sink));
	blk_close(a);
	blk_close(b);
	cr_assert_eq(blk_open_qcow2(ov, false, NULL, &c), 0);
	sink = qt_log_start();
	cr_assert_eq(blk_open_qcow2(ov, true, NULL, &a), -EBUSY);
	free(qt_log_take(sink));
	blk_close(c);
	free(ov);
}

Test(qcow2_chain, fifo_backing_refused_without_hanging)
{
	char *ov = qt_path(dir, "ov.qcow2"), *ov2 = qt_path(dir, "ov2.qcow2");
	char *fifo = qt_path(dir, "fifo");

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(qcow2_create_overlay(ov, "fifo", "raw", 1 << 20, 16), 0);
	cr_assert_eq(qcow2_create_overlay(ov2, "fifo", "qcow2", 1 << 20, 16), 0);
	expect(ov, NULL, -EINVAL, "is not a file");
	expect(ov2, NULL, -EINVAL, "not a regular file");
	free(ov), free(ov2), free(fifo);
}
