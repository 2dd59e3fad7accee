/* The policy object (net_filter.h): set-up, rule and mode changes, and the
 * dry run behind `mvm net check`. Frames are decided in net_filter.c, DNS
 * in net_filter_dns.c, destinations and names in net_decide.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/mono_time.h"
#include "net_filter.h"
#include "devices/netpolicy/net_decide.h"
#include "devices/netpolicy/net_events.h"
#include "devices/netpolicy/net_track.h"

static uint64_t mono_ms(void *opaque)
{
	return mono_now_ms();
}

int net_policy_init(struct net_policy *p, enum net_mode mode)
{
	memset(p, 0, sizeof(*p));
	net_rules_init(&p->rules, mode);
	net_config_default(&p->cfg);
	p->clock_ms = mono_ms;
	if (net_track_init(p))
		return -ENOMEM;
	if (net_pins_init(&p->pins, 0, p->cfg.ttl_min, p->cfg.ttl_max)) {
		net_track_free(p);
		return -ENOMEM;
	}
	p->tokens_milli = (uint64_t)p->cfg.ev_burst * 1000;
	return 0;
}

void net_policy_free(struct net_policy *p)
{
	net_policy_flush_events(p);
	net_rules_free(&p->rules);
	net_pins_free(&p->pins);
	net_track_free(p);
}

static void after_load(struct net_policy *p)
{
	p->pins.ttl_min = p->cfg.ttl_min;
	p->pins.ttl_max = p->cfg.ttl_max;
	p->bucket_ms = now_ms(p);
	p->tokens_milli = (uint64_t)p->cfg.ev_burst * 1000;
}

int net_policy_load(struct net_policy *p, const char *path, char *err, size_t errlen)
{
	int rc = net_policy_load_file(path, &p->rules, &p->cfg, err, errlen);

	if (!rc)
		after_load(p);
	return rc;
}

int net_policy_load_json(struct net_policy *p, const char *json, size_t len, char *err,
			 size_t errlen)
{
	int rc = net_policy_parse_json(json, len, &p->rules, &p->cfg, err, errlen);

	if (!rc)
		after_load(p);
	return rc;
}

int net_policy_allow(struct net_policy *p, const char *rule, char *err, size_t errlen)
{
	return net_rules_add(&p->rules, NET_ALLOW, rule, err, errlen);
}

int net_policy_deny(struct net_policy *p, const char *rule, char *err, size_t errlen)
{
	return net_rules_add(&p->rules, NET_DENY, rule, err, errlen);
}

int net_policy_remove(struct net_policy *p, const char *rule)
{
	return net_rules_remove(&p->rules, rule);
}

void net_policy_set_mode(struct net_policy *p, enum net_mode mode)
{
	net_rules_set_mode(&p->rules, mode);
}

void net_policy_set_events(struct net_policy *p, net_event_fn fn, void *opaque)
{
	p->on_event = fn;
	p->event_opaque = opaque;
}

void net_policy_set_clock(struct net_policy *p, uint64_t (*fn)(void *), void *opaque)
{
	p->clock_ms = fn ? fn : mono_ms;
	p->clock_opaque = opaque;
	p->bucket_ms = now_ms(p);
}

/* ---- dry run ---- */

static int check_name(struct net_policy *p, const struct net_rule *r, uint16_t port, unsigned proto,
		      char *why, size_t wl)
{
	const struct net_rule *a;

	if (!net_name_allowed(p, r->name, why, wl))
		return 0;
	a = net_rules_find_name_port(&p->rules, NET_DENY, r->name, port, proto);
	if (a) {
		snprintf(why, wl, "denied by rule %s", a->text);
		return 0;
	}
	if (p->rules.mode == NET_MODE_OPEN)
		return 1;
	a = net_rules_find_name_port(&p->rules, NET_ALLOW, r->name, port, proto);
	if (!a) {
		snprintf(why, wl, "name resolves, but no rule admits port %u/%s", port,
			 proto == NET_P_UDP ? "udp" : "tcp");
		return 0;
	}
	snprintf(why, wl, "allowed by rule %s (for addresses resolved for it)", a->text);
	return 1;
}

int net_policy_check(struct net_policy *p, const char *spec, char *why, size_t whylen)
{
	struct net_rule r;
	char name[NET_NAME_MAX + 1];
	unsigned proto;
	uint16_t port;
	struct net_addr dst;

	if (net_rule_parse(spec, NET_ALLOW, &r, why, whylen))
		return -EINVAL;
	if (r.port_lo != r.port_hi || r.kind == NET_RULE_SUFFIX) {
		snprintf(why, whylen, "check one host and one port, e.g. example.com:443/tcp");
		return -EINVAL;
	}
	port = r.port_lo;
	proto = r.protos == NET_P_ANY ? NET_P_TCP : r.protos;
	if (r.kind == NET_RULE_NAME)
		return check_name(p, &r, port, proto, why, whylen);
	if (r.kind == NET_RULE_CIDR && r.prefix != (r.addr.family == AF_INET ? 32u : 128u)) {
		snprintf(why, whylen, "check one address, not a prefix");
		return -EINVAL;
	}
	dst = r.kind == NET_RULE_HOST_LOOPBACK ? p->cfg.gw4 : r.addr;
	if (port == 53) {
		snprintf(why, whylen,
			 net_is_vdns(p, &dst) ? "DNS: answered by the policy"
					  : "DNS to a resolver other than the virtual one");
		return net_is_vdns(p, &dst) && p->rules.mode != NET_MODE_NONE;
	}
	return net_decide(p, &dst, port, proto, false, name, why, whylen);
}
