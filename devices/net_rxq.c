/* The guest's waiting RX frames (net_rxq.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/net_rxq.h"

int net_rxq_init(struct net_rxq *q, size_t cap)
{
	memset(q, 0, sizeof(*q));
	if (!cap || cap > UINT32_MAX)
		return -EINVAL;
	q->buf = malloc(cap);
	if (!q->buf)
		return -ENOMEM;
	q->cap = cap;
	return 0;
}

void net_rxq_free(struct net_rxq *q)
{
	free(q->buf);
	q->buf = NULL;
	q->cap = 0;
	q->count = 0;
}

/* Where a frame of @len goes, or -1. Frames lie in one run from the
 * oldest's offset upwards, possibly continued from 0 (wrapped): a frame is
 * never split, so what is left at the end of the buffer may go unused. */
static long place(const struct net_rxq *q, size_t len)
{
	size_t head, tail;
	unsigned last;

	if (!q->count)
		return 0;
	head = q->slot[q->first].off;
	last = (q->first + q->count - 1) % NET_RXQ_SLOTS;
	tail = (size_t)q->slot[last].off + q->slot[last].len;
	if (q->slot[last].off >= head) {	/* one run: head .. tail */
		if (q->cap - tail >= len)
			return (long)tail;
		return head >= len ? 0 : -1;
	}
	return head - tail >= len ? (long)tail : -1;	/* wrapped: the gap tail .. head */
}

int net_rxq_push(struct net_rxq *q, const uint8_t *frame, size_t len)
{
	unsigned s;
	long off;

	if (!len || len > q->cap)
		return -EMSGSIZE;
	if (q->count == NET_RXQ_SLOTS || (off = place(q, len)) < 0)
		return -ENOSPC;
	s = (q->first + q->count) % NET_RXQ_SLOTS;
	q->slot[s].off = (uint32_t)off;
	q->slot[s].len = (uint32_t)len;
	memcpy(q->buf + off, frame, len);
	q->count++;
	return 0;
}

bool net_rxq_peek(const struct net_rxq *q, const uint8_t **frame, size_t *len)
{
	if (!q->count)
		return false;
	*frame = q->buf + q->slot[q->first].off;
	*len = q->slot[q->first].len;
	return true;
}

void net_rxq_pop(struct net_rxq *q)
{
	if (!q->count)
		return;
	q->first = (q->first + 1) % NET_RXQ_SLOTS;
	q->count--;
}

void net_rxq_clear(struct net_rxq *q)
{
	q->first = q->count = 0;
}
