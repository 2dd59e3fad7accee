/* The frame classifier and the policy decision on hand-built frames. All
 * checksums of reply frames are verified here with an independent sum. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/netpolicy/net_filter.h"

#include "tests/unit/net_testutil.h"

TestSuite(net_filter, .init = net_setup, .fini = net_teardown);

Test(net_filter, allowed_syn_passes_and_connection_is_tracked)
{
	uint8_t f[1600];

	allow("203.0.113.0/24:443/tcp");
	cr_assert_eq(run(f, ack(f, "10.0.2.15", "203.0.113.9", 443)), NET_DROP,
		     "ACK without an admitted SYN");
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.9", 443)), NET_PASS, "%s", res.why);
	cr_assert_eq(run(f, ack(f, "10.0.2.15", "203.0.113.9", 443)), NET_PASS, "%s", res.why);
	cr_assert_eq(n_events, 1, "only the stray ACK is an event");
}

Test(net_filter, denied_syn_gets_wellformed_rst)
{
	uint8_t f[1600], proto;
	size_t off;

	cr_assert_eq(run(f, syn(f, "10.0.2.15", "198.51.100.20", 80)), NET_ANSWER);
	off = verify(res.reply, res.reply_len, &proto);
	cr_assert_eq(proto, IPPROTO_TCP);
	const uint8_t *ip = res.reply + 14, *t = res.reply + off;
	uint8_t a[4];
	inet_pton(AF_INET, "198.51.100.20", a);
	cr_assert_eq(memcmp(ip + 12, a, 4), 0, "RST must come from the destination");
	inet_pton(AF_INET, "10.0.2.15", a);
	cr_assert_eq(memcmp(ip + 16, a, 4), 0);
	cr_assert_eq(t[0] << 8 | t[1], 80);
	cr_assert_eq(t[2] << 8 | t[3], 40000);
	cr_assert_eq(t[13], 0x14, "RST+ACK");
	cr_assert_eq(rd32(t + 4), 0);
	cr_assert_eq(rd32(t + 8), 1001, "ACK = SEG.SEQ + 1 for the SYN");
	cr_assert_eq(n_events, 1);
	cr_assert_str_eq(events[0].proto, "tcp");
	cr_assert_eq(events[0].port, 80);
	cr_assert_str_eq(events[0].reason, "not-allowlisted");
}

Test(net_filter, denied_udp_gets_icmp_admin_prohibited)
{
	uint8_t f[1600], proto, data[4] = {1, 2, 3, 4};
	size_t off, len = udp(f, "10.0.2.15", "198.51.100.20", 123, data, 4);

	cr_assert_eq(run(f, len), NET_ANSWER);
	off = verify(res.reply, res.reply_len, &proto);
	cr_assert_eq(proto, IPPROTO_ICMP);
	cr_assert_eq(res.reply[off], 3);
	cr_assert_eq(res.reply[off + 1], 13);
	cr_assert_eq(memcmp(res.reply + off + 8, f + 14, len - 14), 0, "quotes the datagram");
}

Test(net_filter, ipv6_denied_by_default)
{
	uint8_t f[1600], proto, data[2] = {0};
	size_t off;

	cr_assert_eq(run(f, syn(f, "fec0::15", "2001:db8::80", 443)), NET_ANSWER);
	off = verify(res.reply, res.reply_len, &proto);
	cr_assert_eq(proto, IPPROTO_TCP);
	cr_assert_eq(res.reply[off + 13], 0x14);
	cr_assert_eq(run(f, udp(f, "fec0::15", "2001:db8::80", 443, data, 2)), NET_ANSWER);
	off = verify(res.reply, res.reply_len, &proto);
	cr_assert_eq(proto, IPPROTO_ICMPV6);
	cr_assert_eq(res.reply[off], 1, "destination unreachable");
	cr_assert_eq(res.reply[off + 1], 1, "administratively prohibited");
	allow("[2001:db8::]/32:443/tcp");
	cr_assert_eq(run(f, syn(f, "fec0::15", "2001:db8::80", 443)), NET_PASS);
}

Test(net_filter, host_loopback_needs_an_explicit_rule)
{
	uint8_t f[1600];

	allow("10.0.0.0/8");
	allow("0.0.0.0/0:8080/tcp");
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.2", 8080)), NET_ANSWER,
		     "a broad range must not open the host");
	cr_assert_str_eq(events[0].reason, "host-loopback");
	cr_assert_eq(run(f, syn(f, "fec0::15", "fec0::2", 8080)), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.3", 8080)), NET_ANSWER,
		     "the DNS address is not a way to the host");
	allow("host-loopback:8080/tcp");
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.2", 8080)), NET_PASS);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.2", 8081)), NET_ANSWER);
	allow("10.0.2.2:9000");
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.2", 9000)), NET_PASS);
	char err[100];
	cr_assert_eq(net_policy_deny(&pol, "host-loopback:9000", err, sizeof(err)), 0);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.2", 9000)), NET_ANSWER, "deny wins");
}

static size_t dns_q(uint8_t *f, const char *src, const char *dst, const char *name, uint16_t qtype)
{
	uint8_t m[512];
	size_t mlen;

	cr_assert_eq(dns_build_query(0x4242, name, qtype, m, sizeof(m), &mlen), 0);
	return udp(f, src, dst, 53, m, mlen);
}

static const uint8_t *reply_dns(size_t *mlen)
{
	uint8_t proto;
	size_t off = verify(res.reply, res.reply_len, &proto);

	cr_assert_eq(proto, IPPROTO_UDP);
	cr_assert_eq(res.reply[off] << 8 | res.reply[off + 1], 53);
	*mlen = res.reply_len - off - 8;
	return res.reply + off + 8;
}

Test(net_filter, blocked_name_gets_local_nxdomain)
{
	uint8_t f[1600];
	size_t mlen;
	const uint8_t *m;

	allow("*.example.com:443/tcp");
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "x1.evil.example.org", DNS_T_TXT)),
		     NET_ANSWER);
	m = reply_dns(&mlen);
	cr_assert_eq(m[0] << 8 | m[1], 0x4242);
	cr_assert_eq(m[3] & 0xf, DNS_RCODE_NXDOMAIN);
	cr_assert_eq(n_events, 1);
	cr_assert_str_eq(events[0].name, "x1.evil.example.org");
	cr_assert_str_eq(events[0].proto, "dns");
	/* the bare zone is not matched by *.example.com */
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "example.com", DNS_T_A)), NET_ANSWER);
	cr_assert_eq(reply_dns(&mlen)[3] & 0xf, DNS_RCODE_NXDOMAIN);
}

