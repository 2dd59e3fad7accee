/* Frame builders, reply checks and the policy fixture for the network
 * policy's unit tests (net_testutil.h). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>

#include "tests/unit/net_testutil.h"

const uint8_t guest_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
const uint8_t gw_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};

/* ---- independent checksum (RFC 1071, byte at a time) ---- */

uint32_t sum_bytes(const uint8_t *d, size_t n, uint32_t acc)
{
	for (size_t i = 0; i < n; i++)
		acc += (i & 1) ? d[i] : (uint32_t)d[i] << 8;
	return acc;
}

uint16_t fold16(uint32_t acc)
{
	while (acc > 0xffff)
		acc = (acc >> 16) + (acc & 0xffff);
	return (uint16_t)~acc;
}

static uint32_t pseudo_sum(int fam, const uint8_t *ip, uint8_t proto, size_t l4len)
{
	uint32_t acc = fam == 4 ? sum_bytes(ip + 12, 8, 0) : sum_bytes(ip + 8, 32, 0);

	return acc + proto + (uint32_t)l4len;
}

/* ---- frame builders ---- */

size_t l4_tcp(uint8_t *t, uint16_t sport, uint16_t dport, uint8_t flags, uint32_t seq,
		     uint32_t ack, const uint8_t *data, size_t dlen)
{
	memset(t, 0, 20);
	t[0] = sport >> 8, t[1] = sport & 0xff;
	t[2] = dport >> 8, t[3] = dport & 0xff;
	t[4] = seq >> 24, t[5] = seq >> 16, t[6] = seq >> 8, t[7] = seq & 0xff;
	t[8] = ack >> 24, t[9] = ack >> 16, t[10] = ack >> 8, t[11] = ack & 0xff;
	t[12] = 5 << 4;
	t[13] = flags;
	t[14] = 0xff;
	if (dlen)
		memcpy(t + 20, data, dlen);
	return 20 + dlen;
}

size_t l4_udp(uint8_t *u, uint16_t sport, uint16_t dport, const uint8_t *data, size_t dlen)
{
	u[0] = sport >> 8, u[1] = sport & 0xff;
	u[2] = dport >> 8, u[3] = dport & 0xff;
	u[4] = (uint8_t)((8 + dlen) >> 8), u[5] = (uint8_t)(8 + dlen);
	u[6] = u[7] = 0;
	memcpy(u + 8, data, dlen);
	return 8 + dlen;
}

/* Ethernet + IPv4/IPv6 (by the form of @src) + @l4, with every checksum set. */
size_t mk(uint8_t *f, const char *src, const char *dst, uint8_t proto, const uint8_t *l4,
		 size_t l4len)
{
	int fam = strchr(src, ':') ? 6 : 4;
	uint8_t *ip = f + 14, *l;
	size_t hl = fam == 4 ? 20 : 40, ck;

	memcpy(f, gw_mac, 6);
	memcpy(f + 6, guest_mac, 6);
	f[12] = fam == 4 ? 0x08 : 0x86;
	f[13] = fam == 4 ? 0x00 : 0xdd;
	memset(ip, 0, hl);
	if (fam == 4) {
		ip[0] = 0x45;
		ip[2] = (uint8_t)((hl + l4len) >> 8), ip[3] = (uint8_t)(hl + l4len);
		ip[8] = 64;
		ip[9] = proto;
		inet_pton(AF_INET, src, ip + 12);
		inet_pton(AF_INET, dst, ip + 16);
		uint16_t c = fold16(sum_bytes(ip, 20, 0));
		ip[10] = c >> 8, ip[11] = c & 0xff;
	} else {
		ip[0] = 0x60;
		ip[4] = (uint8_t)(l4len >> 8), ip[5] = (uint8_t)l4len;
		ip[6] = proto;
		ip[7] = proto == IPPROTO_ICMPV6 ? 255 : 64;
		inet_pton(AF_INET6, src, ip + 8);
		inet_pton(AF_INET6, dst, ip + 24);
	}
	l = ip + hl;
	memcpy(l, l4, l4len);
	ck = proto == IPPROTO_TCP ? 16 : proto == IPPROTO_UDP ? 6 : 2;
	uint32_t acc = proto == IPPROTO_ICMP ? 0 : pseudo_sum(fam, ip, proto, l4len);
	uint16_t c = fold16(sum_bytes(l, l4len, acc));
	l[ck] = c >> 8, l[ck + 1] = c & 0xff;
	return 14 + hl + l4len;
}

