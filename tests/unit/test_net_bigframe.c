/* The policy with frames of the link MTU (devices/net_chan.h: NET_LINK_MTU,
 * 65520): the guest sends and slirp answers IP packets of up to 64 KiB.
 * Every length in such a frame is the guest's: it is checked against the
 * bytes there, and nothing larger than the filter's own buffers is copied. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "devices/net_chan.h"
#include "devices/netpolicy/dns_msg.h"
#include "devices/netpolicy/net_filter.h"
#include "tests/unit/net_testutil.h"

TestSuite(net_bigframe, .init = net_setup, .fini = net_teardown);

#define BIG (NET_LINK_FRAME_MAX + 64)

/* A TCP segment carrying @dlen bytes: an IPv4 packet of 40 + @dlen. */
static size_t tcp_data(uint8_t *f, uint8_t *l4, const char *src, const char *dst, uint16_t sport,
		       uint16_t dport, size_t dlen)
{
	uint8_t *d = calloc(1, dlen);
	size_t len;

	cr_assert(d);
	memset(d, 'x', dlen);
	len = mk(f, src, dst, IPPROTO_TCP, l4, l4_tcp(l4, sport, dport, 0x18, 1001, 5, d, dlen));
	free(d);
	return len;
}

Test(net_bigframe, tcp_segments_of_the_link_mtu_pass_whole_and_a_byte_short_do_not)
{
	uint8_t *f = malloc(BIG), *l4 = malloc(BIG);
	struct net_pkt k;
	const char *why;
	size_t len;

	allow("203.0.113.9:443/tcp");
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.9", 443)), NET_PASS);
	len = tcp_data(f, l4, "10.0.2.15", "203.0.113.9", 40000, 443, NET_LINK_MTU - 40);
	cr_assert_eq(len, NET_LINK_FRAME_MAX);
	cr_expect_eq(run(f, len), NET_PASS, "%s", res.why);
	cr_assert_eq(net_frame_parse(f, len, &k, &why), 0);
	cr_expect_eq(k.l3_len, NET_LINK_MTU);
	cr_expect_eq(k.data_len, NET_LINK_MTU - 40, "every byte of the segment is seen");
	/* the IP header claims one byte more than the frame carries */
	cr_expect_eq(run(f, len - 1), NET_DROP);
	/* and one that claims less than the frame: only what it claims is TCP */
	f[14 + 2] = (uint8_t)((NET_LINK_MTU - 100) >> 8);
	f[14 + 3] = (uint8_t)(NET_LINK_MTU - 100);
	cr_assert_eq(net_frame_parse(f, len, &k, &why), 0);
	cr_expect_eq(k.data_len, NET_LINK_MTU - 140);
	free(f);
	free(l4);
}

Test(net_bigframe, ipv6_payload_length_is_checked_against_the_frame)
{
	uint8_t *f = malloc(BIG), *l4 = malloc(BIG);
	struct net_pkt k;
	const char *why;
	size_t len = tcp_data(f, l4, "fec0::15", "2001:db8::9", 40000, 443, NET_LINK_MTU - 60);

	cr_assert_eq(len, NET_LINK_FRAME_MAX);
	cr_assert_eq(net_frame_parse(f, len, &k, &why), 0, "%s", why);
	cr_expect_eq(k.l3_len, NET_LINK_MTU);
	cr_expect_eq(k.data_len, NET_LINK_MTU - 60);
	cr_expect_neq(net_frame_parse(f, len - 1, &k, &why), 0, "payload beyond the frame");
	free(f);
	free(l4);
}

/* A query for @name with an EDNS OPT record of @rdlen bytes of options. */
static size_t query_with_opt(uint8_t *m, size_t cap, const char *name, size_t rdlen)
{
	size_t mlen;

	cr_assert_eq(dns_build_query(0x4242, name, DNS_T_A, m, cap, &mlen), 0);
	cr_assert_leq(mlen + 11 + rdlen, cap);
	m[11] = 1; /* ARCOUNT */
	memset(m + mlen, 0, 11 + rdlen);
	m[mlen + 2] = 41;				/* TYPE OPT, root owner */
	m[mlen + 3] = 0x10;				/* CLASS: 4096-byte payload */
	m[mlen + 9] = (uint8_t)(rdlen >> 8);
	m[mlen + 10] = (uint8_t)rdlen;
	return mlen + 11 + rdlen;
}