Test(net_filter, allowed_name_resolves_pins_and_guards_rebinding)
{
	uint8_t f[1600];
	size_t mlen;
	const uint8_t *m;
	struct dns_addr_rec recs[2];
	struct net_dns_pending pend;
	struct dns_answer a;

	allow("*.example.com:443/tcp");
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "api.Example.com", DNS_T_A)),
		     NET_RESOLVE);
	cr_assert_str_eq(res.dns.q.name, "api.example.com");
	pend = res.dns;
	memset(recs, 0, sizeof(recs));
	cr_assert_eq(net_addr_parse("203.0.113.50", &recs[0].addr), 0);
	recs[0].ttl = 3600;
	cr_assert_eq(net_addr_parse("192.168.1.1", &recs[1].addr), 0);
	recs[1].ttl = 60;
	cr_assert_eq(net_filter_dns_answer(&pol, &pend, recs, 2, &res), NET_ANSWER);
	m = reply_dns(&mlen);
	cr_assert_eq(dns_parse_answer(m, mlen, &a), 0);
	cr_assert_eq(a.n_addrs, 1, "the private address must be stripped");
	cr_assert_eq(a.addrs[0].ttl, 300, "answer TTL capped to the pin lifetime");
	cr_assert_eq(n_events, 1);
	cr_assert(strstr(events[0].reason, "rebinding"));
	/* the pinned address admits the rule's port only */
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.50", 443)), NET_PASS, "%s", res.why);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.50", 80)), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "192.168.1.1", 443)), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.51", 443)), NET_ANSWER);
	/* the pin expires with its (capped) TTL */
	fake_now += 301 * 1000;
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.50", 443)), NET_ANSWER);
}

