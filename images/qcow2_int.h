/*
 * qcow2 internals shared by the qcow2_*.c files. Not for other modules.
 *
 * Locking: every entry point from blk_backend_ops takes q->lock; the
 * functions below assume it is held. Metadata (L1, L2 cache, refcounts,
 * allocator, header) is only touched under it. Guest data I/O is not:
 * qcow2_do_read() and qcow2_do_write() drop the lock around each pread /
 * pwrite of data (and backing-file read), so requests from several threads
 * run their data I/O in parallel; see qcow2_inflight.c for how allocating
 * writes to the same cluster are kept apart. Reacquiring the lock means
 * every L2 slot pointer taken before is stale (the cache may have evicted
 * it): look it up again.
 */
#ifndef MVM_QCOW2_INT_H
#define MVM_QCOW2_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "images/qcow2.h"
#include "common/file_io.h"
#include "images/qcow2_format.h"

/* The header as parsed and validated by qcow2_hdr_parse(). */
struct qcow2_hdr {
	uint32_t version;
	uint64_t backing_off;
	uint32_t backing_size;
	uint32_t cluster_bits;
	uint64_t size;
	uint32_t l1_size;
	uint64_t l1_off;
	uint64_t rt_off;
	uint32_t rt_clusters;
	uint32_t nb_snapshots;
	uint64_t incompat, compat, autoclear;
	uint32_t refcount_order;
	uint32_t hdr_len;
	char backing[QCOW2_MAX_BACKING_NAME + 1];
	char backing_fmt[16];	/* "" when the extension is absent */
};

struct l2_slot {
	uint64_t off;		/* host offset of the table; 0 = free slot */
	uint32_t l1_idx;
	uint64_t lru;
	bool dirty;
	uint64_t *tbl;		/* big-endian, as on disk */
};

/* Guest clusters [c0, c0 + n) with an allocating write in flight. */
struct qcow2_busy {
	uint64_t c0, n;
};

/* Allocating writes in flight at once (more wait): beyond the number of
 * threads any caller runs. */
#define QCOW2_MAX_BUSY 64

struct qcow2 {
	struct blk_backend b;
	pthread_mutex_t lock;
	pthread_cond_t busy_cv;		/* a busy range was released */
	struct qcow2_busy busy[QCOW2_MAX_BUSY];
	unsigned nbusy;
	int fd;
	char *path;		/* realpath of this image */
	struct qcow2_hdr h;
	uint64_t cs;		/* cluster size */
	unsigned l2_bits;	/* log2(entries per L2 table) */
	bool v3;

	uint64_t *l1;		/* host-endian copy */
	bool l1_dirty;

	/* L2 cache: l1_slot[l1 index] is slot index + 1, 0 = not cached. */
	struct l2_slot *slots;
	unsigned nslots;
	uint32_t *l1_slot;
	uint64_t tick;

	/* Refcounts (only loaded for writable images). */
	uint64_t *rt;		/* host-endian reftable */
	uint64_t rt_entries;
	uint64_t rt_off;
	uint32_t rt_clusters;
	bool rt_dirty, rt_moved;
	uint8_t **rb;		/* refblock cache, indexed like rt */
	bool *rb_dirty;
	uint64_t rb_entries;	/* refcounts per block */

	/* Clusters to free once the metadata dropping them is durable. */
	uint64_t *pending_free;
	size_t npending, cap_pending;

	uint64_t next_free;	/* append-only allocator: end of image */
	uint64_t file_bound;	/* offsets beyond this are hostile */
	bool data_dirty;

	struct blk_backend *backing;
	char *backing_path;	/* resolved */
	char backing_fmt[16];
	const struct qcow2_io_trace *trace;	/* top image only; may be NULL */
};

/* qcow2_util.c */
int qcow2_sync(int fd);
bool qcow2_host_off_ok(const struct qcow2 *q, uint64_t off, uint64_t len);
/* I/O on the image itself: these also report to opts->trace, if any. */
int qcow2_write_at(struct qcow2 *q, const void *buf, size_t len, uint64_t off);
int qcow2_sync_q(struct qcow2 *q);
void qcow2_punch(struct qcow2 *q, uint64_t off, uint64_t len);

