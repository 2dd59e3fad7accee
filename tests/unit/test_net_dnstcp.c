/* DNS over TCP to the virtual nameserver (issue 15 item 2): slirp
 * reassembles the stream, so the filter's decision must hold for exactly
 * the bytes slirp takes in. Crafted segments: data on SYN, out of order,
 * overlap, a re-SYN, urgent data, trailing bytes, a window overrun. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>

#include "devices/netpolicy/net_filter.h"
#include "tests/unit/net_testutil.h"

TestSuite(net_dnstcp, .init = net_setup, .fini = net_teardown);

#define ISN 1000u

/* A guest segment to 10.0.2.3:53 from port 40000. */
static enum net_verdict seg(uint8_t flags, uint32_t seq, const uint8_t *d, size_t n)
{
	uint8_t f[1600], t[1500];

	return run(f, mk(f, "10.0.2.15", "10.0.2.3", IPPROTO_TCP, t,
			 l4_tcp(t, 40000, 53, flags, seq, 1, d, n)));
}

/* slirp's segment to the guest acknowledging @ack with window @win. */
static void slirp_ack(uint8_t flags, uint32_t ackno, uint16_t win)
{
	uint8_t f[1600], t[64];
	size_t len = mk(f, "10.0.2.3", "10.0.2.15", IPPROTO_TCP, t,
			l4_tcp(t, 53, 40000, flags, 0, ackno, NULL, 0));

	f[14 + 20 + 14] = win >> 8; /* the window field, after the checksum was set: */
	f[14 + 20 + 15] = win & 0xff; /* net_filter_inbound does not check it */
	cr_assert_eq(net_filter_inbound(&pol, f, len), NET_PASS);
}

/* Length-prefixed query for @name into @out; returns its length. */
static size_t query(const char *name, uint8_t *out)
{
	uint8_t m[512];
	size_t mlen, flen;

	cr_assert_eq(dns_build_query(7, name, DNS_T_A, m, sizeof(m), &mlen), 0);
	cr_assert_eq(dns_tcp_frame(m, mlen, out, 600, &flen), 0);
	return flen;
}

static void open_conn(void)
{
	allow("example.com");
	cr_assert_eq(seg(0x02, ISN, NULL, 0), NET_PASS, "%s", res.why);
	slirp_ack(0x12, ISN + 1, 65535);
}

Test(net_dnstcp, data_on_syn_is_refused)
{
	uint8_t q[600];
	size_t n = query("leak.evil.example.net", q);

	allow("example.com");
	cr_assert_eq(seg(0x02, ISN, q, n), NET_ANSWER, "SYN with data");
	cr_assert_eq(n_events, 1);
	cr_assert_str_eq(events[0].reason, "DNS over TCP: data on SYN");
	n = query("example.com", q);
	cr_assert_eq(seg(0x02, ISN, q, n), NET_ANSWER, "even an allowed name: no data on SYN");
}

Test(net_dnstcp, in_order_queries_pass_and_wait_for_slirp)
{
	uint8_t q[600];
	size_t n = query("example.com", q);

	allow("example.com");
	cr_assert_eq(seg(0x02, ISN, NULL, 0), NET_PASS);
	cr_assert_eq(seg(0x18, ISN + 1, q, n), NET_DROP, "before slirp's SYN-ACK");
	slirp_ack(0x12, ISN + 1, 65535);
	cr_assert_eq(seg(0x18, ISN + 1, q, n), NET_PASS, "%s", res.why);
	cr_assert_eq(seg(0x18, ISN + 1 + n, q, n), NET_DROP, "slirp has not acknowledged");
	cr_assert_eq(n_events, 0, "waiting is not a denial");
	cr_assert_eq(seg(0x10, ISN + 1, q, n), NET_DROP, "a retransmission slirp lacks");
	slirp_ack(0x10, ISN + 1 + n, 65535);
	cr_assert_eq(seg(0x10, ISN + 1, q, n), NET_PASS, "a retransmission slirp holds");
	cr_assert_eq(seg(0x18, ISN + 1 + n, q, n), NET_PASS, "%s", res.why);
}

