/* The network policy decision for guest frames (see net_filter.h and
 * docs/network-policy.md): rules + DNS pins + connection tracking; events
 * are formatted and rate-limited in net_events.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/mono_time.h"
#include "net_filter.h"
#include "devices/netpolicy/net_events.h"
#include "devices/netpolicy/net_track.h"

static uint64_t mono_ms(void *opaque)
{
	return mono_now_ms();
}

/* ---- policy object ---- */

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

/* ---- the address decision ---- */

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
static bool answer_ok(const struct net_policy *p, const struct net_addr *a)
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
static bool decide(struct net_policy *p, const struct net_addr *dst, uint16_t port, unsigned proto,
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
static bool name_allowed(const struct net_policy *p, const char *name, char *why, size_t wl)
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

/* ---- replies ---- */

static enum net_verdict drop(struct net_filter_result *out, const char *why)
{
	out->why = why;
	return out->verdict = NET_DROP;
}

static enum net_verdict pass(struct net_filter_result *out, const char *why)
{
	out->why = why;
	return out->verdict = NET_PASS;
}

static enum net_verdict answer_rst(struct net_filter_result *out, const struct net_pkt *k,
				   const char *why)
{
	out->why = why;
	if (net_build_tcp_rst(k, out->reply, sizeof(out->reply), &out->reply_len))
		return drop(out, why);
	return out->verdict = NET_ANSWER;
}

static enum net_verdict answer_unreach(struct net_filter_result *out, const struct net_pkt *k,
				       const char *why)
{
	out->why = why;
	if (net_build_unreach(k, out->reply, sizeof(out->reply), &out->reply_len))
		return drop(out, why);
	return out->verdict = NET_ANSWER;
}

/* Deny a new flow the way that makes the guest fail fast: RST for TCP,
 * ICMP administratively prohibited for everything else. */
static enum net_verdict refuse(struct net_policy *p, struct net_filter_result *out,
			       const struct net_pkt *k, const char *name, const char *reason)
{
	net_deny_event(p, k, NULL, name, reason);
	if (k->proto == IPPROTO_TCP)
		return answer_rst(out, k, "denied");
	return answer_unreach(out, k, "denied");
}

/* ---- DNS to the virtual nameserver ---- */

static bool is_vdns(const struct net_policy *p, const struct net_addr *a)
{
	return net_addr_equal(a, &p->cfg.dns4) || net_addr_equal(a, &p->cfg.dns6);
}

static enum net_verdict dns_reply(struct net_filter_result *out, const struct net_pkt *k,
				  const uint8_t *msg, size_t mlen, const char *why)
{
	out->why = why;
	if (net_build_udp_reply(k, msg, mlen, out->reply, sizeof(out->reply), &out->reply_len))
		return drop(out, "reply too large");
	return out->verdict = NET_ANSWER;
}

static enum net_verdict dns_error(struct net_filter_result *out, const struct net_pkt *k,
				  const uint8_t *query, const struct dns_query *q, unsigned rcode,
				  const char *why)
{
	uint8_t msg[DNS_UDP_MAX];
	size_t mlen;

	if (dns_build_error(query, q, rcode, msg, sizeof(msg), &mlen))
		return drop(out, "dns reply too large");
	return dns_reply(out, k, msg, mlen, why);
}

/* A blocked name is answered here and never forwarded: a forwarded query
 * for <secret>.evil.example.com is itself the exfiltration. */
static enum net_verdict dns_udp(struct net_policy *p, const struct net_pkt *k,
				struct net_filter_result *out)
{
	const uint8_t *msg = k->frame + k->data_off;
	struct dns_query q;
	char why[NET_REASON_MAX];
	int rc = dns_parse_query(msg, k->data_len, &q);

	if (rc) {
		net_deny_event(p, k, "dns", NULL, "malformed DNS query");
		return drop(out, "malformed DNS query");
	}
	if (q.opcode != 0) /* RFC 1035 §4.1.1: only standard queries */
		return dns_error(out, k, msg, &q, DNS_RCODE_NOTIMP, "dns opcode");
	if (p->rules.mode == NET_MODE_NONE || q.qclass != DNS_C_IN) {
		net_deny_event(p, k, "dns", q.name,
			   p->rules.mode == NET_MODE_NONE ? "mode none" : "dns class not IN");
		return dns_error(out, k, msg, &q, DNS_RCODE_REFUSED, "dns refused");
	}
	if (!name_allowed(p, q.name, why, sizeof(why))) {
		net_deny_event(p, k, "dns", q.name, why);
		return dns_error(out, k, msg, &q, DNS_RCODE_NXDOMAIN, "dns blocked name");
	}
	memset(&out->dns, 0, sizeof(out->dns));
	out->dns.pkt = *k;
	out->dns.pkt.frame = NULL;
	out->dns.q = q;
	memcpy(out->dns.msg, msg, q.question_end);
	out->why = "dns resolve";
	return out->verdict = NET_RESOLVE;
}

/* The queries in one DNS-over-TCP segment: whole length-prefixed messages
 * (RFC 7766 §8 lets a client split one, but then the name would pass
 * unchecked), each a well-formed query for an allowed name with nothing
 * after it. A blocked name cannot be answered in-stream (slirp carries the
 * connection): the guest gets a RST and the segment is never forwarded. */
static enum net_verdict dns_tcp_queries(struct net_policy *p, const struct net_pkt *k,
					struct net_filter_result *out)
{
	const uint8_t *buf = k->frame + k->data_off, *msg;
	size_t left = k->data_len, mlen;
	struct dns_query q;
	char why[NET_REASON_MAX];

	while (left) {
		int used = dns_tcp_unframe(buf, left, &msg, &mlen);
		if (used <= 0 || dns_parse_query(msg, mlen, &q) || q.opcode != 0) {
			net_deny_event(p, k, "dns", NULL, "DNS over TCP: split or malformed query");
			return answer_rst(out, k, "dns tcp malformed");
		}
		if (!name_allowed(p, q.name, why, sizeof(why))) {
			net_deny_event(p, k, "dns", q.name, why);
			return answer_rst(out, k, "dns blocked name");
		}
		buf += used;
		left -= (size_t)used;
	}
	return pass(out, "dns tcp");
}

static bool seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

/* DNS over TCP to the virtual nameserver: slirp reassembles the stream, so
 * checking segments is only sound if slirp receives exactly the segments
 * checked, in order, whole. A segment with data passes only when it starts
 * at the next byte, slirp has acknowledged everything before it (its ACK
 * is the truth: slirp's stream then ends on a query boundary, whatever
 * SYNs or RSTs the guest sent) and it fits slirp's window (so slirp keeps
 * all of it). Segments slirp already holds entirely pass: it discards
 * them. Out of order, overlapping, after FIN, or urgent data (slirp sends
 * it out of band, which takes it out of the resolver's stream): dropped. */
static enum net_verdict dns_tcp_stream(struct net_policy *p, struct net_conn *c,
				       const struct net_pkt *k, struct net_filter_result *out)
{
	uint32_t end = k->seq + (uint32_t)k->data_len;

	if (k->tcp_flags & NET_TCP_URG) {
		net_deny_event(p, k, "dns", NULL, "DNS over TCP: urgent data");
		return answer_rst(out, k, "dns tcp urgent");
	}
	if (!k->data_len)
		return pass(out, "dns tcp control");
	if (c->ack_known && seq_le(end, c->slirp_ack))
		return pass(out, "dns tcp retransmission slirp holds");
	if (k->seq != c->next_seq || (c->fin & 1)) {
		net_deny_event(p, k, "dns", NULL, "DNS over TCP: segment out of order");
		return drop(out, "dns tcp out of order");
	}
	if (!c->ack_known || c->slirp_ack != c->next_seq || k->data_len > c->slirp_win)
		return drop(out, "dns tcp: slirp has not acknowledged"); /* the guest retransmits */
	if (dns_tcp_queries(p, k, out) != NET_PASS)
		return out->verdict;
	c->next_seq = end;
	return NET_PASS;
}

static enum net_verdict dns_pending_reply(struct net_policy *p, const struct net_dns_pending *q,
					  const struct dns_addr_rec *addrs, size_t n,
					  struct net_filter_result *out)
{
	uint8_t msg[DNS_UDP_MAX];
	size_t mlen;

	if (dns_build_answer(q->msg, &q->q, addrs, n, msg, sizeof(msg), &mlen))
		return drop(out, "dns reply too large");
	return dns_reply(out, &q->pkt, msg, mlen, "dns answer");
}

/* Pin what is safe to pin; the guest's answer carries only those records,
 * with a TTL no longer than the pin so its cache never outlives the pin. */
enum net_verdict net_filter_dns_answer(struct net_policy *p, const struct net_dns_pending *q,
				       const struct dns_addr_rec *addrs, size_t n,
				       struct net_filter_result *out)
{
	struct dns_addr_rec keep[DNS_MAX_ADDRS];
	size_t nk = 0;
	uint64_t now = now_ms(p);
	char reason[NET_REASON_MAX];

	memset(out, 0, offsetof(struct net_filter_result, reply));
	/* The rules may have changed while the glue was resolving. */
	if (!name_allowed(p, q->q.name, reason, sizeof(reason)))
		return dns_error(out, &q->pkt, q->msg, &q->q, DNS_RCODE_NXDOMAIN,
				 "dns name no longer allowed");
	for (size_t i = 0; i < n && nk < DNS_MAX_ADDRS; i++) {
		if (!answer_ok(p, &addrs[i].addr)) {
			snprintf(reason, sizeof(reason), "rebinding: answer in %s range",
				 net_addr_class_name(net_addr_classify(&addrs[i].addr)));
			struct net_pkt k = q->pkt;
			k.dst = addrs[i].addr;
			k.dport = 0;
			net_deny_event(p, &k, "dns", q->q.name, reason);
			continue;
		}
		keep[nk] = addrs[i];
		if (keep[nk].ttl > p->cfg.ttl_max)
			keep[nk].ttl = p->cfg.ttl_max;
		net_pins_add(&p->pins, q->q.name, &addrs[i].addr, addrs[i].ttl, now);
		nk++;
	}
	return dns_pending_reply(p, q, keep, nk, out);
}

enum net_verdict net_filter_dns_response(struct net_policy *p, const struct net_dns_pending *q,
					 const uint8_t *msg, size_t len,
					 struct net_filter_result *out)
{
	struct dns_answer a;

	if (dns_parse_answer(msg, len, &a) || strcmp(a.qname, q->q.name))
		return net_filter_dns_fail(p, q, DNS_RCODE_SERVFAIL, out);
	if (a.rcode != DNS_RCODE_NOERROR)
		return net_filter_dns_fail(p, q, a.rcode, out);
	return net_filter_dns_answer(p, q, a.addrs, a.n_addrs, out);
}

enum net_verdict net_filter_dns_fail(struct net_policy *p, const struct net_dns_pending *q,
				     unsigned rcode, struct net_filter_result *out)
{
	memset(out, 0, offsetof(struct net_filter_result, reply));
	return dns_error(out, &q->pkt, q->msg, &q->q, rcode, "dns error");
}

/* ---- the frame decision ---- */

static bool is_group(const struct net_addr *a)
{
	return a->family == AF_INET ? a->b[0] >= 224 : a->b[0] == 0xff;
}

static unsigned proto_bit(const struct net_pkt *k)
{
	return k->proto == IPPROTO_TCP	 ? NET_P_TCP
	       : k->proto == IPPROTO_UDP ? NET_P_UDP
					 : NET_P_ICMP;
}

/* Traffic that runs the virtual link itself: DHCPv4 (RFC 2131) and IPv6
 * router/neighbour discovery (RFC 4861 §6.1, §7.1: hop limit 255 proves
 * it never left the link). Everything else multicast is dropped quietly. */
static bool link_traffic(const struct net_policy *p, const struct net_pkt *k)
{
	static const uint8_t bcast[4] = {255, 255, 255, 255};

	/* slirp answers BOOTP only to its own address or broadcast and sends
	 * anything else out for real: a tunnel to anyhost:67, so not exempt. */
	if (k->proto == IPPROTO_UDP && k->family == AF_INET && k->sport == 68 && k->dport == 67 &&
	    (!memcmp(k->dst.b, bcast, 4) || net_addr_equal(&k->dst, &p->cfg.gw4)))
		return p->cfg.allow_dhcp;
	if (k->proto == IPPROTO_ICMPV6 && k->icmp_type >= 133 && k->icmp_type <= 136)
		return k->hop_limit == 255;
	return false;
}

static enum net_verdict tcp_syn(struct net_policy *p, const struct net_pkt *k, bool vdns,
				struct net_filter_result *out)
{
	char why[NET_REASON_MAX], name[NET_NAME_MAX + 1] = "";
	uint64_t now = now_ms(p);
	struct net_conn *c;
	bool full;

	if (vdns && k->data_len) { /* slirp would take it in after the check */
		net_deny_event(p, k, "dns", NULL, "DNS over TCP: data on SYN");
		return answer_rst(out, k, "dns tcp data on syn");
	}
	if (vdns ? p->rules.mode == NET_MODE_NONE
		 : !decide(p, &k->dst, k->dport, NET_P_TCP, false, name, why, sizeof(why)))
		return refuse(p, out, k, vdns ? NULL : name, vdns ? "mode none" : why);
	c = net_conn_add(p, k, false, now, &full);
	if (!c) {
		if (full)
			snprintf(why, sizeof(why), "connection table full");
		else
			snprintf(why, sizeof(why), "connection limit (%u) reached",
				 p->cfg.max_conns);
		return refuse(p, out, k, NULL, why);
	}
	if (vdns && (!c->vdns || c->isn != k->seq)) { /* new, or a new ISN: see dns_tcp_stream */
		c->vdns = true;
		c->isn = k->seq;
		c->next_seq = k->seq + 1;
		c->ack_known = false;
	}
	return pass(out, "tcp syn admitted");
}

static enum net_verdict tcp_segment(struct net_policy *p, const struct net_pkt *k,
				    struct net_filter_result *out)
{
	char why[NET_REASON_MAX], name[NET_NAME_MAX + 1];
	uint64_t now = now_ms(p);
	bool vdns = k->dport == 53 && is_vdns(p, &k->dst);
	struct net_conn *c;

	if (net_pkt_is_syn(k))
		return tcp_syn(p, k, vdns, out);
	c = net_conn_find(p, k, false, now);
	if (!c) {
		if (!(k->tcp_flags & NET_TCP_RST))
			net_deny_event(p, k, NULL, NULL, "no admitted connection");
		return drop(out, "no admitted connection");
	}
	/* Rules changed since admission: re-check so a deny takes effect now. */
	if (c->gen != p->rules.gen && !vdns && !c->inbound &&
	    !decide(p, &k->dst, k->dport, NET_P_TCP, true, name, why, sizeof(why))) {
		net_conn_closed(p, c, true);
		return refuse(p, out, k, name, why);
	}
	c->gen = p->rules.gen;
	c->last_ms = now;
	if (c->vdns && dns_tcp_stream(p, c, k, out) != NET_PASS)
		return out->verdict;
	if (k->tcp_flags & NET_TCP_RST)
		net_conn_closed(p, c, true);
	else if (k->tcp_flags & NET_TCP_FIN && (c->fin |= 1) == 3)
		net_conn_closed(p, c, false);
	return pass(out, "tcp established");
}

/* A datagram or echo that the policy admitted holds a slirp socket. */
static enum net_verdict dgram_flow(struct net_policy *p, const struct net_pkt *k,
				   struct net_filter_result *out)
{
	char why[NET_REASON_MAX];
	int rc = net_flow_use(p, k, now_ms(p));

	if (rc == -EEXIST)
		return drop(out, "echo already in flight");
	if (rc) {
		snprintf(why, sizeof(why), "flow limit (%u) reached", p->cfg.max_flows);
		return refuse(p, out, k, NULL, why);
	}
	return pass(out, "allowed");
}

static enum net_verdict ip_packet(struct net_policy *p, const struct net_pkt *k,
				  struct net_filter_result *out)
{
	char why[NET_REASON_MAX], name[NET_NAME_MAX + 1];
	bool icmp = k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6;

	if (link_traffic(p, k))
		return pass(out, "link");
	if (is_group(&k->dst) || (icmp && k->icmp_type != (k->proto == IPPROTO_ICMP ? 8 : 128)))
		return drop(out, "multicast or non-echo ICMP"); /* noise: no event */
	if ((k->proto == IPPROTO_UDP || k->proto == IPPROTO_TCP) && k->dport == 53 &&
	    !is_vdns(p, &k->dst))
		return refuse(p, out, k, NULL, "DNS to a resolver other than the virtual one");
	if (k->proto == IPPROTO_TCP)
		return tcp_segment(p, k, out);
	if (k->proto == IPPROTO_UDP && k->dport == 53)
		return dns_udp(p, k, out);
	if (k->proto != IPPROTO_UDP && !icmp) {
		net_deny_event(p, k, NULL, NULL, "protocol not carried");
		return drop(out, "protocol not carried");
	}
	if (!decide(p, &k->dst, k->dport, proto_bit(k), false, name, why, sizeof(why)))
		return refuse(p, out, k, name, why);
	return dgram_flow(p, k, out);
}

enum net_verdict net_filter_frame(struct net_policy *p, const uint8_t *frame, size_t len,
				  struct net_filter_result *out)
{
	struct net_pkt k;
	const char *why;
	int rc;

	memset(out, 0, offsetof(struct net_filter_result, reply));
	rc = net_frame_parse(frame, len, &k, &why);
	if (rc) {
		net_deny_event(p, &k, k.family ? "ip" : "eth", NULL, why);
		return drop(out, why);
	}
	if (!k.family)
		return pass(out, "arp"); /* ARP stays on the virtual link; slirp answers it */
	return ip_packet(p, &k, out);
}

/* ---- frames towards the guest ---- */

static void pin_answer(struct net_policy *p, const uint8_t *msg, size_t len)
{
	struct dns_answer a;
	char why[NET_REASON_MAX];
	uint64_t now = now_ms(p);

	if (dns_parse_answer(msg, len, &a) || a.rcode ||
	    !name_allowed(p, a.qname, why, sizeof(why)))
		return;
	for (size_t i = 0; i < a.n_addrs; i++)
		if (answer_ok(p, &a.addrs[i].addr))
			net_pins_add(&p->pins, a.qname, &a.addrs[i].addr, a.addrs[i].ttl, now);
}

/* What slirp tells the guest about a TCP connection: its acknowledgements
 * on DNS-over-TCP streams (dns_tcp_stream), and the end of connections. */
static void inbound_tcp(struct net_policy *p, const struct net_pkt *k, bool vdns)
{
	struct net_conn *c;

	if (!vdns && !(k->tcp_flags & (NET_TCP_FIN | NET_TCP_RST)))
		return; /* the common case costs no lookup (and no clock read) */
	c = net_conn_find(p, k, true, now_ms(p));
	if (!c)
		return;
	if (c->vdns && (k->tcp_flags & NET_TCP_ACK)) {
		c->slirp_ack = k->ack;
		c->slirp_win = k->tcp_win;
		c->ack_known = true;
	}
	if (k->tcp_flags & NET_TCP_RST)
		net_conn_closed(p, c, true);
	else if (k->tcp_flags & NET_TCP_FIN && (c->fin |= 2) == 3)
		net_conn_closed(p, c, false);
}

/* Answers from the virtual nameserver that slirp resolved (DNS over TCP)
 * are pinned when a whole message sits in one segment; host port forwards
 * (a SYN from outside) are admitted so the guest's replies pass; the
 * connection and flow tables learn what slirp closed or keeps alive. */
enum net_verdict net_filter_inbound(struct net_policy *p, const uint8_t *frame, size_t len)
{
	struct net_pkt k;
	const char *why;
	const uint8_t *msg;
	size_t mlen;
	bool vdns;
	bool full;

	if (net_frame_parse(frame, len, &k, &why) || !k.family)
		return NET_PASS;
	vdns = k.sport == 53 && is_vdns(p, &k.src);
	if (vdns && k.proto == IPPROTO_UDP)
		pin_answer(p, k.frame + k.data_off, k.data_len);
	else if (vdns && k.proto == IPPROTO_TCP &&
		 dns_tcp_unframe(k.frame + k.data_off, k.data_len, &msg, &mlen) > 0)
		pin_answer(p, msg, mlen);
	if (k.proto == IPPROTO_TCP && net_pkt_is_syn(&k))
		net_conn_add(p, &k, true, now_ms(p), &full);
	else if (k.proto == IPPROTO_TCP)
		inbound_tcp(p, &k, vdns);
	else if (k.proto == IPPROTO_UDP || k.proto == IPPROTO_ICMP)
		net_flow_inbound(p, &k, now_ms(p));
	return NET_PASS;
}

/* ---- dry run ---- */

static int check_name(struct net_policy *p, const struct net_rule *r, uint16_t port, unsigned proto,
		      char *why, size_t wl)
{
	const struct net_rule *a;

	if (!name_allowed(p, r->name, why, wl))
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
			 is_vdns(p, &dst) ? "DNS: answered by the policy"
					  : "DNS to a resolver other than the virtual one");
		return is_vdns(p, &dst) && p->rules.mode != NET_MODE_NONE;
	}
	return decide(p, &dst, port, proto, false, name, why, whylen);
}