Test(net_filter, dns_response_path_and_failures)
{
	uint8_t f[1600], up[512];
	size_t mlen, ulen;
	struct net_dns_pending pend;
	struct dns_query q;

	allow("example.com");
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "example.com", DNS_T_A)),
		     NET_RESOLVE);
	pend = res.dns;
	/* upstream NXDOMAIN is passed on */
	cr_assert_eq(dns_parse_query(pend.msg, pend.q.question_end, &q), 0);
	cr_assert_eq(dns_build_error(pend.msg, &q, DNS_RCODE_NXDOMAIN, up, sizeof(up), &ulen), 0);
	cr_assert_eq(net_filter_dns_response(&pol, &pend, up, ulen, &res), NET_ANSWER);
	cr_assert_eq(reply_dns(&mlen)[3] & 0xf, DNS_RCODE_NXDOMAIN);
	/* garbage from upstream becomes SERVFAIL */
	cr_assert_eq(net_filter_dns_response(&pol, &pend, up, 5, &res), NET_ANSWER);
	cr_assert_eq(reply_dns(&mlen)[3] & 0xf, DNS_RCODE_SERVFAIL);
}

Test(net_filter, dns_to_other_resolvers_denied)
{
	uint8_t f[1600];

	allow("198.51.100.53");
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "198.51.100.53", "example.com", DNS_T_A)),
		     NET_ANSWER);
	cr_assert(strstr(events[0].reason, "resolver"));
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "198.51.100.53", 53)), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "198.51.100.53", 853)), NET_PASS);
}

Test(net_filter, dns_over_tcp_blocked_name_reset)
{
	uint8_t f[1600], t[600], m[512], framed[600];
	size_t mlen, flen, len;

	allow("example.com");
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.3", 53)), NET_PASS);
	/* slirp's SYN-ACK: the filter passes data only up to what slirp holds */
	len = mk(f, "10.0.2.3", "10.0.2.15", IPPROTO_TCP, t,
		 l4_tcp(t, 53, 40000, 0x12, 4, 1001, NULL, 0));
	cr_assert_eq(net_filter_inbound(&pol, f, len), NET_PASS);
	cr_assert_eq(dns_build_query(7, "leak.evil.example.net", DNS_T_A, m, sizeof(m), &mlen), 0);
	cr_assert_eq(dns_tcp_frame(m, mlen, framed, sizeof(framed), &flen), 0);
	len = mk(f, "10.0.2.15", "10.0.2.3", IPPROTO_TCP, t,
			l4_tcp(t, 40000, 53, 0x18, 1001, 5, framed, flen));
	cr_assert_eq(run(f, len), NET_ANSWER);
	uint8_t proto;
	size_t off = verify(res.reply, res.reply_len, &proto);
	cr_assert_eq(res.reply[off + 13], 0x04, "plain RST with SEQ = SEG.ACK");
	cr_assert_eq(rd32(res.reply + off + 4), 5);
	/* an allowed name is carried; a split message is not */
	cr_assert_eq(dns_build_query(8, "example.com", DNS_T_A, m, sizeof(m), &mlen), 0);
	cr_assert_eq(dns_tcp_frame(m, mlen, framed, sizeof(framed), &flen), 0);
	len = mk(f, "10.0.2.15", "10.0.2.3", IPPROTO_TCP, t,
		 l4_tcp(t, 40000, 53, 0x18, 1001, 5, framed, flen));
	cr_assert_eq(run(f, len), NET_PASS);
	len = mk(f, "10.0.2.3", "10.0.2.15", IPPROTO_TCP, t,
		 l4_tcp(t, 53, 40000, 0x10, 5, 1001 + (uint32_t)flen, NULL, 0));
	cr_assert_eq(net_filter_inbound(&pol, f, len), NET_PASS);
	len = mk(f, "10.0.2.15", "10.0.2.3", IPPROTO_TCP, t,
		 l4_tcp(t, 40000, 53, 0x18, 1001 + (uint32_t)flen, 5, framed, flen - 3));
	cr_assert_eq(run(f, len), NET_ANSWER);
}

