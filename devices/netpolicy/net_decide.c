/* Which destinations and names the guest may reach (net_decide.h): rules,
 * DNS pins and the special address ranges, in every mode. */
#include <arpa/inet.h>
#include <stdio.h>

#include "devices/netpolicy/net_decide.h"
#include "devices/netpolicy/net_events.h"

struct pin_ctx {
	const struct net_rules *r;
	uint16_t port;
	unsigned proto;
	const struct net_rule *rule;
	char name[NET_NAME_MAX + 1];
};

static bool pin_admits(void *opaque, const char *name)
{
	struct pin_ctx *c = opaque;

	if (net_rules_find_name_port(c->r, NET_DENY, name, c->port, c->proto))
		return false;
	c->rule = net_rules_find_name_port(c->r, NET_ALLOW, name, c->port, c->proto);
	if (c->rule)
		snprintf(c->name, sizeof(c->name), "%s", name);
	return c->rule != NULL;
}

/* The gateway is host loopback and the DNS address maps to the host's
 * resolver in slirp: only a rule naming exactly that host opens them. */
static bool decide_virtual(const struct net_policy *p, const struct net_addr *dst, uint16_t port,
			   unsigned proto, char *why, size_t wl)
{
	const struct net_config *c = &p->cfg;
	const struct net_rule *r = NULL;
	bool gw = net_addr_equal(dst, &c->gw4) || net_addr_equal(dst, &c->gw6);

	if (gw && (r = net_rules_find_loopback(&p->rules, NET_DENY, port, proto))) {
		snprintf(why, wl, "denied by rule %s", r->text);
		return false;
	}
	if (gw)
		r = net_rules_find_loopback(&p->rules, NET_ALLOW, port, proto);
	if (!r)
		r = net_rules_find_addr(&p->rules, NET_ALLOW, dst, port, proto, true);
	if (r && p->rules.mode != NET_MODE_NONE) {
		snprintf(why, wl, "allowed by rule %s", r->text);
		return true;
	}
	snprintf(why, wl, gw ? "host-loopback" : "virtual-network");
	return false;
}

static bool in_virtual_net(const struct net_config *c, const struct net_addr *a)
{
	return net_addr_in_prefix(a, &c->net4, c->prefix4) ||
	       net_addr_in_prefix(a, &c->net6, c->prefix6);
}

static bool is_host_addr(const struct net_policy *p, const struct net_addr *a)
{
	for (size_t i = 0; i < p->n_host_addrs; i++)
		if (net_addr_equal(&p->host_addrs[i], a))
			return true;
	return false;
}

/* Special destinations, in every mode. Loopback, unspecified, v4-mapped and
 * reserved addresses would make slirp connect to the host itself (a crafted
 * frame can carry any destination): never. The host's own addresses: only
 * a rule naming that address (as for the gateway). Private, CGNAT,
 * link-local (the cloud metadata service), unique-local and translated
 * (NAT64, 6to4, Teredo): only an allow CIDR rule covering them, and only
 * for the rule's ports and protocols, even in open mode. */
static bool special_dst_ok(const struct net_policy *p, const struct net_addr *dst, uint16_t port,
			   unsigned proto, char *why, size_t wl)
{
	enum net_addr_class c = net_addr_classify(dst);

	switch (c) {
	case NET_ADDR_PUBLIC:
	case NET_ADDR_PRIVATE:
	case NET_ADDR_CGNAT:
	case NET_ADDR_LINKLOCAL:
	case NET_ADDR_ULA:
	case NET_ADDR_TRANSLATED:
		break;
	default:
		snprintf(why, wl, "%s destination", net_addr_class_name(c));
		return false;
	}
	if (is_host_addr(p, dst)) {
		if (net_rules_find_addr(&p->rules, NET_ALLOW, dst, port, proto, true))
			return true;
		snprintf(why, wl, "host address");
		return false;
	}
	if (c == NET_ADDR_PUBLIC ||
	    net_rules_find_addr(&p->rules, NET_ALLOW, dst, port, proto, false))
		return true;
	snprintf(why, wl, "%s destination", net_addr_class_name(c));
	return false;
}

