/* How many slirp sockets a guest may hold (issue 15 item 6): TCP
 * connections and datagram flows are capped (limits.connections,
 * limits.flows); beyond the cap a new one gets a RST / ICMP and an event. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>

#include "devices/netpolicy/net_filter.h"
#include "tests/unit/net_testutil.h"

TestSuite(net_limits, .init = net_setup, .fini = net_teardown);

/* A guest TCP segment from @sport to @dst:@dport. */
static enum net_verdict tcp(const char *dst, uint16_t dport, uint16_t sport, uint8_t flags)
{
	uint8_t f[1600], t[64];

	return run(f, mk(f, "10.0.2.15", dst, IPPROTO_TCP, t,
			 l4_tcp(t, sport, dport, flags, 100, 1, NULL, 0)));
}

/* The same from slirp's side. */
static void tcp_in(const char *src, uint16_t sport, uint16_t dport, uint8_t flags)
{
	uint8_t f[1600], t[64];
	size_t len = mk(f, src, "10.0.2.15", IPPROTO_TCP, t,
			l4_tcp(t, sport, dport, flags, 5, 101, NULL, 0));

	cr_assert_eq(net_filter_inbound(&pol, f, len), NET_PASS);
}

static void load(const char *json)
{
	char err[200];

	cr_assert_eq(net_policy_load_json(&pol, json, strlen(json), err, sizeof(err)), 0, "%s", err);
}

Test(net_limits, defaults_and_json)
{
	char err[200];
	const char *bad = "{\"version\":1,\"mode\":\"open\",\"limits\":{\"connections\":100000}}";

	cr_assert_eq(pol.cfg.max_conns, NET_DEF_MAX_CONNS);
	cr_assert_eq(pol.cfg.max_flows, NET_DEF_MAX_FLOWS);
	load("{\"version\":1,\"mode\":\"open\",\"limits\":{\"connections\":3,\"flows\":2}}");
	cr_assert_eq(pol.cfg.max_conns, 3);
	cr_assert_eq(pol.cfg.max_flows, 2);
	cr_assert_neq(net_policy_load_json(&pol, bad, strlen(bad), err, sizeof(err)), 0);
	cr_assert(strstr(err, "limits.connections"), "%s", err);
}

/* The virtual resolver's TCP port is always admitted: the cap is what stops
 * a guest from opening a slirp socket per source port. */
Test(net_limits, connections_capped_with_rst_and_event)
{
	load("{\"version\":1,\"mode\":\"allowlist\",\"limits\":{\"connections\":3}}");
	for (uint16_t p = 1; p <= 3; p++)
		cr_assert_eq(tcp("10.0.2.3", 53, 40000 + p, 0x02), NET_PASS, "%s", res.why);
	cr_assert_eq(tcp("10.0.2.3", 53, 40001, 0x02), NET_PASS, "a retransmitted SYN");
	cr_assert_eq(tcp("10.0.2.3", 53, 40004, 0x02), NET_ANSWER, "the fourth");
	cr_assert_eq(res.reply[14 + 20 + 13] & 0x04, 0x04, "a RST");
	cr_assert_eq(n_events, 1);
	cr_assert_str_eq(events[0].reason, "connection limit (3) reached");
	/* a RST from the guest frees its slot */
	cr_assert_eq(tcp("10.0.2.3", 53, 40001, 0x14), NET_PASS);
	cr_assert_eq(tcp("10.0.2.3", 53, 40004, 0x02), NET_PASS, "%s", res.why);
	/* so does a RST from slirp, and FIN both ways */
	tcp_in("10.0.2.3", 53, 40002, 0x14);
	cr_assert_eq(tcp("10.0.2.3", 53, 40005, 0x02), NET_PASS, "%s", res.why);
	cr_assert_eq(tcp("10.0.2.3", 53, 40003, 0x11), NET_PASS, "guest FIN");
	cr_assert_eq(tcp("10.0.2.3", 53, 40006, 0x02), NET_ANSWER, "half-closed still counts");
	tcp_in("10.0.2.3", 53, 40003, 0x11);
	cr_assert_eq(tcp("10.0.2.3", 53, 40003, 0x10), NET_PASS, "the last ACK of a close");
	cr_assert_eq(tcp("10.0.2.3", 53, 40006, 0x02), NET_PASS, "%s", res.why);
	cr_assert_eq(pol.n_conns, 3);
	/* the same tuple again after its close is a new connection, counted */
	cr_assert_eq(tcp("10.0.2.3", 53, 40003, 0x02), NET_ANSWER, "%s", res.why);
	/* idle connections are forgotten after the RFC 5382 timeout */
	fake_now += NET_CONN_IDLE_MS + 1;
	cr_assert_eq(tcp("10.0.2.3", 53, 40007, 0x02), NET_PASS, "%s", res.why);
}

