/* DNS pin set and rebinding guard (see net_pins.h). A flat array: a sandbox
 * resolves tens of names, and the cap keeps the linear scans cheap. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_pins.h"

struct range {
	const char *net;
	unsigned prefix;
	enum net_addr_class cls;
};

/* RFC 6890 special-purpose registries, reduced to what rebinding abuses. */
static const struct range ranges[] = {
    {"0.0.0.0", 8, NET_ADDR_UNSPECIFIED},
    {"127.0.0.0", 8, NET_ADDR_LOOPBACK},
    {"10.0.0.0", 8, NET_ADDR_PRIVATE},
    {"172.16.0.0", 12, NET_ADDR_PRIVATE},
    {"192.168.0.0", 16, NET_ADDR_PRIVATE},
    {"100.64.0.0", 10, NET_ADDR_CGNAT},
    {"169.254.0.0", 16, NET_ADDR_LINKLOCAL},
    {"224.0.0.0", 4, NET_ADDR_MULTICAST},
    {"240.0.0.0", 4, NET_ADDR_RESERVED},
    {"::", 128, NET_ADDR_UNSPECIFIED},
    {"::1", 128, NET_ADDR_LOOPBACK},
    {"::", 96, NET_ADDR_RESERVED},
    {"::ffff:0:0", 96, NET_ADDR_RESERVED},
    {"fe80::", 10, NET_ADDR_LINKLOCAL},
    {"fc00::", 7, NET_ADDR_ULA},
    {"fec0::", 10, NET_ADDR_ULA},
    {"ff00::", 8, NET_ADDR_MULTICAST},
    /* Translators reach IPv4 (private or the host's own) behind the v6. */
    {"64:ff9b::", 96, NET_ADDR_TRANSLATED},
    {"64:ff9b:1::", 48, NET_ADDR_TRANSLATED},
    {"2002::", 16, NET_ADDR_TRANSLATED},
    {"2001::", 32, NET_ADDR_TRANSLATED},
};

enum net_addr_class net_addr_classify(const struct net_addr *a)
{
	static struct net_addr nets[sizeof(ranges) / sizeof(ranges[0])];
	static int parsed; /* each frame of a new flow classifies: parse once */

	if (!__atomic_load_n(&parsed, __ATOMIC_ACQUIRE)) {
		for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
			(void)net_addr_parse(ranges[i].net, &nets[i]); /* constants: cannot fail */
		__atomic_store_n(&parsed, 1, __ATOMIC_RELEASE);
	}
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (net_addr_in_prefix(a, &nets[i], ranges[i].prefix))
			return ranges[i].cls;
	return a->family ? NET_ADDR_PUBLIC : NET_ADDR_UNSPECIFIED;
}

const char *net_addr_class_name(enum net_addr_class c)
{
	static const char *const names[] = {
	    [NET_ADDR_PUBLIC] = "public",     [NET_ADDR_UNSPECIFIED] = "unspecified",
	    [NET_ADDR_LOOPBACK] = "loopback", [NET_ADDR_PRIVATE] = "private",
	    [NET_ADDR_CGNAT] = "cgnat",	      [NET_ADDR_LINKLOCAL] = "link-local",
	    [NET_ADDR_ULA] = "unique-local",  [NET_ADDR_MULTICAST] = "multicast",
	    [NET_ADDR_RESERVED] = "reserved",  [NET_ADDR_TRANSLATED] = "translated",
	};
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

int net_pins_init(struct net_pins *p, size_t max, uint32_t ttl_min, uint32_t ttl_max)
{
	memset(p, 0, sizeof(*p));
	p->max = max ? max : NET_PINS_MAX;
	p->ttl_min = ttl_min;
	p->ttl_max = ttl_max < ttl_min ? ttl_min : ttl_max;
	p->v = calloc(p->max, sizeof(*p->v));
	return p->v ? 0 : -ENOMEM;
}

void net_pins_free(struct net_pins *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

bool net_pins_answer_ok(const struct net_rules *r, const struct net_addr *a)
{
	if (net_addr_classify(a) == NET_ADDR_PUBLIC)
		return true;
	/* An explicit range rule (e.g. 10.1.0.0/16 for an internal registry)
	 * is the operator saying this name may live there. */
	for (size_t i = 0; i < r->n; i++) {
		const struct net_rule *x = &r->v[i];
		if (x->action == NET_ALLOW && x->kind == NET_RULE_CIDR &&
		    net_addr_in_prefix(a, &x->addr, x->prefix))
			return true;
	}
	return false;
}

static struct net_pin *victim(struct net_pins *p, uint64_t now_ms)
{
	size_t best = 0;

	net_pins_expire(p, now_ms);
	if (p->n < p->max)
		return &p->v[p->n++];
	for (size_t i = 1; i < p->n; i++)
		if (p->v[i].expires_ms < p->v[best].expires_ms)
			best = i;
	return &p->v[best];
}

int net_pins_add(struct net_pins *p, const char *name, const struct net_addr *a, uint32_t ttl,
		 uint64_t now_ms)
{
	struct net_pin *pin = NULL;

	if (ttl < p->ttl_min)
		ttl = p->ttl_min;
	if (ttl > p->ttl_max)
		ttl = p->ttl_max;
	for (size_t i = 0; i < p->n && !pin; i++)
		if (net_addr_equal(&p->v[i].addr, a) && !strcmp(p->v[i].name, name))
			pin = &p->v[i];
	if (!pin) {
		pin = victim(p, now_ms);
		snprintf(pin->name, sizeof(pin->name), "%s", name);
		pin->addr = *a;
	}
	pin->expires_ms = now_ms + (uint64_t)ttl * 1000;
	return 0;
}

bool net_pins_find(const struct net_pins *p, const struct net_addr *a, uint64_t now_ms,
		   bool any_age, bool (*fn)(void *opaque, const char *name), void *opaque)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct net_pin *pin = &p->v[i];
		if (!net_addr_equal(&pin->addr, a) || (!any_age && pin->expires_ms <= now_ms))
			continue;
		if (fn(opaque, pin->name))
			return true;
	}
	return false;
}

static void keep_if(struct net_pins *p, bool (*drop)(const struct net_pin *, const void *),
		    const void *arg)
{
	size_t j = 0;

	for (size_t i = 0; i < p->n; i++)
		if (!drop(&p->v[i], arg))
			p->v[j++] = p->v[i];
	p->n = j;
}

static bool drop_name(const struct net_pin *pin, const void *name)
{
	return !strcmp(pin->name, name);
}

static bool drop_old(const struct net_pin *pin, const void *now)
{
	return pin->expires_ms <= *(const uint64_t *)now;
}

void net_pins_forget(struct net_pins *p, const char *name)
{
	keep_if(p, drop_name, name);
}

void net_pins_expire(struct net_pins *p, uint64_t now_ms)
{
	keep_if(p, drop_old, &now_ms);
}
