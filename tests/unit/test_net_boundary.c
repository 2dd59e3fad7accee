/* Where the policy's boundary was open (issue 15 items 1, 3, 4): the DHCP
 * exemption, rule ports on special ranges, the host's own addresses and
 * translated IPv6 ranges. Hand-built frames through net_filter_frame(). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>

#include "devices/netpolicy/net_filter.h"
#include "tests/unit/net_testutil.h"

TestSuite(net_boundary, .init = net_setup, .fini = net_teardown);

static size_t dhcp_to(uint8_t *f, const char *src, const char *dst)
{
	uint8_t u[400], d[300] = {1, 1, 6};

	return mk(f, src, dst, IPPROTO_UDP, u, l4_udp(u, 68, 67, d, sizeof(d)));
}

static void set_mode(enum net_mode m)
{
	net_policy_set_mode(&pol, m);
}

/* Only DHCP to slirp's server (the gateway, or broadcast) is link traffic. */
Test(net_boundary, dhcp_exemption_only_for_the_virtual_server)
{
	uint8_t f[1600];

	cr_assert_eq(run(f, dhcp_to(f, "0.0.0.0", "255.255.255.255")), NET_PASS, "%s", res.why);
	cr_assert_eq(run(f, dhcp_to(f, "10.0.2.15", "10.0.2.2")), NET_PASS, "%s", res.why);

	allow("203.0.113.10:8080/tcp"); /* a rule for something else */
	cr_assert_neq(run(f, dhcp_to(f, "10.0.2.15", "198.51.100.2")), NET_PASS,
		      "UDP 68->67 to any host is a tunnel");
	cr_assert_eq(res.verdict, NET_ANSWER, "refused like other UDP");
	cr_assert_str_eq(events[n_events - 1].reason, "not-allowlisted");
	cr_assert_neq(run(f, dhcp_to(f, "10.0.2.15", "10.0.2.3")), NET_PASS,
		      "the DNS address is not the DHCP server");
	allow("198.51.100.2:9999/udp"); /* the host, another port */
	cr_assert_neq(run(f, dhcp_to(f, "10.0.2.15", "198.51.100.2")), NET_PASS);
	set_mode(NET_MODE_NONE);
	cr_assert_neq(run(f, dhcp_to(f, "10.0.2.15", "198.51.100.2")), NET_PASS, "mode none");
	cr_assert_eq(run(f, dhcp_to(f, "0.0.0.0", "255.255.255.255")), NET_PASS,
		     "the guest still gets its address in mode none");
	set_mode(NET_MODE_OPEN);
	cr_assert_eq(run(f, dhcp_to(f, "10.0.2.15", "198.51.100.2")), NET_PASS,
		     "open mode: an ordinary public destination");
	/* network.dhcp false closes the exemption itself */
	pol.cfg.allow_dhcp = false;
	set_mode(NET_MODE_ALLOWLIST);
	cr_assert_eq(run(f, dhcp_to(f, "0.0.0.0", "255.255.255.255")), NET_DROP);
}

static size_t tcp_syn_port(uint8_t *f, const char *dst, uint16_t port)
{
	uint8_t t[64];
	const char *src = strchr(dst, ':') ? "fec0::15" : "10.0.2.15";

	return mk(f, src, dst, IPPROTO_TCP, t, l4_tcp(t, 40001, port, 0x02, 77, 0, NULL, 0));
}