Test(net_filter, mode_none_and_open)
{
	uint8_t f[1600];
	size_t mlen;
	char err[100];

	net_policy_set_mode(&pol, NET_MODE_NONE);
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "example.com", DNS_T_A)), NET_ANSWER);
	cr_assert_eq(reply_dns(&mlen)[3] & 0xf, DNS_RCODE_REFUSED);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.3", 53)), NET_ANSWER);
	net_policy_set_mode(&pol, NET_MODE_OPEN);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "198.51.100.1", 22)), NET_PASS);
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "any.example.net", DNS_T_A)),
		     NET_RESOLVE);
	cr_assert_eq(net_policy_deny(&pol, "198.51.100.0/24", err, sizeof(err)), 0);
	cr_assert_eq(net_policy_deny(&pol, "*.example.net", err, sizeof(err)), 0);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "198.51.100.1", 22)), NET_ANSWER);
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "any.example.net", DNS_T_A)),
		     NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "10.0.2.2", 22)), NET_ANSWER, "host stays closed");
	/* crafted destinations that would reach the host or its LAN */
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "127.0.0.1", 22)), NET_ANSWER);
	cr_assert_str_eq(events[n_events - 1].reason, "loopback destination");
	cr_assert_eq(run(f, syn(f, "fec0::15", "::ffff:127.0.0.1", 22)), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "fec0::15", "::1", 22)), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "0.0.0.0", 22)), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "169.254.169.254", 80)), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "192.168.1.10", 80)), NET_ANSWER);
	cr_assert_eq(net_policy_allow(&pol, "192.168.1.0/24:80/tcp", err, sizeof(err)), 0);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "192.168.1.10", 80)), NET_PASS);
	cr_assert_eq(net_policy_allow(&pol, "0.0.0.0/0", err, sizeof(err)), 0);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "127.0.0.1", 22)), NET_ANSWER, "never");
}

Test(net_filter, deny_at_run_time_revokes_established)
{
	uint8_t f[1600];
	char err[100];

	allow("203.0.113.0/24");
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.9", 443)), NET_PASS);
	cr_assert_eq(run(f, ack(f, "10.0.2.15", "203.0.113.9", 443)), NET_PASS);
	cr_assert_eq(net_policy_deny(&pol, "203.0.113.9", err, sizeof(err)), 0);
	cr_assert_eq(run(f, ack(f, "10.0.2.15", "203.0.113.9", 443)), NET_ANSWER);
	cr_assert_eq(run(f, ack(f, "10.0.2.15", "203.0.113.9", 443)), NET_DROP, "forgotten");
	cr_assert_eq(net_policy_remove(&pol, "203.0.113.9"), 0);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.9", 443)), NET_PASS);
}

Test(net_filter, icmp_echo)
{
	uint8_t f[1600], e[16] = {8, 0, 0, 0, 0, 1, 0, 1}, proto;

	cr_assert_eq(run(f, mk(f, "10.0.2.15", "203.0.113.1", IPPROTO_ICMP, e, 16)), NET_ANSWER);
	verify(res.reply, res.reply_len, &proto);
	allow("203.0.113.1:443/tcp");
	cr_assert_eq(run(f, mk(f, "10.0.2.15", "203.0.113.1", IPPROTO_ICMP, e, 16)), NET_ANSWER,
		     "a port rule does not admit ping");
	allow("203.0.113.1");
	cr_assert_eq(run(f, mk(f, "10.0.2.15", "203.0.113.1", IPPROTO_ICMP, e, 16)), NET_PASS);
	e[0] = 128;
	cr_assert_eq(run(f, mk(f, "fec0::15", "2001:db8::1", IPPROTO_ICMPV6, e, 16)), NET_ANSWER);
	verify(res.reply, res.reply_len, &proto);
	cr_assert_eq(proto, IPPROTO_ICMPV6);
}

Test(net_filter, link_traffic_and_junk)
{
	uint8_t f[1600], d[300] = {0}, ns[24] = {135};

	memset(f, 0, 60);
	memcpy(f + 6, guest_mac, 6);
	f[12] = 0x08, f[13] = 0x06;
	cr_assert_eq(run(f, 42), NET_PASS, "ARP");
	cr_assert_eq(run(f, udp(f, "0.0.0.0", "255.255.255.255", 67, d, 300)), NET_DROP,
		     "sport 5353 is not DHCP");
	uint8_t u[400];
	size_t len = mk(f, "0.0.0.0", "255.255.255.255", IPPROTO_UDP, u, l4_udp(u, 68, 67, d, 300));
	cr_assert_eq(run(f, len), NET_PASS, "DHCP");
	cr_assert_eq(run(f, mk(f, "fe80::15", "ff02::1:ff00:2", IPPROTO_ICMPV6, ns, 24)), NET_PASS,
		     "neighbour solicitation");
	cr_assert_eq(run(f, 10), NET_DROP);
	f[12] = 0x81, f[13] = 0x00;
	cr_assert_eq(run(f, 60), NET_DROP, "VLAN tag");
}

