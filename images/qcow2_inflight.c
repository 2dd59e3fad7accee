/*
 * Guest clusters with an allocating write in flight. An allocating write
 * takes its host clusters under q->lock, drops the lock for the data I/O
 * (so other requests go on) and retakes it to point the L2 entries at the
 * new data. Meanwhile those guest clusters are "busy": a second allocating
 * write (or a discard) to them waits, else it would allocate its own
 * cluster, fill it from the backing file and lose the first write's bytes.
 * In-place writes and reads never wait: they only touch clusters whose
 * mapping is already settled.
 */
#include "images/qcow2_int.h"

static bool overlaps(const struct qcow2_busy *b, uint64_t c0, uint64_t n)
{
	return c0 < b->c0 + b->n && b->c0 < c0 + n;
}

bool qcow2_busy_overlaps(const struct qcow2 *q, uint64_t c0, uint64_t n)
{
	for (unsigned i = 0; i < q->nbusy; i++)
		if (overlaps(&q->busy[i], c0, n))
			return true;
	return false;
}

bool qcow2_busy_blocks(const struct qcow2 *q, uint64_t c0)
{
	return q->nbusy == QCOW2_MAX_BUSY || qcow2_busy_overlaps(q, c0, 1);
}

void qcow2_busy_claim(struct qcow2 *q, uint64_t c0, uint64_t n)
{
	/* Callers checked qcow2_busy_blocks() under the same lock hold. */
	q->busy[q->nbusy].c0 = c0;
	q->busy[q->nbusy].n = n;
	q->nbusy++;
}

void qcow2_busy_release(struct qcow2 *q, uint64_t c0)
{
	for (unsigned i = 0; i < q->nbusy; i++) {
		if (q->busy[i].c0 != c0)
			continue;
		q->busy[i] = q->busy[--q->nbusy];
		break;
	}
	pthread_cond_broadcast(&q->busy_cv);
}

void qcow2_busy_wait(struct qcow2 *q)
{
	pthread_cond_wait(&q->busy_cv, &q->lock);
}