Test(net_dnstcp, out_of_order_and_overlap_dropped)
{
	uint8_t q[600], evil[600];
	size_t n = query("example.com", q), e = query("leak.evil.example.net", evil);

	open_conn();
	/* a segment beyond the next byte would sit in slirp's reassembly queue */
	cr_assert_eq(seg(0x18, ISN + 1 + 2, q, n), NET_DROP);
	cr_assert_str_eq(events[0].reason, "DNS over TCP: segment out of order");
	/* overlap: starts inside bytes already checked */
	cr_assert_eq(seg(0x18, ISN + 1, q, n), NET_PASS);
	slirp_ack(0x10, ISN + 1 + 5, 65535); /* slirp took only 5 bytes so far */
	cr_assert_eq(seg(0x18, ISN + 1 + 5, evil, e), NET_DROP, "overlapping rewrite");
	cr_assert_eq(seg(0x18, ISN + 1 + n, q, n), NET_DROP, "slirp is behind: wait");
}

Test(net_dnstcp, resyn_cannot_realign_the_stream)
{
	uint8_t q[600];
	size_t n = query("example.com", q);

	open_conn();
	cr_assert_eq(seg(0x18, ISN + 1, q, n), NET_PASS);
	/* a SYN with a new ISN: the filter restarts, but slirp's ACK decides */
	cr_assert_eq(seg(0x02, 5000, NULL, 0), NET_PASS);
	cr_assert_eq(seg(0x18, 5001, q, n), NET_DROP, "slirp still acknowledges the old stream");
	slirp_ack(0x10, ISN + 1 + n, 65535);
	cr_assert_eq(seg(0x18, 5001, q, n), NET_DROP, "slirp's ACK is elsewhere");
}

Test(net_dnstcp, trailing_bytes_split_and_urgent_reset)
{
	uint8_t q[700], m[512];
	size_t mlen, n;

	open_conn();
	/* a query with bytes after its question: the length prefix covers them */
	cr_assert_eq(dns_build_query(7, "example.com", DNS_T_A, m, sizeof(m), &mlen), 0);
	memcpy(m + mlen, "\0\x1d" "leak", 6);
	cr_assert_eq(dns_tcp_frame(m, mlen + 6, q, sizeof(q), &n), 0);
	cr_assert_eq(seg(0x18, ISN + 1, q, n), NET_ANSWER, "trailing bytes: RST");
	cr_assert_str_eq(events[0].reason, "DNS over TCP: split or malformed query");
	n = query("example.com", q);
	cr_assert_eq(seg(0x18, ISN + 1, q, n - 1), NET_ANSWER, "split query: RST");
	cr_assert_eq(seg(0x38, ISN + 1, q, n), NET_ANSWER, "urgent data: RST");
	cr_assert_eq(seg(0x18, ISN + 1, q, n), NET_PASS, "%s", res.why);
}

Test(net_dnstcp, edns_record_is_not_trailing)
{
	uint8_t m[512], q[600];
	size_t mlen, n;
	static const uint8_t opt[] = {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0};

	open_conn();
	cr_assert_eq(dns_build_query(7, "example.com", DNS_T_A, m, sizeof(m), &mlen), 0);
	m[11] = 1; /* ARCOUNT */
	memcpy(m + mlen, opt, sizeof(opt));
	cr_assert_eq(dns_tcp_frame(m, mlen + sizeof(opt), q, sizeof(q), &n), 0);
	cr_assert_eq(seg(0x18, ISN + 1, q, n), NET_PASS, "%s", res.why);
}

Test(net_dnstcp, beyond_slirps_window_waits_and_after_fin_drops)
{
	uint8_t q[600];
	size_t n = query("example.com", q);

	allow("example.com");
	cr_assert_eq(seg(0x02, ISN, NULL, 0), NET_PASS);
	slirp_ack(0x12, ISN + 1, 10); /* slirp would keep 10 bytes and drop the rest */
	cr_assert_eq(seg(0x18, ISN + 1, q, n), NET_DROP, "longer than slirp's window");
	slirp_ack(0x10, ISN + 1, 4096);
	cr_assert_eq(seg(0x19, ISN + 1, q, n), NET_PASS, "data with FIN");
	slirp_ack(0x10, ISN + 2 + n, 4096);
	cr_assert_eq(seg(0x18, ISN + 2 + n, q, n), NET_DROP, "data after FIN");
}

/* UDP queries are parsed to the end too. */
Test(net_dnstcp, udp_query_with_trailing_bytes_dropped)
{
	uint8_t f[1600], m[512];
	size_t mlen;

	allow("example.com");
	cr_assert_eq(dns_build_query(7, "example.com", DNS_T_A, m, sizeof(m), &mlen), 0);
	m[mlen] = 0xaa;
	cr_assert_eq(run(f, udp(f, "10.0.2.15", "10.0.2.3", 53, m, mlen + 1)), NET_DROP);
	cr_assert_eq(run(f, udp(f, "10.0.2.15", "10.0.2.3", 53, m, mlen)), NET_RESOLVE);
}
