/* libFuzzer target: guest Ethernet frames through the policy decision.
 * The first byte picks a policy mode; the rest is the frame. Answers and
 * DNS resolutions are completed so the reply builders run too. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "devices/net_filter.h"

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
	ready = 1;
	return &p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct net_filter_result res, res2;
	struct net_policy *p = policy();
	struct dns_addr_rec rec = {.addr = {.family = AF_INET, .b = {203, 0, 113, 5}}, .ttl = 60};

	if (size < 1)
		return 0;
	net_policy_set_mode(p, (enum net_mode)(data[0] % 3));
	switch (net_filter_frame(p, data + 1, size - 1, &res)) {
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