/* Rebinding guard for a DNS answer: the pins' rule, and the host's own
 * addresses only when a rule names the address. */
bool net_answer_ok(const struct net_policy *p, const struct net_addr *a)
{
	if (!net_pins_answer_ok(&p->rules, a))
		return false;
	if (!is_host_addr(p, a))
		return true;
	for (size_t i = 0; i < p->rules.n; i++) {
		const struct net_rule *r = &p->rules.v[i];
		if (r->action == NET_ALLOW && r->kind == NET_RULE_CIDR &&
		    r->prefix == (a->family == AF_INET ? 32u : 128u) && net_addr_equal(&r->addr, a))
			return true;
	}
	return false;
}

/* May the guest open (dst, port, proto)? @name receives the pinned name that
 * admitted it, if any. @any_age: accept expired pins (re-checks of
 * established connections must not die with a TTL). */
bool net_decide(struct net_policy *p, const struct net_addr *dst, uint16_t port, unsigned proto,
		   bool any_age, char *name, char *why, size_t wl)
{
	const struct net_rules *rs = &p->rules;
	const struct net_rule *r;
	struct pin_ctx pc = {.r = rs, .port = port, .proto = proto};

	name[0] = '\0';
	r = net_rules_find_addr(rs, NET_DENY, dst, port, proto, false);
	if (r) {
		snprintf(why, wl, "denied by rule %s", r->text);
		return false;
	}
	if (in_virtual_net(&p->cfg, dst))
		return decide_virtual(p, dst, port, proto, why, wl);
	if (!special_dst_ok(p, dst, port, proto, why, wl))
		return false;
	if (rs->mode == NET_MODE_NONE) {
		snprintf(why, wl, "mode none");
		return false;
	}
	if (rs->mode == NET_MODE_OPEN) {
		snprintf(why, wl, "mode open");
		return true;
	}
	r = net_rules_find_addr(rs, NET_ALLOW, dst, port, proto, false);
	if (r) {
		snprintf(why, wl, "allowed by rule %s", r->text);
		return true;
	}
	if (net_pins_find(&p->pins, dst, now_ms(p), any_age, pin_admits, &pc)) {
		snprintf(name, NET_NAME_MAX + 1, "%s", pc.name);
		snprintf(why, wl, "pinned for %s by rule %s", pc.name, pc.rule->text);
		return true;
	}
	snprintf(why, wl, "not-allowlisted");
	return false;
}

/* A deny rule for a name with a port or protocol (deny example.com:22)
 * only closes that port; without, it also stops resolution. */
static const struct net_rule *name_denied(const struct net_rules *rs, const char *name)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct net_rule *x = &rs->v[i];
		if (x->action == NET_DENY && x->port_lo == 0 && x->port_hi == 65535 &&
		    x->protos == NET_P_ANY && net_rule_match_name(x, name))
			return x;
	}
	return NULL;
}

/* May the guest resolve @name? Deny rules win in every mode. */
bool net_name_allowed(const struct net_policy *p, const char *name, char *why, size_t wl)
{
	const struct net_rule *r = name_denied(&p->rules, name);

	if (r) {
		snprintf(why, wl, "denied by rule %s", r->text);
		return false;
	}
	if (p->rules.mode == NET_MODE_OPEN) {
		snprintf(why, wl, "mode open");
		return true;
	}
	r = p->rules.mode == NET_MODE_ALLOWLIST ? net_rules_find_name(&p->rules, NET_ALLOW, name)
						: NULL;
	if (r) {
		snprintf(why, wl, "allowed by rule %s", r->text);
		return true;
	}
	snprintf(why, wl, p->rules.mode == NET_MODE_NONE ? "mode none" : "name not allowlisted");
	return false;
}

bool net_is_vdns(const struct net_policy *p, const struct net_addr *a)
{
	return net_addr_equal(a, &p->cfg.dns4) || net_addr_equal(a, &p->cfg.dns6);
}