Test(net_filter, malformed_and_fragmented_ip_dropped)
{
	uint8_t f[1600];
	size_t len = syn(f, "10.0.2.15", "203.0.113.9", 443);

	allow("203.0.113.9");
	f[14 + 6] = 0x20; /* MF */
	cr_assert_eq(run(f, len), NET_DROP);
	f[14 + 6] = 0x00;
	f[14 + 7] = 0x10; /* offset */
	cr_assert_eq(run(f, len), NET_DROP);
	f[14 + 7] = 0;
	f[14 + 3] += 1; /* total length beyond the frame */
	cr_assert_eq(run(f, len), NET_DROP);
	f[14 + 3] -= 1;
	f[14] = 0x44; /* IHL 16 bytes */
	cr_assert_eq(run(f, len), NET_DROP);
	f[14] = 0x45;
	f[14 + 20 + 12] = 0xf0; /* TCP data offset 60 > segment */
	cr_assert_eq(run(f, len), NET_DROP);
	f[14 + 20 + 12] = 0x50;
	cr_assert_eq(run(f, len), NET_PASS);
	for (size_t l = 0; l < len; l++)
		cr_assert_neq(run(f, l), NET_PASS, "truncated to %zu", l);
}

/* IPv6 with hop-by-hop + destination options before TCP; then a chain too long. */
Test(net_filter, ipv6_extension_headers)
{
	uint8_t f[1600], l[200], t[64];
	size_t tl = l4_tcp(t, 40000, 443, 0x02, 1, 0, NULL, 0), len;

	allow("[2001:db8::]/32:443/tcp");
	memset(l, 0, sizeof(l));
	l[0] = 60; /* HBH -> dest opts */
	l[8] = 6;  /* dest opts -> TCP */
	memcpy(l + 16, t, tl);
	len = mk(f, "fec0::15", "2001:db8::1", 0, l, 16 + tl);
	cr_assert_eq(run(f, len), NET_PASS, "%s", res.why);
	for (int i = 0; i < 6; i++)
		l[i * 8] = 60;
	l[0] = 60;
	len = mk(f, "fec0::15", "2001:db8::1", 60, l, 6 * 8 + 8);
	cr_assert_eq(run(f, len), NET_DROP);
	l[0] = 44; /* fragment header */
	len = mk(f, "fec0::15", "2001:db8::1", 60, l, 6 * 8 + 8);
	cr_assert_eq(run(f, len), NET_DROP);
	l[0] = 6;
	len = mk(f, "fec0::15", "2001:db8::1", 43, l, 8 + tl); /* routing header */
	cr_assert_eq(run(f, len), NET_DROP);
	len = mk(f, "fec0::15", "2001:db8::1", 0, l, 7); /* truncated hop-by-hop */
	cr_assert_eq(run(f, len), NET_DROP);
}

Test(net_filter, events_are_rate_limited_with_summary)
{
	uint8_t f[1600];
	char line[1024];

	pol.cfg.ev_rate = 1;
	pol.cfg.ev_burst = 2;
	pol.tokens_milli = 2000;
	for (int i = 0; i < 10; i++)
		run(f, syn(f, "10.0.2.15", "198.51.100.20", 80));
	cr_assert_eq(n_events, 2);
	fake_now += 1000;
	run(f, syn(f, "10.0.2.15", "198.51.100.20", 80));
	cr_assert_eq(n_events, 4);
	cr_assert_str_eq(events[2].type, "net-deny-suppressed");
	cr_assert_eq(events[2].suppressed, 8);
	cr_assert_gt(net_event_to_json(&events[2], line, sizeof(line)), 0);
	cr_assert(strstr(line, "\"suppressed\":8"), "%s", line);
	cr_assert_gt(net_event_to_json(&events[3], line, sizeof(line)), 0);
	cr_assert(strstr(line, "\"type\":\"net-deny\",\"proto\":\"tcp\",\"dst\":\"198.51.100.20\","
			       "\"port\":80,\"name\":null,\"reason\":\"not-allowlisted\"}"),
		  "%s", line);
	cr_assert_eq(strncmp(line, "{\"time\":\"", 9), 0);
	cr_assert_eq(net_event_to_json(&events[3], line, 40), -ENOSPC);
	struct net_event odd = events[3];
	snprintf(odd.reason, sizeof(odd.reason), "a\"b\\c\n");
	cr_assert_gt(net_event_to_json(&odd, line, sizeof(line)), 0);
	cr_assert(strstr(line, "\"reason\":\"a\\\"b\\\\c\\n\"}"), "%s", line);
}