/* A private-range rule with a port opens that port, in every mode. */
Test(net_boundary, private_range_rule_keeps_its_port_in_open_mode)
{
	uint8_t f[1600], d[4] = {0};

	allow("10.1.0.0/16:443/tcp");
	for (int m = NET_MODE_ALLOWLIST; m <= NET_MODE_OPEN; m++) {
		set_mode((enum net_mode)m);
		cr_assert_eq(run(f, tcp_syn_port(f, "10.1.2.3", 443)), NET_PASS, "%s", res.why);
		cr_assert_eq(run(f, tcp_syn_port(f, "10.1.2.3", 22)), NET_ANSWER,
			     "mode %d: port 22 of the private range", m);
		cr_assert_eq(run(f, udp(f, "10.0.2.15", "10.1.2.3", 443, d, 4)), NET_ANSWER,
			     "mode %d: UDP under a /tcp rule", m);
		cr_assert_eq(run(f, tcp_syn_port(f, "10.2.0.1", 443)), NET_ANSWER,
			     "outside the rule's range");
	}
	/* the dry run agrees */
	char why[200];
	cr_assert_eq(net_policy_check(&pol, "10.1.2.3:22", why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(net_policy_check(&pol, "10.1.2.3:443", why, sizeof(why)), 1, "%s", why);
}

static void host_addrs(void)
{
	struct net_addr a[3];

	cr_assert_eq(net_addr_parse("198.51.100.1", &a[0]), 0);
	cr_assert_eq(net_addr_parse("2001:db8::5", &a[1]), 0);
	cr_assert_eq(net_addr_parse("192.168.7.2", &a[2]), 0);
	net_policy_set_host_addrs(&pol, a, 3);
}

/* The host's own addresses are the host: only a rule naming one opens it. */
Test(net_boundary, host_addresses_need_a_rule_naming_them)
{
	uint8_t f[1600];

	host_addrs();
	set_mode(NET_MODE_OPEN);
	cr_assert_eq(run(f, tcp_syn_port(f, "198.51.100.1", 8080)), NET_ANSWER, "open mode");
	cr_assert_str_eq(events[n_events - 1].reason, "host address");
	cr_assert_eq(run(f, tcp_syn_port(f, "2001:db8::5", 8080)), NET_ANSWER, "IPv6");
	cr_assert_eq(run(f, tcp_syn_port(f, "198.51.100.9", 8080)), NET_PASS, "a neighbour");
	allow("198.51.100.0/24");
	allow("192.168.0.0/16");
	set_mode(NET_MODE_ALLOWLIST);
	cr_assert_eq(run(f, tcp_syn_port(f, "198.51.100.1", 8080)), NET_ANSWER,
		     "a range does not name the host");
	cr_assert_eq(run(f, tcp_syn_port(f, "192.168.7.2", 8080)), NET_ANSWER,
		     "a private host address under a private range rule");
	cr_assert_eq(run(f, tcp_syn_port(f, "192.168.7.3", 8080)), NET_PASS, "%s", res.why);
	allow("198.51.100.1:8080/tcp");
	cr_assert_eq(run(f, tcp_syn_port(f, "198.51.100.1", 8080)), NET_PASS, "%s", res.why);
	cr_assert_eq(run(f, tcp_syn_port(f, "198.51.100.1", 22)), NET_ANSWER, "other port");
	/* more addresses than the table holds are cut, not overflowed */
	struct net_addr many[NET_HOST_ADDRS_MAX + 5];
	memset(many, 0, sizeof(many));
	net_policy_set_host_addrs(&pol, many, NET_HOST_ADDRS_MAX + 5);
	cr_assert_eq(pol.n_host_addrs, NET_HOST_ADDRS_MAX);
}

/* An allowed name may not resolve to the host's own address (rebinding). */
Test(net_boundary, dns_answer_with_host_address_not_pinned)
{
	uint8_t f[1600], m[512];
	struct dns_addr_rec rec[2] = {{.ttl = 60}, {.ttl = 60}};
	size_t mlen;

	host_addrs();
	allow("example.com:8080/tcp");
	cr_assert_eq(dns_build_query(1, "example.com", DNS_T_A, m, sizeof(m), &mlen), 0);
	cr_assert_eq(run(f, udp(f, "10.0.2.15", "10.0.2.3", 53, m, mlen)), NET_RESOLVE);
	struct net_dns_pending q = res.dns;
	cr_assert_eq(net_addr_parse("198.51.100.1", &rec[0].addr), 0);
	cr_assert_eq(net_addr_parse("203.0.113.5", &rec[1].addr), 0);
	cr_assert_eq(net_filter_dns_answer(&pol, &q, rec, 2, &res), NET_ANSWER);
	cr_assert_eq(run(f, tcp_syn_port(f, "198.51.100.1", 8080)), NET_ANSWER);
	cr_assert_eq(run(f, tcp_syn_port(f, "203.0.113.5", 8080)), NET_PASS, "%s", res.why);
}

/* NAT64 and 6to4 (and Teredo) reach IPv4 behind them: special ranges. */
Test(net_boundary, translated_ipv6_ranges_are_special)
{
	uint8_t f[1600];
	const char *dsts[] = {"64:ff9b::a00:202", "64:ff9b::7f00:1", "64:ff9b:1::1",
			      "2002:7f00:1::1", "2001:0:7f00:1::1"};

	set_mode(NET_MODE_OPEN);
	for (size_t i = 0; i < sizeof(dsts) / sizeof(dsts[0]); i++) {
		cr_assert_eq(run(f, tcp_syn_port(f, dsts[i], 443)), NET_ANSWER, "%s", dsts[i]);
		cr_assert_str_eq(events[n_events - 1].reason, "translated destination");
	}
	cr_assert_eq(run(f, tcp_syn_port(f, "2001:db8::1", 443)), NET_PASS, "documentation v6");
	allow("[64:ff9b::]/96:443/tcp");
	cr_assert_eq(run(f, tcp_syn_port(f, "64:ff9b::cb00:7101", 443)), NET_PASS, "%s", res.why);
	cr_assert_eq(run(f, tcp_syn_port(f, "64:ff9b::cb00:7101", 80)), NET_ANSWER);
	struct net_addr a;
	cr_assert_eq(net_addr_parse("2002::1", &a), 0);
	cr_assert_eq(net_addr_classify(&a), NET_ADDR_TRANSLATED);
	cr_assert_not(net_pins_answer_ok(&pol.rules, &a), "rebinding guard");
}
