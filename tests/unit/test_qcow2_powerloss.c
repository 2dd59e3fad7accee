/*
 * qcow2 power-loss test. Every host write and fdatasync of a workload is
 * traced; a power cut after sync k leaves all writes before it plus any
 * subset of the writes between syncs k and k+1 (the disk may reorder or
 * drop those). Each such state must pass `qemu-img check` with no
 * corruption (leaks allowed): this is what the write ordering in
 * qcow2_flush.c promises, and a SIGKILL alone (page cache survives)
 * cannot test it.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "tests/unit/qcow2_testutil.h"

struct rec {
	uint64_t off;
	size_t len;
	uint8_t *data;		/* NULL: hole punched */
	unsigned epoch;		/* syncs issued before this write */
};

struct tlog {
	struct rec *r;
	size_t n, cap;
	unsigned epoch;
};

static char *dir;

static void setup(void)
{
	dir = qt_mkdtemp();
}

static void teardown(void)
{
	qt_rmtree(dir);
}

TestSuite(qcow2_powerloss, .init = setup, .fini = teardown);

static void t_write(void *o, uint64_t off, const void *buf, size_t len)
{
	struct tlog *t = o;
	struct rec *r;

	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->r = realloc(t->r, t->cap * sizeof(*t->r));
		cr_assert_not_null(t->r);
	}
	r = &t->r[t->n++];
	*r = (struct rec){ .off = off, .len = len, .epoch = t->epoch };
	if (buf) {
		r->data = malloc(len);
		cr_assert_not_null(r->data);
		memcpy(r->data, buf, len);
	}
}

static void t_sync(void *o)
{
	((struct tlog *)o)->epoch++;
}

/* Write the state a power cut during epoch @e could leave, check it. */
static void check_cut(const char *path, const uint8_t *s0, size_t s0len,
		      const struct tlog *t, unsigned e, uint64_t *rs)
{
	size_t size = s0len;
	uint8_t *img;
	char *out;
	int fd, rc;

	for (size_t i = 0; i < t->n && t->r[i].epoch <= e; i++)
		if (t->r[i].off + t->r[i].len > size)
			size = t->r[i].off + t->r[i].len;
	img = calloc(1, size);
	memcpy(img, s0, s0len);
	for (size_t i = 0; i < t->n && t->r[i].epoch <= e; i++) {
		const struct rec *r = &t->r[i];

		if (r->epoch == e && qt_rand(rs) % 2)
			continue;	/* this write never reached the disk */
		if (r->data)
			memcpy(img + r->off, r->data, r->len);
		else
			memset(img + r->off, 0, r->len);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, img, size), (ssize_t)size);
	close(fd);
	free(img);
	rc = qt_run(&out, "qemu-img check -f qcow2 %s", path);
	cr_assert(rc == 0 || rc == 3, "cut in epoch %u: qemu-img check exit %d:\n%s", e,
		  rc, out);
	free(out);
}

static void powerloss(unsigned bits, unsigned cache)
{
	char *ov = qt_path(dir, "ov.qcow2"), *ref = qt_path(dir, "ref.raw");
	char *base = qt_path(dir, "base.raw"), *cut = qt_path(dir, "cut.qcow2");
	struct tlog t = { 0 };
	struct qcow2_io_trace tr = { .opaque = &t, .write = t_write, .sync = t_sync };
	struct qcow2_open_opts o = { .l2_cache_tables = cache, .trace = &tr };
	struct blk_backend *b;
	uint64_t rs = bits;
	uint8_t *s0;
	size_t s0len;
	int fd;

	qt_random_file(base, 4 << 20, 5);
	cr_assert_eq(qt_run(NULL, "cp %s %s && truncate -s 16M %s", base, ref, ref), 0);
	cr_assert_eq(qcow2_create_overlay(ov, "base.raw", "raw", 16 << 20, bits), 0);
	s0 = qt_slurp(ov, &s0len);
	fd = open(ref, O_RDWR);
	cr_assert_eq(blk_open_qcow2(ov, false, &o, &b), 0);
	qt_random_ops(b, fd, 77 + bits, 400, bits, 1);
	blk_close(b);
	close(fd);
	cr_assert_gt(t.epoch, 10, "workload too small: %u syncs", t.epoch);
	/* About 40 cuts spread over the whole stream, random subsets. */
	for (unsigned e = 0; e <= t.epoch; e += 1 + t.epoch / 40) {
		unsigned c = e + (unsigned)(qt_rand(&rs) % (1 + t.epoch / 40));

		check_cut(cut, s0, s0len, &t, c > t.epoch ? t.epoch : c, &rs);
	}
	for (size_t i = 0; i < t.n; i++)
		free(t.r[i].data);
	free(t.r), free(s0), free(ov), free(ref), free(base), free(cut);
}

Test(qcow2_powerloss, cuts_64k) { powerloss(16, 0); }
/* Tiny cache and 512-byte clusters: evictions, refcount blocks and table
 * moves in the middle of the stream. */
Test(qcow2_powerloss, cuts_4k_small_cache) { powerloss(12, 2); }
Test(qcow2_powerloss, cuts_512) { powerloss(9, 4); }