Test(net_filter, policy_check_dry_run)
{
	char why[300];

	allow("*.example.com:443/tcp");
	allow("203.0.113.0/24:22/tcp");
	cr_assert_eq(net_policy_check(&pol, "api.example.com:443/tcp", why, sizeof(why)), 1, "%s",
		     why);
	cr_assert_eq(net_policy_check(&pol, "api.example.com:80", why, sizeof(why)), 0);
	cr_assert(strstr(why, "port 80"), "%s", why);
	cr_assert_eq(net_policy_check(&pol, "example.org:443", why, sizeof(why)), 0);
	cr_assert_eq(net_policy_check(&pol, "203.0.113.4:22", why, sizeof(why)), 1);
	cr_assert_eq(net_policy_check(&pol, "203.0.113.4:23", why, sizeof(why)), 0);
	cr_assert_eq(net_policy_check(&pol, "host-loopback:8080", why, sizeof(why)), 0);
	cr_assert_eq(net_policy_check(&pol, "198.51.100.53:53/udp", why, sizeof(why)), 0);
	cr_assert_eq(net_policy_check(&pol, "*.example.com:443", why, sizeof(why)), -EINVAL);
	cr_assert_eq(net_policy_check(&pol, "203.0.113.0/24:22", why, sizeof(why)), -EINVAL);
	char err[100];
	cr_assert_eq(net_policy_deny(&pol, "api.example.com:443", err, sizeof(err)), 0);
	cr_assert_eq(net_policy_check(&pol, "api.example.com:443/tcp", why, sizeof(why)), 0);
	cr_assert(strstr(why, "denied by rule api.example.com:443"), "%s", why);
	cr_assert_eq(net_policy_check(&pol, "www.example.com:443/tcp", why, sizeof(why)), 1);
	net_policy_set_mode(&pol, NET_MODE_OPEN);
	cr_assert_eq(net_policy_check(&pol, "example.net:25", why, sizeof(why)), 1);
	cr_assert_str_eq(why, "mode open");
	cr_assert_eq(n_events, 0, "a dry run logs nothing");
}

/* deny NAME:PORT closes that port on the name's pins but keeps it resolvable. */
Test(net_filter, deny_name_with_port_keeps_resolution)
{
	uint8_t f[1600];
	char err[100];
	struct dns_addr_rec rec = {.ttl = 60};
	struct net_dns_pending pend;

	allow("example.com");
	cr_assert_eq(net_policy_deny(&pol, "example.com:25/tcp", err, sizeof(err)), 0);
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "example.com", DNS_T_A)),
		     NET_RESOLVE);
	pend = res.dns;
	cr_assert_eq(net_addr_parse("203.0.113.25", &rec.addr), 0);
	cr_assert_eq(net_filter_dns_answer(&pol, &pend, &rec, 1, &res), NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.25", 443)), NET_PASS);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.25", 25)), NET_ANSWER);
	cr_assert_eq(net_policy_deny(&pol, "example.com", err, sizeof(err)), 0);
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "example.com", DNS_T_A)), NET_ANSWER);
	size_t mlen;
	cr_assert_eq(net_filter_dns_answer(&pol, &pend, &rec, 1, &res), NET_ANSWER);
	cr_assert_eq(reply_dns(&mlen)[3] & 0xf, DNS_RCODE_NXDOMAIN, "denied while resolving");
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.25", 443)), NET_ANSWER,
		     "a name deny also voids its pins");
}