Test(net_limits, inbound_port_forwards_do_not_count)
{
	load("{\"version\":1,\"mode\":\"allowlist\",\"limits\":{\"connections\":1}}");
	tcp_in("10.0.2.2", 50000, 8000, 0x02);
	tcp_in("10.0.2.2", 50001, 8000, 0x02);
	cr_assert_eq(tcp("10.0.2.3", 53, 40001, 0x02), NET_PASS, "%s", res.why);
	cr_assert_eq(tcp("10.0.2.3", 53, 40002, 0x02), NET_ANSWER);
}

static enum net_verdict udp_from(uint16_t sport, const char *dst)
{
	uint8_t f[1600], u[64], d[4] = {0};

	return run(f, mk(f, "10.0.2.15", dst, IPPROTO_UDP, u, l4_udp(u, sport, 9999, d, 4)));
}

static size_t echo(uint8_t *f, const char *src, const char *dst, uint8_t type, uint16_t seq)
{
	uint8_t e[16] = {type, 0, 0, 0, 0x12, 0x34, seq >> 8, seq & 0xff};

	return mk(f, src, dst, IPPROTO_ICMP, e, sizeof(e));
}

Test(net_limits, datagram_flows_capped)
{
	uint8_t f[1600];

	load("{\"version\":1,\"mode\":\"open\",\"limits\":{\"flows\":2}}");
	cr_assert_eq(udp_from(5000, "203.0.113.1"), NET_PASS, "%s", res.why);
	cr_assert_eq(udp_from(5000, "203.0.113.2"), NET_PASS, "one socket per guest port");
	cr_assert_eq(udp_from(5001, "203.0.113.1"), NET_PASS, "%s", res.why);
	cr_assert_eq(udp_from(5002, "203.0.113.1"), NET_ANSWER, "the third flow");
	cr_assert_str_eq(events[n_events - 1].reason, "flow limit (2) reached");
	cr_assert_eq(run(f, echo(f, "10.0.2.15", "203.0.113.1", 8, 1)), NET_ANSWER, "echo too");
	/* a reply from outside keeps a flow alive, as it keeps slirp's socket */
	fake_now += NET_FLOW_IDLE_MS - 1000;
	size_t len;
	uint8_t u[64], d[4] = {0};
	len = mk(f, "203.0.113.1", "10.0.2.15", IPPROTO_UDP, u, l4_udp(u, 9999, 5000, d, 4));
	cr_assert_eq(net_filter_inbound(&pol, f, len), NET_PASS);
	fake_now += 2000;
	cr_assert_eq(udp_from(5003, "203.0.113.1"), NET_PASS, "5001 expired");
	cr_assert_eq(udp_from(5004, "203.0.113.1"), NET_ANSWER, "5000 is alive");
}

Test(net_limits, echo_flows_end_with_the_reply)
{
	uint8_t f[1600];

	load("{\"version\":1,\"mode\":\"open\",\"limits\":{\"flows\":1}}");
	cr_assert_eq(run(f, echo(f, "10.0.2.15", "203.0.113.1", 8, 1)), NET_PASS, "%s", res.why);
	cr_assert_eq(run(f, echo(f, "10.0.2.15", "203.0.113.1", 8, 1)), NET_DROP,
		     "the same echo again: slirp opens a socket per copy");
	cr_assert_eq(run(f, echo(f, "10.0.2.15", "203.0.113.1", 8, 2)), NET_ANSWER, "cap");
	cr_assert_eq(net_filter_inbound(&pol, f, echo(f, "203.0.113.1", "10.0.2.15", 0, 1)),
		     NET_PASS);
	cr_assert_eq(run(f, echo(f, "10.0.2.15", "203.0.113.1", 8, 2)), NET_PASS, "%s", res.why);
}
