/*
 * The ceiling on allow rules a remote caller may add (operator_policy.h):
 * public address space only, no wide prefixes, unless the operator's
 * --allow-max rules cover the rule. Pure: no I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "tools/sandbox/operator_policy.h"

#define V4_WIDEST 16
#define V6_WIDEST 48

struct range {
	const char *net;
	unsigned prefix;
	const char *what;
};

/* What a caller may not reach by default (RFC 6890 special-purpose space a
 * sandbox has no business with; the documentation ranges stay reachable). */
static const struct range refused[] = {
	{ "0.0.0.0", 8, "\"this network\"" },
	{ "10.0.0.0", 8, "a private range" },
	{ "100.64.0.0", 10, "the CGNAT range" },
	{ "127.0.0.0", 8, "loopback" },
	{ "169.254.0.0", 16, "link-local" },
	{ "172.16.0.0", 12, "a private range" },
	{ "192.0.0.0", 24, "IETF protocol assignments" },
	{ "192.168.0.0", 16, "a private range" },
	{ "198.18.0.0", 15, "the benchmarking range" },
	{ "224.0.0.0", 4, "multicast" },
	{ "240.0.0.0", 4, "reserved space" },
	{ "::", 128, "the unspecified address" },
	{ "::1", 128, "loopback" },
	{ "::ffff:0:0", 96, "IPv4-mapped space" },
	{ "64:ff9b::", 96, "NAT64 space (it maps onto IPv4)" },
	{ "fc00::", 7, "a private range (unique local)" },
	{ "fe80::", 10, "link-local" },
	{ "fec0::", 10, "site-local (the sandbox network itself)" },
	{ "ff00::", 8, "multicast" },
};

static int deny(char *err, size_t cap, const char *rule, const char *why)
{
	snprintf(err, cap, "allow rule '%.200s' is beyond the operator's ceiling: %s "
		 "(an operator's --allow-max FILE can permit it)", rule, why);
	return -EPERM;
}

/* Do the prefixes a/pa and b/pb share an address? (One contains the other.) */
static bool overlap(const struct net_addr *a, unsigned pa, const struct net_addr *b, unsigned pb)
{
	if (a->family != b->family)
		return false;
	return pa <= pb ? net_addr_in_prefix(b, a, pa) : net_addr_in_prefix(a, b, pb);
}

static bool ports_within(const struct net_rule *r, const struct net_rule *m)
{
	return r->port_lo >= m->port_lo && r->port_hi <= m->port_hi && (r->protos & ~m->protos) == 0;
}

/* @name equals @base or is a subdomain of it. */
static bool name_under(const char *name, const char *base)
{
	size_t n = strlen(name), b = strlen(base);

	return !strcmp(name, base) || (n > b && name[n - b - 1] == '.' && !strcmp(name + n - b, base));
}

/* Does the operator's rule @m admit everything @r admits? */
static bool covers(const struct net_rule *m, const struct net_rule *r)
{
	if (m->action != NET_ALLOW || !ports_within(r, m))
		return false;
	switch (r->kind) {
	case NET_RULE_HOST_LOOPBACK:
		return m->kind == NET_RULE_HOST_LOOPBACK;
	case NET_RULE_CIDR:
		return m->kind == NET_RULE_CIDR && m->addr.family == r->addr.family &&
		       m->prefix <= r->prefix && net_addr_in_prefix(&r->addr, &m->addr, m->prefix);
	case NET_RULE_NAME:
		return (m->kind == NET_RULE_NAME && !strcmp(m->name, r->name)) ||
		       (m->kind == NET_RULE_SUFFIX && name_under(r->name, m->name) &&
			strcmp(r->name, m->name));
	case NET_RULE_SUFFIX:
		return m->kind == NET_RULE_SUFFIX && name_under(r->name, m->name);
	}
	return false;
}

/* The default ceiling for a CIDR rule: 0 or -EPERM. */
static int check_cidr(const struct op_policy *p, const struct net_rule *r, char *err, size_t cap)
{
	unsigned widest = r->addr.family == AF_INET6 ? V6_WIDEST : V4_WIDEST;
	char why[160];

	if (r->prefix < widest) {
		snprintf(why, sizeof(why), "a prefix wider than /%u", widest);
		return deny(err, cap, r->text, why);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct net_addr a;

		if (net_addr_parse(refused[i].net, &a))
			continue;
		if (overlap(&r->addr, r->prefix, &a, refused[i].prefix))
			return deny(err, cap, r->text, refused[i].what);
	}
	for (size_t i = 0; i < p->n_host_addrs; i++)
		if (net_addr_in_prefix(&p->host_addrs[i], &r->addr, r->prefix))
			return deny(err, cap, r->text, "one of the host's own addresses");
	return 0;
}

int op_check_allow_rule(const struct op_policy *p, const char *rule, char *err, size_t cap)
{
	struct net_rule r;
	char why[NET_NAME_MAX + 64];

	if (net_rule_parse(rule, NET_ALLOW, &r, why, sizeof(why))) {
		snprintf(err, cap, "invalid allow rule '%.200s': %s", rule, why);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->allow_max.n; i++)
		if (covers(&p->allow_max.v[i], &r))
			return 0;
	switch (r.kind) {
	case NET_RULE_HOST_LOOPBACK:
		return deny(err, cap, rule, "host-loopback reaches the host's own services");
	case NET_RULE_CIDR:
		return check_cidr(p, &r, err, cap);
	case NET_RULE_SUFFIX:
		if (!strchr(r.name, '.'))
			return deny(err, cap, rule, "a whole top-level domain");
		return 0;
	case NET_RULE_NAME:
		if (!strcmp(r.name, "localhost") || name_under(r.name, "localhost"))
			return deny(err, cap, rule, "localhost is the host itself");
		return 0;
	}
	return 0;
}
