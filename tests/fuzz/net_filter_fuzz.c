/* libFuzzer target: guest Ethernet frames through the policy decision.
 * The first byte picks a policy mode and whether the rest is a whole frame
 * or a DNS message wrapped in UDP/TCP to the virtual nameserver. Answers and
 * DNS resolutions are completed so the reply builders run too. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "devices/netpolicy/net_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t clock_ticks;

static uint64_t fake_clock(void *opaque)
{
	return clock_ticks += 7;
}

static struct net_policy *policy(void)
{
	static struct net_policy p;
	static int ready;
	char err[128];

	if (ready)
		return &p;
	if (net_policy_init(&p, NET_MODE_ALLOWLIST))
		abort();
	net_policy_set_clock(&p, fake_clock, NULL);
	if (net_policy_allow(&p, "*.example.com:443/tcp", err, sizeof(err)) ||
	    net_policy_allow(&p, "203.0.113.0/24", err, sizeof(err)) ||
	    net_policy_allow(&p, "[2001:db8::]/32:1-1024/udp", err, sizeof(err)) ||
	    net_policy_allow(&p, "host-loopback:8080/tcp", err, sizeof(err)) ||
	    net_policy_deny(&p, "bad.example.com", err, sizeof(err)))
		abort();
	/* a host address and small limits, so those paths run too */
	struct net_addr host;
	if (net_addr_parse("203.0.113.9", &host))
		abort();
	net_policy_set_host_addrs(&p, &host, 1);
	p.cfg.max_conns = 16;
	p.cfg.max_flows = 8;
	ready = 1;
	return &p;
}

/* Wrap @data in Ethernet + IPv4 + UDP/TCP to the virtual nameserver, so
 * the fuzzer spends its time in the DNS paths rather than on headers.
 * Checksums are not checked by the filter, so they stay zero. */
static size_t wrap_dns(uint8_t *f, size_t cap, const uint8_t *data, size_t size, bool tcp,
		       uint8_t flags)
{
	size_t l4h = tcp ? 20 : 8, tot = 20 + l4h + size;
	uint8_t *ip = f + 14, *l4 = ip + 20;

	if (14 + tot > cap)
		return 0;
	memset(f, 0, 14 + 20 + l4h);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8), ip[3] = (uint8_t)tot;
	ip[8] = 64;
	ip[9] = tcp ? 6 : 17;
	memcpy(ip + 12, "\x0a\x00\x02\x0f\x0a\x00\x02\x03", 8);
	l4[0] = 0x9c, l4[1] = 0x40;
	l4[3] = 53;
	if (tcp) {
		l4[12] = 5 << 4;
		l4[13] = flags;
	} else {
		l4[4] = (uint8_t)((8 + size) >> 8), l4[5] = (uint8_t)(8 + size);
	}
	if (size)
		memcpy(l4 + l4h, data, size);
	return 14 + tot;
}

static enum net_verdict run(struct net_policy *p, const uint8_t *data, size_t size, unsigned how,
			    struct net_filter_result *res)
{
	static uint8_t f[70000];
	size_t len;

	switch (how) {
	case 1:
		len = wrap_dns(f, sizeof(f), data, size, false, 0);
		break;
	case 2:
		len = wrap_dns(f, sizeof(f), NULL, 0, true, 0x02);
		(void)net_filter_frame(p, f, len, res);
		len = wrap_dns(f, sizeof(f), data, size, true, 0x18);
		break;
	default:
		return net_filter_frame(p, data, size, res);
	}
	return len ? net_filter_frame(p, f, len, res) : NET_DROP;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct net_filter_result res, res2;
	struct net_policy *p = policy();
	struct dns_addr_rec rec = {.addr = {.family = AF_INET, .b = {203, 0, 113, 5}}, .ttl = 60};

	if (size < 1)
		return 0;
	net_policy_set_mode(p, (enum net_mode)(data[0] % 3));
	switch (run(p, data + 1, size - 1, (data[0] >> 2) % 4, &res)) {
	case NET_ANSWER:
		if (res.reply_len > sizeof(res.reply))
			__builtin_trap();
		break;
	case NET_RESOLVE:
		(void)net_filter_dns_answer(p, &res.dns, &rec, 1, &res2);
		(void)net_filter_dns_response(p, &res.dns, data + 1, size - 1, &res2);
		break;
	default:
		break;
	}
	(void)net_filter_inbound(p, data + 1, size - 1);
	return 0;
}
