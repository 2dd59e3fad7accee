/*
 * qcow2 crash test: a child writes (and discards) a seeded random stream,
 * flushes every BATCH requests and reports each completed flush through a
 * pipe; the parent SIGKILLs it at a random moment. Afterwards `qemu-img
 * check` must find no corruption (leaks are fine) and every write
 * acknowledged by the last reported flush must be there.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "tests/unit/qcow2_testutil.h"

#define VS (16ULL << 20)
#define BATCH 8
#define MAXW (256U << 10)

static char *dir;

static void setup(void)
{
	dir = qt_mkdtemp();
}

static void teardown(void)
{
	qt_rmtree(dir);
}

TestSuite(qcow2_crash, .init = setup, .fini = teardown);

struct wr {
	uint64_t off, seed;
	size_t len;
	bool discard;	/* v3 discard: whole clusters inside read as zero */
};

static struct wr gen(uint64_t round, uint64_t i)
{
	uint64_t rs = round * 1000003 + i;
	struct wr w;

	w.off = qt_rand(&rs) % VS;
	w.len = 1 + qt_rand(&rs) % (qt_rand(&rs) % 2 ? 8192 : MAXW);
	if (w.len > VS - w.off)
		w.len = VS - w.off;
	w.seed = qt_rand(&rs);
	w.discard = qt_rand(&rs) % 16 == 0;
	return w;
}

static void child(const char *img, unsigned cache, uint64_t round, int fd)
{
	struct qcow2_open_opts o = { .l2_cache_tables = cache };
	struct blk_backend *b;
	uint8_t *buf = malloc(MAXW);

	if (!buf || blk_open_qcow2(img, false, &o, &b))
		_exit(2);
	for (uint64_t i = 0; i < 1000000; i++) {
		struct wr w = gen(round, i);

		qt_fill(buf, w.len, w.seed);
		if (w.discard ? b->ops->discard(b, w.off, w.len)
			      : b->ops->write(b, buf, w.off, w.len))
			_exit(3);
		if ((i + 1) % BATCH)
			continue;
		if (b->ops->flush(b))
			_exit(4);
		if (write(fd, &(uint64_t){ i + 1 }, 8) != 8)
			_exit(5);
	}
	_exit(0);
}

/* Run one child, kill it after @ms, return writes acknowledged by a flush. */
static uint64_t run_and_kill(const char *img, unsigned cache, uint64_t round, int ms)
{
	uint64_t acked = 0, v;
	int p[2], st;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		child(img, cache, round, p[1]);
	}
	close(p[1]);
	usleep((useconds_t)ms * 1000);
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st), "child exited with %d before the kill",
		  WEXITSTATUS(st));
	while (read(p[0], &v, 8) == 8)
		acked = v;
	close(p[0]);
	return acked;
}

static void assert_no_corruption(const char *img)
{
	char *out;
	int rc = qt_run(&out, "qemu-img check -f qcow2 %s", img);

	/* 0: clean, 3: leaked clusters only. */
	cr_assert(rc == 0 || rc == 3, "qemu-img check exit %d:\n%s", rc, out);
	cr_assert_null(strstr(out, "ERROR"), "%s", out);
	free(out);
}

static uint8_t *image_bytes(const char *img)
{
	char *raw = qt_path(dir, "out.raw");
	uint8_t *data;
	size_t len;

	cr_assert_eq(qt_run(NULL, "qemu-img convert -f qcow2 -O raw %s %s", img, raw), 0);
	data = qt_slurp(raw, &len);
	cr_assert_eq(len, VS);
	unlink(raw);
	free(raw);
	return data;
}

/* Bytes of writes after @acked may or may not have landed: skip those. */
static void apply(uint8_t *img, const struct wr *w, uint64_t cs)
{
	uint64_t s = (w->off + cs - 1) & ~(cs - 1), e = (w->off + w->len) & ~(cs - 1);

	if (!w->discard)
		qt_fill(img + w->off, w->len, w->seed);
	else if (e > s)
		memset(img + s, 0, e - s);
}

static void verify(const uint8_t *base, const uint8_t *now, uint64_t round,
		   uint64_t acked, uint64_t cs)
{
	uint8_t *want = malloc(VS), *unsure = calloc(1, VS);

	memcpy(want, base, VS);
	for (uint64_t i = 0; i < acked; i++) {
		struct wr w = gen(round, i);

		apply(want, &w, cs);
	}
	for (uint64_t i = acked; i < acked + 2 * BATCH; i++) {
		struct wr w = gen(round, i);

		memset(unsure + w.off, 1, w.len);
	}
	for (uint64_t i = 0; i < VS; i++)
		cr_assert(unsure[i] || want[i] == now[i],
			  "round %lu: byte %lu lost (acked %lu writes)",
			  (unsigned long)round, (unsigned long)i, (unsigned long)acked);
	free(want);
	free(unsure);
}

static void crash_rounds(unsigned bits, unsigned cache, int rounds)
{
	char *img = qt_path(dir, "ov.qcow2"), *base = qt_path(dir, "base.raw");
	uint64_t rs = (uint64_t)time(NULL) ^ bits;
	uint8_t *before;
	struct blk_backend *b;

	qt_random_file(base, 8 << 20, 9);
	cr_assert_eq(qcow2_create_overlay(img, "base.raw", "raw", VS, bits), 0);
	before = image_bytes(img);
	for (int r = 0; r < rounds; r++) {
		uint64_t round = rs + (uint64_t)r;
		uint64_t acked = run_and_kill(img, cache, round,
					      50 + (int)(qt_rand(&rs) % 400));
		uint8_t *now;

		assert_no_corruption(img);
		now = image_bytes(img);
		verify(before, now, round, acked, 1ULL << bits);
		free(before);
		before = now;
	}
	/* A clean open/close after the crashes still yields a sound image. */
	cr_assert_eq(blk_open_qcow2(img, false, NULL, &b), 0);
	blk_close(b);
	assert_no_corruption(img);
	free(before), free(img), free(base);
}

Test(qcow2_crash, kill_64k) { crash_rounds(16, 0, 5); }
/* Tiny L2 cache: dirty-table eviction flushes in the middle of writes. */
Test(qcow2_crash, kill_4k_small_cache) { crash_rounds(12, 2, 5); }
/* 512-byte clusters: refcount blocks and table moves all the time. */
Test(qcow2_crash, kill_512) { crash_rounds(9, 8, 4); }
