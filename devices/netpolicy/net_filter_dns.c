/* DNS to the virtual nameserver (net_filter.h): UDP queries are answered
 * by the policy or resolved by the glue, DNS over TCP is checked against
 * exactly the stream slirp receives, and answers are pinned. */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "net_filter.h"
#include "devices/netpolicy/net_decide.h"
#include "devices/netpolicy/net_events.h"
#include "devices/netpolicy/net_filter_dns.h"
#include "devices/netpolicy/net_reply.h"

/* A blocked name is answered here and never forwarded: a forwarded query
 * for <secret>.evil.example.com is itself the exfiltration. */
enum net_verdict net_dns_udp(struct net_policy *p, const struct net_pkt *k,
				struct net_filter_result *out)
{
	const uint8_t *msg = k->frame + k->data_off;
	struct dns_query q;
	char why[NET_REASON_MAX];
	int rc = dns_parse_query(msg, k->data_len, &q);

	if (rc) {
		net_deny_event(p, k, "dns", NULL, "malformed DNS query");
		return net_drop(out, "malformed DNS query");
	}
	if (q.opcode != 0) /* RFC 1035 §4.1.1: only standard queries */
		return net_dns_error(out, k, msg, &q, DNS_RCODE_NOTIMP, "dns opcode");
	if (p->rules.mode == NET_MODE_NONE || q.qclass != DNS_C_IN) {
		net_deny_event(p, k, "dns", q.name,
			   p->rules.mode == NET_MODE_NONE ? "mode none" : "dns class not IN");
		return net_dns_error(out, k, msg, &q, DNS_RCODE_REFUSED, "dns refused");
	}
	if (!net_name_allowed(p, q.name, why, sizeof(why))) {
		net_deny_event(p, k, "dns", q.name, why);
		return net_dns_error(out, k, msg, &q, DNS_RCODE_NXDOMAIN, "dns blocked name");
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
			return net_answer_rst(out, k, "dns tcp malformed");
		}
		if (!net_name_allowed(p, q.name, why, sizeof(why))) {
			net_deny_event(p, k, "dns", q.name, why);
			return net_answer_rst(out, k, "dns blocked name");
		}
		buf += used;
		left -= (size_t)used;
	}
	return net_pass(out, "dns tcp");
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
enum net_verdict net_dns_tcp_stream(struct net_policy *p, struct net_conn *c,
				       const struct net_pkt *k, struct net_filter_result *out)
{
	uint32_t end = k->seq + (uint32_t)k->data_len;

	if (k->tcp_flags & NET_TCP_URG) {
		net_deny_event(p, k, "dns", NULL, "DNS over TCP: urgent data");
		return net_answer_rst(out, k, "dns tcp urgent");
	}
	if (!k->data_len)
		return net_pass(out, "dns tcp control");
	if (c->ack_known && seq_le(end, c->slirp_ack))
		return net_pass(out, "dns tcp retransmission slirp holds");
	if (k->seq != c->next_seq || (c->fin & 1)) {
		net_deny_event(p, k, "dns", NULL, "DNS over TCP: segment out of order");
		return net_drop(out, "dns tcp out of order");
	}
	if (!c->ack_known || c->slirp_ack != c->next_seq || k->data_len > c->slirp_win)
		return net_drop(out, "dns tcp: slirp has not acknowledged"); /* the guest retransmits */
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
		return net_drop(out, "dns reply too large");
	return net_dns_reply(out, &q->pkt, msg, mlen, "dns answer");
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
	if (!net_name_allowed(p, q->q.name, reason, sizeof(reason)))
		return net_dns_error(out, &q->pkt, q->msg, &q->q, DNS_RCODE_NXDOMAIN,
				 "dns name no longer allowed");
	for (size_t i = 0; i < n && nk < DNS_MAX_ADDRS; i++) {
		if (!net_answer_ok(p, &addrs[i].addr)) {
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
	return net_dns_error(out, &q->pkt, q->msg, &q->q, rcode, "dns error");
}

/* Answers slirp's forwarder sent the guest (DNS over TCP): pin what is
 * allowed, as net_filter_dns_answer() does. */
void net_dns_pin_answer(struct net_policy *p, const uint8_t *msg, size_t len)
{
	struct dns_answer a;
	char why[NET_REASON_MAX];
	uint64_t now = now_ms(p);

	if (dns_parse_answer(msg, len, &a) || a.rcode ||
	    !net_name_allowed(p, a.qname, why, sizeof(why)))
		return;
	for (size_t i = 0; i < a.n_addrs; i++)
		if (net_answer_ok(p, &a.addrs[i].addr))
			net_pins_add(&p->pins, a.qname, &a.addrs[i].addr, a.addrs[i].ttl, now);
}
