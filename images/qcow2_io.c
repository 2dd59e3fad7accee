/* qcow2 blk_backend ops: locking wrappers around the read/write/flush paths. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "images/qcow2_int.h"
#include "common/io_census.h"
#include "common/log.h"

static int q_read(struct blk_backend *b, void *buf, uint64_t off, size_t len)
{
	struct qcow2 *q = b->priv;
	int err;

	if (off > b->size || len > b->size - off)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	err = qcow2_do_read(q, buf, off, len);
	pthread_mutex_unlock(&q->lock);
	return err;
}

static int q_write(struct blk_backend *b, const void *buf, uint64_t off, size_t len)
{
	struct qcow2 *q = b->priv;
	int err;

	if (b->read_only)
		return -EROFS;
	if (off > b->size || len > b->size - off)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	err = qcow2_do_write(q, buf, off, len);
	pthread_mutex_unlock(&q->lock);
	return err;
}

static int q_flush(struct blk_backend *b)
{
	struct qcow2 *q = b->priv;
	int err;

	pthread_mutex_lock(&q->lock);
	err = qcow2_flush_locked(q);
	pthread_mutex_unlock(&q->lock);
	return err;
}

static int q_discard(struct blk_backend *b, uint64_t off, uint64_t len)
{
	struct qcow2 *q = b->priv;
	int err;

	if (b->read_only)
		return -EROFS;
	if (off > b->size || len > b->size - off)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	err = qcow2_do_discard(q, off, len);
	pthread_mutex_unlock(&q->lock);
	return err;
}

void qcow2_free(struct qcow2 *q)
{
	if (!q)
		return;
	blk_close(q->backing);
	qcow2_l2_release(q);
	qcow2_rc_release(q);
	free(q->l1);
	free(q->path);
	free(q->backing_path);
	if (q->fd >= 0) {
		io_census_disk_fd(q->fd, false);
		close(q->fd);
	}
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->busy_cv);
	free(q);
}

/* Freed clusters are released by a flush, which dirties refcounts again:
 * flush until clean (bounded) so close leaves no leaks behind. */
static void q_close(struct blk_backend *b)
{
	struct qcow2 *q = b->priv;

	for (int i = 0; i < 3 && !b->read_only; i++) {
		bool more;
		int err = qcow2_flush_locked(q);

		if (err) {
			log_error("qcow2 %s: flush on close failed: %d", q->path, err);
			break;
		}
		more = q->npending != 0;
		for (uint64_t j = 0; !more && j < q->rt_entries; j++)
			more = q->rb_dirty[j];
		if (!more)
			break;
	}
	qcow2_free(q);
}

const struct blk_backend_ops qcow2_ops = {
	.name = "qcow2",
	.read = q_read,
	.write = q_write,
	.flush = q_flush,
	.discard = q_discard,
	.close = q_close,
};
