/* The VMM <-> network helper wire (devices/net_chan.h): batches of records,
 * and a peer's lengths never trusted. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/net_chan.h"

struct seen {
	int n;
	uint32_t type[8];
	size_t len[8];
	uint8_t first[8];
};

static void collect(void *opaque, uint32_t type, const uint8_t *p, size_t len)
{
	struct seen *s = opaque;

	if (s->n < 8) {
		s->type[s->n] = type;
		s->len[s->n] = len;
		s->first[s->n] = len ? p[0] : 0;
	}
	s->n++;
}

Test(net_chan, a_batch_round_trips)
{
	struct nc_buf m = { malloc(NC_MSG_MAX), 0 };
	uint8_t frame[1514], hdr[6] = { 7 };
	struct seen s = { 0 };

	memset(frame, 0xab, sizeof(frame));
	cr_assert_eq(nc_put(&m, NC_FRAME, NULL, 0, frame, sizeof(frame)), 0);
	cr_assert_eq(nc_put(&m, NC_DNS_QUERY, hdr, sizeof(hdr), "a.test", 6), 0);
	cr_assert_eq(nc_put(&m, NC_FRAME, NULL, 0, NULL, 0), 0);
	cr_assert_eq(nc_parse(m.b, m.len, collect, &s), 0);
	cr_assert_eq(s.n, 3);
	cr_expect_eq(s.type[0], NC_FRAME);
	cr_expect_eq(s.len[0], sizeof(frame));
	cr_expect_eq(s.first[0], 0xab);
	cr_expect_eq(s.type[1], NC_DNS_QUERY);
	cr_expect_eq(s.len[1], 12);
	cr_expect_eq(s.first[1], 7);
	cr_expect_eq(s.len[2], 0);
	free(m.b);
}

Test(net_chan, a_full_message_refuses_and_keeps_what_it_has)
{
	struct nc_buf m = { malloc(NC_MSG_MAX), 0 };
	uint8_t *big = calloc(1, NC_FRAME_MAX);
	int n = 0;

	while (nc_put(&m, NC_FRAME, NULL, 0, big, NC_FRAME_MAX) == 0)
		n++;
	/* a full batch and then one largest frame always fit */
	cr_expect_geq((size_t)n * (NC_FRAME_MAX + NC_REC_HDR), NC_BATCH);
	cr_expect_leq(m.len, NC_MSG_MAX);
	cr_expect_eq(nc_put(&m, NC_FRAME, NULL, 0, big, NC_MSG_MAX), -ENOSPC);
	free(big);
	free(m.b);
}

Test(net_chan, a_record_overrunning_the_message_is_refused)
{
	uint8_t msg[64] = { 0 };
	uint32_t hdr[2] = { NC_FRAME, 4 };
	struct seen s = { 0 };

	memcpy(msg, hdr, 8);
	hdr[1] = 0xffffffffu;		/* the second record claims 4 GiB */
	memcpy(msg + 12, hdr, 8);
	cr_expect_eq(nc_parse(msg, 20, collect, &s), -EPROTO);
	cr_expect_eq(s.n, 1, "the record before it was delivered");
	s.n = 0;
	cr_expect_eq(nc_parse(msg, 15, collect, &s), -EPROTO, "a torn header");
	cr_expect_eq(nc_parse(msg, 0, collect, &s), 0);
}
