/* DNS pin set and the rebinding guard. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <string.h>

#include "devices/netpolicy/net_pins.h"

static struct net_addr A(const char *s) {
	struct net_addr a;

	cr_assert_eq(net_addr_parse(s, &a), 0, "bad test address %s", s);
	return a;
}

static bool
collect(void *opaque, const char *name)
{
	char *out = opaque;

	if (*out)
		strcat(out, ",");
	strcat(out, name);
	return false;
}

static char *names_for(struct net_pins *p, const char *addr, uint64_t now, bool any)
{
	static char buf[1024];
	struct net_addr a = A(addr);

	buf[0] = '\0';
	net_pins_find(p, &a, now, any, collect, buf);
	return buf;
}

Test(net_pins, classify_special_ranges)
{
	static const struct {
		const char *a;
		enum net_addr_class c;
	} cases[] = {
	    {"203.0.113.1", NET_ADDR_PUBLIC},
	    {"2001:db8::1", NET_ADDR_PUBLIC},
	    {"127.0.0.1", NET_ADDR_LOOPBACK},
	    {"::1", NET_ADDR_LOOPBACK},
	    {"10.1.2.3", NET_ADDR_PRIVATE},
	    {"172.31.255.255", NET_ADDR_PRIVATE},
	    {"172.32.0.1", NET_ADDR_PUBLIC},
	    {"192.168.1.1", NET_ADDR_PRIVATE},
	    {"100.64.0.1", NET_ADDR_CGNAT},
	    {"100.128.0.1", NET_ADDR_PUBLIC},
	    {"169.254.169.254", NET_ADDR_LINKLOCAL},
	    {"fe80::1", NET_ADDR_LINKLOCAL},
	    {"fd12::1", NET_ADDR_ULA},
	    {"fec0::3", NET_ADDR_ULA},
	    {"0.0.0.0", NET_ADDR_UNSPECIFIED},
	    {"::", NET_ADDR_UNSPECIFIED},
	    {"224.0.0.251", NET_ADDR_MULTICAST},
	    {"ff02::1", NET_ADDR_MULTICAST},
	    {"255.255.255.255", NET_ADDR_RESERVED},
	    {"::ffff:127.0.0.1", NET_ADDR_RESERVED},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct net_addr a = A(cases[i].a);
		cr_assert_eq(net_addr_classify(&a), cases[i].c, "%s is %s", cases[i].a,
			     net_addr_class_name(net_addr_classify(&a)));
	}
}

Test(net_pins, rebinding_refused_unless_a_rule_names_the_range)
{
	struct net_rules rs;
	char err[128];
	struct net_addr priv = A("10.9.8.7"), lo = A("127.0.0.1"), pub = A("198.51.100.7");

	net_rules_init(&rs, NET_MODE_ALLOWLIST);
	cr_assert_eq(net_rules_add(&rs, NET_ALLOW, "example.com", err, sizeof(err)), 0);
	cr_assert(net_pins_answer_ok(&rs, &pub));
	cr_assert_not(net_pins_answer_ok(&rs, &priv));
	cr_assert_not(net_pins_answer_ok(&rs, &lo));
	cr_assert_eq(net_rules_add(&rs, NET_ALLOW, "10.9.0.0/16:443/tcp", err, sizeof(err)), 0);
	cr_assert(net_pins_answer_ok(&rs, &priv));
	cr_assert_not(net_pins_answer_ok(&rs, &lo));
	net_rules_free(&rs);
}

Test(net_pins, ttl_floor_cap_and_expiry)
{
	struct net_pins p;
	struct net_addr a = A("203.0.113.10");

	cr_assert_eq(net_pins_init(&p, 0, 30, 300), 0);
	net_pins_add(&p, "example.com", &a, 0, 1000); /* TTL 0 -> floor 30 s */
	cr_assert_str_eq(names_for(&p, "203.0.113.10", 30999, false), "example.com");
	cr_assert_str_eq(names_for(&p, "203.0.113.10", 31000, false), "");
	cr_assert_str_eq(names_for(&p, "203.0.113.10", 31000, true), "example.com");
	net_pins_add(&p, "example.com", &a, 86400, 1000); /* refresh, capped at 300 s */
	cr_assert_eq(p.n, 1, "refresh must not duplicate");
	cr_assert_str_eq(names_for(&p, "203.0.113.10", 300999, false), "example.com");
	cr_assert_str_eq(names_for(&p, "203.0.113.10", 301000, false), "");
	net_pins_expire(&p, 301000);
	cr_assert_eq(p.n, 0);
	net_pins_free(&p);
}

Test(net_pins, shared_address_and_forget)
{
	struct net_pins p;
	struct net_addr a = A("2001:db8::10");

	cr_assert_eq(net_pins_init(&p, 0, 30, 300), 0);
	net_pins_add(&p, "a.example.com", &a, 60, 0);
	net_pins_add(&p, "b.example.org", &a, 60, 0);
	cr_assert_str_eq(names_for(&p, "2001:db8::10", 1, false), "a.example.com,b.example.org");
	cr_assert_str_eq(names_for(&p, "2001:db8::11", 1, false), "");
	net_pins_forget(&p, "a.example.com");
	cr_assert_str_eq(names_for(&p, "2001:db8::10", 1, false), "b.example.org");
	net_pins_free(&p);
}

Test(net_pins, full_set_evicts_soonest_expiry)
{
	struct net_pins p;
	struct net_addr a = A("203.0.113.1"), b = A("203.0.113.2"), c = A("203.0.113.3");

	cr_assert_eq(net_pins_init(&p, 2, 10, 1000), 0);
	net_pins_add(&p, "a.example.com", &a, 500, 0);
	net_pins_add(&p, "b.example.com", &b, 20, 0);
	net_pins_add(&p, "c.example.com", &c, 500, 0);
	cr_assert_eq(p.n, 2);
	cr_assert_str_eq(names_for(&p, "203.0.113.2", 1, false), "");
	cr_assert_str_eq(names_for(&p, "203.0.113.1", 1, false), "a.example.com");
	cr_assert_str_eq(names_for(&p, "203.0.113.3", 1, false), "c.example.com");
	net_pins_free(&p);
}
