/* DNS message parser and builder: hostile inputs and round trips. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "devices/netpolicy/dns_msg.h"

static size_t query(const char *name, uint16_t qtype, uint8_t *buf)
{
	size_t len;

	cr_assert_eq(dns_build_query(0x1234, name, qtype, buf, 512, &len), 0);
	return len;
}

Test(net_dns, query_round_trip)
{
	uint8_t buf[512];
	size_t len = query("WWW.Example.com", DNS_T_AAAA, buf);
	struct dns_query q;

	cr_assert_eq(dns_parse_query(buf, len, &q), 0);
	cr_assert_eq(q.id, 0x1234);
	cr_assert_str_eq(q.name, "www.example.com");
	cr_assert_eq(q.qtype, DNS_T_AAAA);
	cr_assert_eq(q.qclass, DNS_C_IN);
	cr_assert_eq(q.question_end, len);
	cr_assert_eq(q.opcode, 0);
}

Test(net_dns, truncated_queries_fail)
{
	uint8_t buf[512];
	size_t len = query("a.example.com", DNS_T_A, buf);
	struct dns_query q;

	for (size_t l = 0; l < len; l++)
		cr_assert_neq(dns_parse_query(buf, l, &q), 0, "accepted %zu of %zu bytes", l, len);
}

Test(net_dns, rejects_responses_and_multi_question)
{
	uint8_t buf[512];
	size_t len = query("example.com", DNS_T_A, buf);
	struct dns_query q;

	buf[2] |= 0x80; /* QR */
	cr_assert_eq(dns_parse_query(buf, len, &q), -EPROTO);
	buf[2] &= 0x7f;
	buf[5] = 2; /* QDCOUNT */
	cr_assert_eq(dns_parse_query(buf, len, &q), -EPROTO);
	buf[5] = 1;
	buf[7] = 200; /* ANCOUNT above the cap */
	cr_assert_eq(dns_parse_query(buf, len, &q), -EINVAL);
}

Test(net_dns, compression_pointer_loops_and_forward_pointers)
{
	/* header, then a name that is a pointer to itself */
	uint8_t self[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1};
	/* a label then a pointer back to offset 12: a two-step loop */
	uint8_t loop[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 0xc0, 12, 0, 1, 0, 1};
	/* forward pointer to a valid-looking name later in the message */
	uint8_t fwd[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 18, 0, 1, 0, 1, 1, 'a', 0};
	/* pointer cut in half at the end */
	uint8_t cut[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0};
	/* reserved label type 0x40 */
	uint8_t ext[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x41, 'a', 0, 0, 1, 0, 1};
	struct dns_query q;

	cr_assert_eq(dns_parse_query(self, sizeof(self), &q), -EINVAL);
	cr_assert_eq(dns_parse_query(loop, sizeof(loop), &q), -EINVAL);
	cr_assert_eq(dns_parse_query(fwd, sizeof(fwd), &q), -EINVAL);
	cr_assert_eq(dns_parse_query(cut, sizeof(cut), &q), -EINVAL);
	cr_assert_eq(dns_parse_query(ext, sizeof(ext), &q), -EINVAL);
}

Test(net_dns, backward_pointer_is_followed)
{
	/* answer-like: question "example.com", then an owner "www" + pointer to 12 */
	uint8_t m[64] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
	const uint8_t name[] = {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0};
	char out[NET_NAME_MAX + 1];
	size_t next, p = 12;

	memcpy(m + p, name, sizeof(name));
	p += sizeof(name);
	m[p++] = 3;
	memcpy(m + p, "www", 3);
	p += 3;
	m[p++] = 0xc0;
	m[p++] = 12;
	cr_assert_eq(dns_read_name(m, p, 12 + sizeof(name), out, sizeof(out), &next), 0);
	cr_assert_str_eq(out, "www.example.com");
	cr_assert_eq(next, p);
}