static size_t dns_udp(uint8_t *f, uint8_t *l4, const uint8_t *m, size_t mlen)
{
	return mk(f, "10.0.2.15", "10.0.2.3", IPPROTO_UDP, l4, l4_udp(l4, 5353, 53, m, mlen));
}

Test(net_bigframe, dns_queries_in_datagrams_of_the_link_mtu)
{
	uint8_t *f = malloc(BIG), *l4 = malloc(BIG), *m = malloc(BIG);
	size_t big = NET_LINK_MTU - 28 - 40, mlen;
	struct net_dns_pending pq;

	allow("example.com:443/tcp");
	/* a whole record of 64 KiB after the question: resolved, and only the
	 * question is kept (the answer is rebuilt from it) */
	mlen = query_with_opt(m, BIG, "example.com", big);
	cr_assert_eq(run(f, dns_udp(f, l4, m, mlen)), NET_RESOLVE, "%s", res.why);
	cr_expect_leq(res.dns.q.question_end, sizeof(res.dns.msg));
	pq = res.dns;
	cr_assert_eq(net_filter_dns_fail(&pol, &pq, DNS_RCODE_SERVFAIL, &res), NET_ANSWER);
	cr_expect_leq(res.reply_len, NET_REPLY_MAX);
	/* a blocked name is answered from the question alone */
	mlen = query_with_opt(m, BIG, "x.evil.test", big);
	cr_assert_eq(run(f, dns_udp(f, l4, m, mlen)), NET_ANSWER);
	cr_expect_leq(res.reply_len, NET_REPLY_MAX);
	cr_expect_eq(res.reply[14 + 20 + 8 + 3] & 0xf, DNS_RCODE_NXDOMAIN);
	/* the record's length claims one byte more than the datagram holds */
	m[mlen - big - 2] = (uint8_t)((big + 1) >> 8);
	m[mlen - big - 1] = (uint8_t)(big + 1);
	cr_expect_eq(run(f, dns_udp(f, l4, m, mlen)), NET_DROP, "malformed");
	/* 64 KiB of junk after an allowed query: trailing bytes are an error */
	cr_assert_eq(dns_build_query(1, "example.com", DNS_T_A, m, BIG, &mlen), 0);
	memset(m + mlen, 'A', big);
	cr_expect_eq(run(f, dns_udp(f, l4, m, mlen + big)), NET_DROP, "%s", res.why);
	free(f);
	free(l4);
	free(m);
}

/* What slirp sends the guest at the link MTU goes through net_filter_inbound:
 * a DNS-over-TCP answer of that size is read, one claiming more is not. */
Test(net_bigframe, inbound_frames_of_the_link_mtu)
{
	uint8_t *f = malloc(BIG), *l4 = malloc(BIG), *d = calloc(1, BIG);
	size_t dlen = NET_LINK_MTU - 40;

	cr_assert(f && l4 && d);
	d[0] = 0xff; /* a DNS-over-TCP length of 65535: more than the segment holds */
	d[1] = 0xff;
	cr_expect_eq(net_filter_inbound(&pol, f,
					mk(f, "10.0.2.3", "10.0.2.15", IPPROTO_TCP, l4,
					   l4_tcp(l4, 53, 40000, 0x18, 5, 1001, d, dlen))),
		     NET_PASS);
	cr_expect_eq(net_filter_inbound(&pol, f, tcp_data(f, l4, "203.0.113.9", "10.0.2.15", 443,
							    40000, dlen)),
		     NET_PASS);
	cr_expect_eq(pol.pins.n, 0, "nothing pinned");
	free(f);
	free(l4);
	free(d);
}