/* qcow2_header.c: parse and validate a header cluster (@buf holds the first
 * min(cluster size, file size) bytes, @len of them). Logs the reason. */
int qcow2_hdr_peek_cluster_bits(const uint8_t *buf, size_t len,
				const char *path, uint32_t *cluster_bits);
int qcow2_hdr_parse(const uint8_t *buf, size_t len, uint64_t file_size,
		    const char *path, struct qcow2_hdr *h);

/* qcow2_refcount.c */
int qcow2_rc_load(struct qcow2 *q);
void qcow2_rc_release(struct qcow2 *q);
int qcow2_alloc_cluster(struct qcow2 *q, uint64_t *off);
int qcow2_rc_update(struct qcow2 *q, uint64_t off, int delta);
int qcow2_defer_free(struct qcow2 *q, uint64_t off);
int qcow2_rc_write_dirty(struct qcow2 *q);

/* qcow2_l2.c */
int qcow2_l2_init(struct qcow2 *q, unsigned nslots);
void qcow2_l2_release(struct qcow2 *q);
/* Table covering guest offset @goff; *slot NULL when absent and !alloc. */
int qcow2_l2_get(struct qcow2 *q, uint64_t goff, bool alloc, struct l2_slot **slot);
int qcow2_l2_write_dirty(struct qcow2 *q, bool *wrote);
int qcow2_l1_write(struct qcow2 *q);

/* qcow2_flush.c: the ordered metadata write-back (see there). */
int qcow2_flush_locked(struct qcow2 *q);

/* qcow2_read.c: what an L2 entry means ("Cluster mapping"). */
enum qcow2_kind { QK_DATA, QK_ZERO, QK_BACKING };
int qcow2_classify(struct qcow2 *q, uint64_t e, enum qcow2_kind *kind, uint64_t *host);
int qcow2_backing_read(struct qcow2 *q, void *buf, uint64_t goff, size_t n);
int qcow2_do_read(struct qcow2 *q, void *buf, uint64_t off, size_t len);

/* qcow2_write.c */
int qcow2_do_write(struct qcow2 *q, const uint8_t *buf, uint64_t off, size_t len);
int qcow2_do_discard(struct qcow2 *q, uint64_t off, uint64_t len);

/* qcow2_inflight.c: busy guest clusters (lock held for all of these). */
bool qcow2_busy_overlaps(const struct qcow2 *q, uint64_t c0, uint64_t n);
/* May a new allocating write to guest cluster @c0 start now? If not,
 * qcow2_busy_wait() and look again. */
bool qcow2_busy_blocks(const struct qcow2 *q, uint64_t c0);
void qcow2_busy_claim(struct qcow2 *q, uint64_t c0, uint64_t n);
/* Release the range claimed at @c0 and wake the waiters. */
void qcow2_busy_release(struct qcow2 *q, uint64_t c0);
void qcow2_busy_wait(struct qcow2 *q);

/* qcow2_io.c */
extern const struct blk_backend_ops qcow2_ops;
void qcow2_free(struct qcow2 *q);

/* qcow2_open.c */
struct qcow2_chain_ctx {
	const struct qcow2_open_opts *opts;
	char *root;		/* realpath of allowed root or NULL if trusted */
	char *file2;		/* realpath of opts->also_file, or NULL */
	dev_t dev[QCOW2_MAX_CHAIN];
	ino_t ino[QCOW2_MAX_CHAIN];
	unsigned depth;
};

static inline uint64_t l2_index(const struct qcow2 *q, uint64_t goff)
{
	return (goff >> (q->h.cluster_bits)) & ((1ULL << q->l2_bits) - 1);
}

static inline uint64_t l1_index(const struct qcow2 *q, uint64_t goff)
{
	return goff >> (q->h.cluster_bits + q->l2_bits);
}

#endif
