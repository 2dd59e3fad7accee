/*
 * qcow2 under concurrent requests: threads write, read, discard and flush
 * the same overlay at once, as virtio-blk's workers do. Each thread owns
 * some sectors: in the first half of the disk every NT-th 512-byte sector
 * (so all threads write into the same clusters at once: the allocating
 * writes that must not lose each other's bytes), in the second half every
 * NT-th 32 KiB chunk (multi-cluster allocating runs, discards). Each thread
 * checks its own sectors on every read; at the end `qemu-img check` must be
 * clean and the image must hold every thread's last write.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/qcow2.h"
#include "tests/unit/qcow2_testutil.h"

#define VS (4ULL << 20)
#define SECT 512ULL
#define CHUNK (32ULL << 10)
#define NT 4
#define OPS 1500

static char *dir;

static void setup(void)
{
	dir = qt_mkdtemp();
}

static void teardown(void)
{
	qt_rmtree(dir);
}

TestSuite(qcow2_concurrent, .init = setup, .fini = teardown);

struct worker {
	struct blk_backend *b;
	int id;
	uint64_t seed;
	uint8_t *ref;		/* the whole disk as this thread expects it */
	bool discard;		/* clusters fit in a chunk: discards are exact */
	int failures;
	char why[160];
};

static int owner(uint64_t sector)
{
	if (sector * SECT < VS / 2)
		return (int)(sector % NT);
	return (int)((sector * SECT / CHUNK) % NT);
}

static void fail(struct worker *w, const char *what, uint64_t off)
{
	if (!w->failures++)
		snprintf(w->why, sizeof(w->why), "thread %d: %s at %llu", w->id, what,
			 (unsigned long long)off);
}

/* A range this thread may write: one own sector in the first half, part
 * of an own chunk (often cluster aligned) in the second. */
static void pick(struct worker *w, uint64_t *rs, uint64_t *off, uint64_t *len)
{
	uint64_t sectors = VS / SECT, s;

	do
		s = qt_rand(rs) % sectors;
	while (owner(s) != w->id);
	if (s * SECT < VS / 2) {
		*off = s * SECT, *len = SECT;
		return;
	}
	*off = s * SECT / CHUNK * CHUNK;
	if (qt_rand(rs) % 2)
		*off += (qt_rand(rs) % (CHUNK / SECT)) * SECT;
	*len = *off / CHUNK * CHUNK + CHUNK - *off;
	if (qt_rand(rs) % 2)
		*len = SECT * (1 + qt_rand(rs) % (*len / SECT));
}

static void check_read(struct worker *w, uint64_t *rs, uint8_t *buf)
{
	uint64_t len = SECT * (1 + qt_rand(rs) % 128);
	uint64_t off = SECT * (qt_rand(rs) % ((VS - len) / SECT + 1));

	if (w->b->ops->read(w->b, buf, off, len)) {
		fail(w, "read failed", off);
		return;
	}
	for (uint64_t o = 0; o < len; o += SECT)
		if (owner((off + o) / SECT) == w->id && memcmp(buf + o, w->ref + off + o, SECT))
			fail(w, "read back wrong data", off + o);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	uint64_t rs = w->seed, off, len;
	uint8_t *buf = malloc(CHUNK * 2);

	for (int i = 0; buf && i < OPS; i++) {
		uint64_t what = qt_rand(&rs) % 16;

		if (what == 0) {
			if (w->b->ops->flush(w->b))
				fail(w, "flush failed", 0);
		} else if (what < 5) {
			check_read(w, &rs, buf);
		} else if (what == 5 && w->discard && qt_rand(&rs) % 2) {
			/* A whole own chunk: v3 discards read back as zeroes. */
			pick(w, &rs, &off, &len);
			if (off < VS / 2)
				continue;
			off = off / CHUNK * CHUNK;
			if (w->b->ops->discard(w->b, off, CHUNK))
				fail(w, "discard failed", off);
			memset(w->ref + off, 0, CHUNK);
		} else {
			pick(w, &rs, &off, &len);
			qt_fill(buf, len, qt_rand(&rs));
			if (what == 6)	/* the zero-flag path */
				memset(buf, 0, len);
			if (w->b->ops->write(w->b, buf, off, len))
				fail(w, "write failed", off);
			memcpy(w->ref + off, buf, len);
		}
	}
	free(buf);
	return NULL;
}

static void check_image(const char *img, struct worker *w)
{
	char *out, *raw = qt_path(dir, "out.raw");
	uint8_t *data;
	size_t len;
	int rc = qt_run(&out, "qemu-img check -f qcow2 %s", img);

	cr_assert_eq(rc, 0, "qemu-img check exit %d:\n%s", rc, out);
	free(out);
	cr_assert_eq(qt_run(NULL, "qemu-img convert -f qcow2 -O raw %s %s", img, raw), 0);
	data = qt_slurp(raw, &len);
	cr_assert_eq(len, VS);
	for (uint64_t s = 0; s < VS / SECT; s++)
		cr_assert(!memcmp(data + s * SECT, w[owner(s)].ref + s * SECT, SECT),
			  "sector %llu differs from thread %d's last write",
			  (unsigned long long)s, owner(s));
	free(data);
	free(raw);
}

static void run_threads(unsigned cluster_bits, unsigned cache, uint64_t seed)
{
	char *base = qt_path(dir, "base.raw"), *img = qt_path(dir, "top.qcow2");
	struct qcow2_open_opts o = { .l2_cache_tables = cache };
	struct worker w[NT];
	pthread_t th[NT];
	uint8_t *base_data;
	size_t blen;

	qt_random_file(base, VS, seed);
	base_data = qt_slurp(base, &blen);
	cr_assert_eq(qcow2_create_overlay(img, "base.raw", "raw", 0, cluster_bits), 0);
	memset(w, 0, sizeof(w));
	cr_assert_eq(blk_open_qcow2(img, false, &o, &w[0].b), 0);
	for (int i = 0; i < NT; i++) {
		w[i].b = w[0].b;
		w[i].id = i;
		w[i].discard = (1ULL << cluster_bits) <= CHUNK;
		w[i].seed = seed * 31 + (uint64_t)i;
		w[i].ref = malloc(VS);
		cr_assert_not_null(w[i].ref);
		memcpy(w[i].ref, base_data, VS);
		cr_assert_eq(pthread_create(&th[i], NULL, run, &w[i]), 0);
	}
	for (int i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NT; i++)
		cr_assert_eq(w[i].failures, 0, "%d failures; first: %s", w[i].failures, w[i].why);
	blk_close(w[0].b);
	check_image(img, w);
	for (int i = 0; i < NT; i++)
		free(w[i].ref);
	free(base_data);
	free(base);
	free(img);
}

/* 4 KiB clusters: a 512-byte sector of each thread in every cluster. */
Test(qcow2_concurrent, small_clusters_shared_by_all_threads, .timeout = 120)
{
	run_threads(12, 0, 1);
}

/* One L2 table cached for two: evictions (and their flushes) while other
 * threads' data I/O runs without the lock. */
Test(qcow2_concurrent, l2_cache_evictions, .timeout = 120)
{
	run_threads(12, 1, 2);
}

/* 64 KiB clusters: a 32 KiB chunk is half a cluster, so the chunk writes
 * of two threads share clusters too. */
Test(qcow2_concurrent, default_clusters, .timeout = 120)
{
	run_threads(16, 0, 3);
}