size_t syn(uint8_t *f, const char *src, const char *dst, uint16_t dport)
{
	uint8_t t[64];

	return mk(f, src, dst, IPPROTO_TCP, t, l4_tcp(t, 40000, dport, 0x02, 1000, 0, NULL, 0));
}

size_t ack(uint8_t *f, const char *src, const char *dst, uint16_t dport)
{
	uint8_t t[64];

	return mk(f, src, dst, IPPROTO_TCP, t, l4_tcp(t, 40000, dport, 0x10, 1001, 5, NULL, 0));
}

size_t udp(uint8_t *f, const char *src, const char *dst, uint16_t dport, const uint8_t *data,
		  size_t dlen)
{
	uint8_t u[600];

	return mk(f, src, dst, IPPROTO_UDP, u, l4_udp(u, 5353, dport, data, dlen));
}

/* Check a reply frame: addressed to the guest, IP and L4 checksums valid.
 * Returns the L4 offset; *proto gets the upper-layer protocol. */
size_t verify(const uint8_t *f, size_t len, uint8_t *proto)
{
	int fam = f[12] == 0x08 ? 4 : 6;
	const uint8_t *ip = f + 14;
	size_t hl = fam == 4 ? 20 : 40, l4len;

	cr_assert_eq(memcmp(f, guest_mac, 6), 0, "reply not addressed to the guest");
	cr_assert_eq(memcmp(f + 6, gw_mac, 6), 0, "reply not from the gateway MAC");
	cr_assert_geq(len, 14 + hl + 8);
	if (fam == 4) {
		cr_assert_eq(ip[0], 0x45);
		cr_assert_eq(fold16(sum_bytes(ip, 20, 0)), 0, "bad IPv4 header checksum");
		cr_assert_eq((size_t)(ip[2] << 8 | ip[3]), len - 14);
		*proto = ip[9];
	} else {
		cr_assert_eq(ip[0] >> 4, 6);
		cr_assert_eq((size_t)(ip[4] << 8 | ip[5]), len - 54);
		*proto = ip[6];
	}
	l4len = len - 14 - hl;
	uint32_t acc = *proto == IPPROTO_ICMP ? 0 : pseudo_sum(fam, ip, *proto, l4len);
	cr_assert_eq(fold16(sum_bytes(ip + hl, l4len, acc)), 0, "bad L4 checksum");
	return 14 + hl;
}

uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}


/* ---- fixture: a policy, a fake clock and an event recorder ---- */

struct net_policy pol;
struct net_filter_result res;
uint64_t fake_now = 1000000;
struct net_event events[64];
int n_events;

static uint64_t fake_clock(void *opaque)
{
	return fake_now;
}

static void record(void *opaque, const struct net_event *ev)
{
	if (n_events < 64)
		events[n_events] = *ev;
	n_events++;
}

void net_setup(void)
{
	cr_assert_eq(net_policy_init(&pol, NET_MODE_ALLOWLIST), 0);
	net_policy_set_clock(&pol, fake_clock, NULL);
	net_policy_set_events(&pol, record, NULL);
	n_events = 0;
}

void net_teardown(void)
{
	net_policy_free(&pol);
}

void allow(const char *rule)
{
	char err[200];

	cr_assert_eq(net_policy_allow(&pol, rule, err, sizeof(err)), 0, "%s", err);
}

enum net_verdict run(const uint8_t *f, size_t len)
{
	return net_filter_frame(&pol, f, len, &res);
}

