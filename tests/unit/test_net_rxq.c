/* The frames waiting for the guest's RX buffers (devices/net_rxq.h): order,
 * wrap-around, and both caps, with frames up to the link's 64 KiB. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/net_chan.h"
#include "devices/net_rxq.h"

static uint8_t *frame_of(size_t len, uint8_t tag)
{
	uint8_t *f = malloc(len);

	cr_assert(f);
	memset(f, tag, len);
	return f;
}

/* Pop the oldest frame and check it is @len bytes of @tag. */
static void expect_pop(struct net_rxq *q, size_t len, uint8_t tag)
{
	const uint8_t *f;
	size_t l;

	cr_assert(net_rxq_peek(q, &f, &l), "a frame waits");
	cr_expect_eq(l, len);
	cr_expect(f[0] == tag && f[l - 1] == tag, "frame %u intact", tag);
	net_rxq_pop(q);
}

Test(net_rxq, largest_frames_in_order_until_the_bytes_run_out)
{
	struct net_rxq q;
	uint8_t *big = frame_of(NET_LINK_FRAME_MAX, 0);
	int n = 0;

	cr_assert_eq(net_rxq_init(&q, 4 * NET_LINK_FRAME_MAX + 100), 0);
	for (; n < 10; n++) {
		big[0] = big[NET_LINK_FRAME_MAX - 1] = (uint8_t)n;
		if (net_rxq_push(&q, big, NET_LINK_FRAME_MAX))
			break;
	}
	cr_expect_eq(n, 4, "as many as the bytes hold");
	cr_expect_eq(net_rxq_push(&q, big, NET_LINK_FRAME_MAX), -ENOSPC);
	cr_expect_eq(q.count, 4, "a refused frame changes nothing");
	cr_expect_eq(net_rxq_push(&q, big, 100), 0, "a small one still fits the rest");
	for (int i = 0; i < 4; i++) {
		const uint8_t *f;
		size_t l;

		cr_assert(net_rxq_peek(&q, &f, &l));
		cr_expect_eq(l, NET_LINK_FRAME_MAX);
		cr_expect(f[0] == i && f[l - 1] == i, "frame %d in order", i);
		net_rxq_pop(&q);
	}
	net_rxq_pop(&q);
	cr_expect_eq(q.count, 0);
	net_rxq_free(&q);
	free(big);
}

Test(net_rxq, frames_wrap_around_and_are_never_split)
{
	struct net_rxq q;
	uint8_t *a = frame_of(40000, 1), *b = frame_of(40000, 2), *c = frame_of(30000, 3);

	cr_assert_eq(net_rxq_init(&q, 100000), 0);
	cr_assert_eq(net_rxq_push(&q, a, 40000), 0);	/* 0 .. 40000 */
	cr_assert_eq(net_rxq_push(&q, b, 40000), 0);	/* 40000 .. 80000 */
	cr_expect_eq(net_rxq_push(&q, c, 30000), -ENOSPC, "20000 at the end, none before the head");
	expect_pop(&q, 40000, 1);
	cr_assert_eq(net_rxq_push(&q, c, 30000), 0, "wraps to the start");
	cr_expect_eq(q.slot[(q.first + 1) % NET_RXQ_SLOTS].off, 0);
	cr_expect_eq(net_rxq_push(&q, a, 10001), -ENOSPC, "the gap before the head is 10000");
	cr_expect_eq(net_rxq_push(&q, a, 10000), 0);
	expect_pop(&q, 40000, 2);
	expect_pop(&q, 30000, 3);
	expect_pop(&q, 10000, 1);
	cr_expect_eq(q.count, 0);
	cr_expect_eq(net_rxq_push(&q, b, 100000), 0, "empty again: the whole buffer");
	net_rxq_free(&q);
	free(a);
	free(b);
	free(c);
}

Test(net_rxq, counts_and_sizes_are_capped)
{
	struct net_rxq q;
	uint8_t f[64] = { 0 };

	cr_assert_eq(net_rxq_init(&q, 1 << 20), 0);
	cr_expect_eq(net_rxq_push(&q, f, 0), -EMSGSIZE, "no empty frame");
	cr_expect_eq(net_rxq_push(&q, f, (1 << 20) + 1), -EMSGSIZE, "never fits");
	for (int i = 0; i < NET_RXQ_SLOTS; i++)
		cr_assert_eq(net_rxq_push(&q, f, sizeof(f)), 0);
	cr_expect_eq(net_rxq_push(&q, f, sizeof(f)), -ENOSPC, "at most NET_RXQ_SLOTS frames");
	net_rxq_clear(&q);
	cr_expect_eq(q.count, 0);
	cr_expect_eq(net_rxq_push(&q, f, sizeof(f)), 0);
	net_rxq_free(&q);
}