Test(net_dns, oversized_names)
{
	uint8_t m[600] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t p = 12;
	struct dns_query q;

	/* 5 labels of 63 = 320 octets on the wire: over the 255 limit */
	for (int i = 0; i < 5; i++) {
		m[p++] = 63;
		memset(m + p, 'a', 63);
		p += 63;
	}
	m[p++] = 0;
	m[p++] = 0;
	m[p++] = 1;
	m[p++] = 0;
	m[p++] = 1;
	cr_assert_eq(dns_parse_query(m, p, &q), -EINVAL);
	/* a label length of 64+ is not a plain label */
	m[12] = 64;
	cr_assert_eq(dns_parse_query(m, p, &q), -EINVAL);
	/* and a name too long to build */
	char big[300];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	size_t len;
	cr_assert_eq(dns_build_query(1, big, DNS_T_A, m, sizeof(m), &len), -EINVAL);
}

Test(net_dns, error_reply_echoes_question)
{
	uint8_t buf[512], out[512];
	size_t len = query("blocked.example.org", DNS_T_A, buf), olen;
	struct dns_query q;

	buf[2] |= 0x01; /* RD */
	cr_assert_eq(dns_parse_query(buf, len, &q), 0);
	cr_assert_eq(dns_build_error(buf, &q, DNS_RCODE_NXDOMAIN, out, sizeof(out), &olen), 0);
	cr_assert_eq(olen, len);
	cr_assert_eq(out[0], 0x12);
	cr_assert_eq(out[1], 0x34);
	cr_assert_eq(out[2] & 0x80, 0x80, "QR");
	cr_assert_eq(out[2] & 0x01, 0x01, "RD copied");
	cr_assert_eq(out[3] & 0x0f, DNS_RCODE_NXDOMAIN);
	cr_assert_eq(out[5], 1);
	cr_assert_eq(out[7], 0);
	cr_assert_eq(memcmp(out + 12, buf + 12, len - 12), 0);
}

Test(net_dns, answer_round_trip_and_qtype_filter)
{
	uint8_t buf[512], out[512];
	size_t len = query("www.example.com", DNS_T_A, buf), olen;
	struct dns_query q;
	struct dns_addr_rec recs[3];
	struct dns_answer a;

	memset(recs, 0, sizeof(recs));
	inet_pton(AF_INET, "203.0.113.5", recs[0].addr.b);
	recs[0].addr.family = AF_INET;
	recs[0].ttl = 60;
	inet_pton(AF_INET6, "2001:db8::5", recs[1].addr.b);
	recs[1].addr.family = AF_INET6;
	inet_pton(AF_INET, "203.0.113.6", recs[2].addr.b);
	recs[2].addr.family = AF_INET;
	recs[2].ttl = 0x80000000u;
	cr_assert_eq(dns_parse_query(buf, len, &q), 0);
	cr_assert_eq(dns_build_answer(buf, &q, recs, 3, out, sizeof(out), &olen), 0);
	cr_assert_eq(dns_parse_answer(out, olen, &a), 0);
	cr_assert_str_eq(a.qname, "www.example.com");
	cr_assert_eq(a.rcode, 0);
	cr_assert_eq(a.n_addrs, 2, "the AAAA record must not answer an A query");
	cr_assert_eq(memcmp(a.addrs[0].addr.b, recs[0].addr.b, 4), 0);
	cr_assert_eq(a.addrs[0].ttl, 60);
	cr_assert_eq(a.addrs[1].ttl, 0, "RFC 2181 §8: TTL with MSB set is 0");
}

/* Hand-built response: question a.example.com, answers:
 *   evil.example.net A 198.51.100.66   (unrelated owner: ignored)
 *   b.example.com    A 203.0.113.2     (CNAME target, listed before the CNAME)
 *   a.example.com    CNAME b.example.com */
