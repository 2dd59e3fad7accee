/* Denial events of the network policy: token-bucket rate limit, as events.jsonl events. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "common/events.h"
#include "devices/netpolicy/net_events.h"

/* ---- events, rate-limited by a token bucket ---- */

static void refill(struct net_policy *p, uint64_t now)
{
	uint64_t cap = (uint64_t)p->cfg.ev_burst * 1000;

	if (now > p->bucket_ms)
		p->tokens_milli += (now - p->bucket_ms) * p->cfg.ev_rate;
	if (p->tokens_milli > cap)
		p->tokens_milli = cap;
	p->bucket_ms = now;
}

static void emit_summary(struct net_policy *p)
{
	struct net_event ev;

	if (!p->suppressed || !p->on_event)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.time_ms = event_now_ms();
	ev.type = "net-deny-suppressed";
	ev.proto = "";
	ev.suppressed = p->suppressed;
	snprintf(ev.reason, sizeof(ev.reason), "rate limit");
	p->suppressed = 0;
	p->on_event(p->event_opaque, &ev);
}

void net_policy_flush_events(struct net_policy *p)
{
	emit_summary(p);
}

static void emit(struct net_policy *p, struct net_event *ev)
{
	refill(p, now_ms(p));
	if (p->tokens_milli < 1000) {
		p->suppressed++;
		return;
	}
	p->tokens_milli -= 1000;
	emit_summary(p);
	ev->time_ms = event_now_ms();
	ev->type = "net-deny";
	if (p->on_event)
		p->on_event(p->event_opaque, ev);
}

static const char *proto_name(const struct net_pkt *k)
{
	switch (k->proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	default:
		return k->family ? "ip" : "eth";
	}
}

void net_deny_event(struct net_policy *p, const struct net_pkt *k, const char *proto,
		    const char *name, const char *reason)
{
	struct net_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.proto = proto ? proto : proto_name(k);
	if (k && k->family) {
		ev.dst = k->dst;
		ev.port = k->dport;
	}
	snprintf(ev.name, sizeof(ev.name), "%s", name ? name : "");
	snprintf(ev.reason, sizeof(ev.reason), "%s", reason);
	emit(p, &ev);
}

cJSON *net_event_json(const struct net_event *ev)
{
	cJSON *j = event_new(ev->type, ev->time_ms);
	char abuf[64];

	if (ev->suppressed) {
		cJSON_AddNumberToObject(j, "suppressed", (double)ev->suppressed);
		return j;
	}
	cJSON_AddStringToObject(j, "proto", ev->proto);
	if (ev->dst.family)
		cJSON_AddStringToObject(j, "dst", net_addr_format(&ev->dst, abuf, sizeof(abuf)));
	else
		cJSON_AddNullToObject(j, "dst");
	cJSON_AddNumberToObject(j, "port", ev->port);
	if (ev->name[0])
		cJSON_AddStringToObject(j, "name", ev->name);
	else
		cJSON_AddNullToObject(j, "name");
	cJSON_AddStringToObject(j, "reason", ev->reason);
	return j;
}

int net_event_to_json(const struct net_event *ev, char *buf, size_t cap)
{
	cJSON *j = net_event_json(ev);
	int n = j ? event_format(j, buf, cap) : -ENOMEM;

	cJSON_Delete(j);
	return n;
}

void net_event_log_json(void *opaque, const struct net_event *ev)
{
	if (opaque)
		(void)event_append(opaque, net_event_json(ev));
}