Test(net_filter, inbound_pins_and_port_forwards)
{
	uint8_t f[1600], m[512], t[600], framed[600];
	size_t mlen, flen, len;
	struct dns_query q;
	struct dns_addr_rec rec = {.ttl = 60};
	uint8_t resp[512];
	size_t rlen;

	allow("example.com:443/tcp");
	/* a DNS-over-TCP answer from the virtual nameserver pins its address */
	cr_assert_eq(dns_build_query(9, "example.com", DNS_T_A, m, sizeof(m), &mlen), 0);
	cr_assert_eq(dns_parse_query(m, mlen, &q), 0);
	cr_assert_eq(net_addr_parse("203.0.113.77", &rec.addr), 0);
	cr_assert_eq(dns_build_answer(m, &q, &rec, 1, resp, sizeof(resp), &rlen), 0);
	cr_assert_eq(dns_tcp_frame(resp, rlen, framed, sizeof(framed), &flen), 0);
	len = mk(f, "10.0.2.3", "10.0.2.15", IPPROTO_TCP, t,
		 l4_tcp(t, 53, 40000, 0x18, 5, 1001, framed, flen));
	cr_assert_eq(net_filter_inbound(&pol, f, len), NET_PASS);
	cr_assert_eq(run(f, syn(f, "10.0.2.15", "203.0.113.77", 443)), NET_PASS);
	/* host port forward: an inbound SYN admits the guest's SYN-ACK */
	len = mk(f, "10.0.2.2", "10.0.2.15", IPPROTO_TCP, t,
		 l4_tcp(t, 50000, 8000, 0x02, 1, 0, NULL, 0));
	cr_assert_eq(net_filter_inbound(&pol, f, len), NET_PASS);
	len = mk(f, "10.0.2.15", "10.0.2.2", IPPROTO_TCP, t,
		 l4_tcp(t, 8000, 50000, 0x12, 9, 2, NULL, 0));
	cr_assert_eq(run(f, len), NET_PASS, "%s", res.why);
	/* a rule change does not cut a forwarded connection */
	char err[100];
	cr_assert_eq(net_policy_deny(&pol, "198.51.100.0/24", err, sizeof(err)), 0);
	len = mk(f, "10.0.2.15", "10.0.2.2", IPPROTO_TCP, t,
		 l4_tcp(t, 8000, 50000, 0x10, 10, 2, NULL, 0));
	cr_assert_eq(run(f, len), NET_PASS, "%s", res.why);
}

Test(net_filter, json_policy_through_the_filter)
{
	const char *js = "{\"version\":1,\"mode\":\"allowlist\",\"allow\":[\"203.0.113.0/24\"],"
			 "\"network\":{\"ipv4\":\"10.0.5.0/24\",\"gateway4\":\"10.0.5.2\","
			 "\"dns4\":\"10.0.5.3\"}}";
	char err[200];
	uint8_t f[1600];

	cr_assert_eq(net_policy_load_json(&pol, js, strlen(js), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(run(f, syn(f, "10.0.5.15", "203.0.113.1", 443)), NET_PASS);
	cr_assert_eq(run(f, syn(f, "10.0.5.15", "10.0.5.2", 443)), NET_ANSWER);
	cr_assert_eq(run(f, dns_q(f, "10.0.5.15", "10.0.5.3", "example.com", DNS_T_A)), NET_ANSWER);
	cr_assert_eq(run(f, dns_q(f, "10.0.5.15", "10.0.2.3", "example.com", DNS_T_A)), NET_ANSWER);
	cr_assert(strstr(events[n_events - 1].reason, "resolver"));
}

Test(net_filter, log_callback_writes_json_lines)
{
	char path[] = "/tmp/mvm-netev-XXXXXX", buf[4096];
	int fd = mkstemp(path);
	ssize_t n;
	uint8_t f[1600];

	cr_assert_geq(fd, 0);
	net_policy_set_events(&pol, net_event_log_json, path);
	cr_assert_eq(run(f, dns_q(f, "10.0.2.15", "10.0.2.3", "blocked.example.org", DNS_T_A)),
		     NET_ANSWER);
	cr_assert_eq(run(f, syn(f, "fec0::15", "2001:db8::9", 22)), NET_ANSWER);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	unlink(path);
	cr_assert_gt(n, 0);
	buf[n] = 0;
	cr_assert(strstr(buf,
			 "\"proto\":\"dns\",\"dst\":\"10.0.2.3\",\"port\":53,"
			 "\"name\":\"blocked.example.org\",\"reason\":\"name not allowlisted\"}\n"),
		  "%s", buf);
	cr_assert(strstr(buf, "\"dst\":\"2001:db8::9\",\"port\":22,"), "%s", buf);
}