Test(net_dns, answer_follows_cname_chain_only)
{
	uint8_t m[300] = {0xab, 0xcd, 0x81, 0x80, 0, 1, 0, 3, 0, 0, 0, 0};
	size_t p = 12;
	static const uint8_t qn[] = {1,	  'a', 7, 'e', 'x', 'a', 'm', 'p',
				     'l', 'e', 3, 'c', 'o', 'm', 0};
	static const uint8_t evil[] = {4,   'e', 'v', 'i', 'l', 7,   'e', 'x', 'a',
				       'm', 'p', 'l', 'e', 3,	'n', 'e', 't', 0};
	struct dns_answer a;

	memcpy(m + p, qn, sizeof(qn));
	p += sizeof(qn);
	memcpy(m + p, "\0\1\0\1", 4);
	p += 4;
	/* evil.example.net A */
	memcpy(m + p, evil, sizeof(evil));
	p += sizeof(evil);
	memcpy(m + p, "\0\1\0\1\0\0\0\x3c\0\4\xc6\x33\x64\x42", 14);
	p += 14;
	/* b.example.com A: "b" + pointer to "example.com" at 14 */
	size_t b_off = p;
	memcpy(m + p, "\1b\xc0\x0e", 4);
	p += 4;
	memcpy(m + p, "\0\1\0\1\0\0\0\x3c\0\4\xcb\0\x71\2", 14);
	p += 14;
	/* a.example.com CNAME -> pointer to b.example.com */
	memcpy(m + p, "\xc0\x0c\0\5\0\1\0\0\0\x3c\0\2", 12);
	p += 12;
	m[p++] = 0xc0;
	m[p++] = (uint8_t)b_off;
	cr_assert_eq(dns_parse_answer(m, p, &a), 0);
	cr_assert_eq(a.id, 0xabcd);
	cr_assert_eq(a.n_addrs, 1);
	cr_assert_eq(a.addrs[0].addr.b[0], 203);
	cr_assert_eq(a.addrs[0].addr.b[3], 2);
	/* truncated anywhere: never a crash, and never success with missing records */
	for (size_t l = 0; l < p; l++)
		cr_assert_neq(dns_parse_answer(m, l, &a), 0, "accepted %zu of %zu bytes", l, p);
}

Test(net_dns, tcp_framing)
{
	uint8_t msg[512], framed[600];
	const uint8_t *m;
	size_t mlen = query("example.com", DNS_T_A, msg), flen, got;

	cr_assert_eq(dns_tcp_frame(msg, mlen, framed, sizeof(framed), &flen), 0);
	cr_assert_eq(flen, mlen + 2);
	cr_assert_eq(dns_tcp_unframe(framed, 1, &m, &got), 0, "need more");
	cr_assert_eq(dns_tcp_unframe(framed, flen - 1, &m, &got), 0, "need more");
	cr_assert_eq(dns_tcp_unframe(framed, flen, &m, &got), (int)flen);
	cr_assert_eq(got, mlen);
	cr_assert_eq(memcmp(m, msg, mlen), 0);
	framed[0] = framed[1] = 0;
	cr_assert_eq(dns_tcp_unframe(framed, flen, &m, &got), -EINVAL);
	cr_assert_eq(dns_tcp_frame(msg, mlen, framed, mlen + 1, &flen), -ENOSPC);
}

/* A question compressed against the query's own header (found by dns_fuzz):
 * the reply must carry a clean, re-encoded question. */
Test(net_dns, compressed_question_is_reencoded)
{
	uint8_t m[] = {
	    0, 0, 0x01, 0, 0, 1,   0,	 0,
	    0, 0, 0,	0, 1, 'A', 0xc0, 3, /* "A" + pointer to header byte 3 (0x00: root) */
	    0, 1, 0,	1};
	uint8_t out[512];
	size_t olen;
	struct dns_query q;
	struct dns_answer a;

	cr_assert_eq(dns_parse_query(m, sizeof(m), &q), 0);
	cr_assert_str_eq(q.name, "a");
	cr_assert(q.compressed);
	cr_assert_eq(dns_build_error(m, &q, DNS_RCODE_NXDOMAIN, out, sizeof(out), &olen), 0);
	cr_assert_eq(dns_parse_answer(out, olen, &a), 0);
	cr_assert_str_eq(a.qname, "a");
	cr_assert_eq(olen, 12 + 3 + 4);
	cr_assert_eq(a.rcode, DNS_RCODE_NXDOMAIN);
}
