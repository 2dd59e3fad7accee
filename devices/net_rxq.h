/*
 * Frames for the guest that wait because it has posted no RX buffer: a
 * bounded FIFO of variable-length frames in one buffer allocated up front.
 * With the large link MTU (net_chan.h: NET_LINK_MTU) a frame is up to 64 KiB,
 * so fixed slots of the largest size would cost 16 MiB for 256 of them;
 * here a frame takes its own length, and both the count and the bytes are
 * capped (a flood from the Internet while the guest does not read is
 * dropped; TCP retransmits). Nothing is allocated after net_rxq_init, so
 * the event loop's seccomp table need not allow mmap for it. Pure code.
 */
#ifndef MVM_NET_RXQ_H
#define MVM_NET_RXQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_RXQ_SLOTS 256

struct net_rxq {
	uint8_t *buf;
	size_t cap;			/* bytes of buf */
	unsigned first, count;		/* slots in use: first .. first+count-1 */
	struct {
		uint32_t off, len;
	} slot[NET_RXQ_SLOTS];
};

/* A queue of @cap bytes (at least one largest frame). 0 or -ENOMEM. */
int net_rxq_init(struct net_rxq *q, size_t cap);
void net_rxq_free(struct net_rxq *q);

/* Copy @len bytes (1 ..) in at the tail. 0, or -ENOSPC when the frame
 * does not fit in what is free (the queue is unchanged), or -EMSGSIZE
 * when it could never fit or is empty. */
int net_rxq_push(struct net_rxq *q, const uint8_t *frame, size_t len);

/* The oldest frame, or false when none waits. Valid until the next pop. */
bool net_rxq_peek(const struct net_rxq *q, const uint8_t **frame, size_t *len);
void net_rxq_pop(struct net_rxq *q);

/* Forget every frame (device reset). */
void net_rxq_clear(struct net_rxq *q);

#endif
