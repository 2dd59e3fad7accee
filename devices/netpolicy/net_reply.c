/* The filter's verdicts and the frames it answers with (net_reply.h). */
#include <netinet/in.h>

#include "devices/netpolicy/net_events.h"
#include "devices/netpolicy/net_reply.h"

enum net_verdict net_drop(struct net_filter_result *out, const char *why)
{
	out->why = why;
	return out->verdict = NET_DROP;
}

enum net_verdict net_pass(struct net_filter_result *out, const char *why)
{
	out->why = why;
	return out->verdict = NET_PASS;
}

enum net_verdict net_answer_rst(struct net_filter_result *out, const struct net_pkt *k,
				   const char *why)
{
	out->why = why;
	if (net_build_tcp_rst(k, out->reply, sizeof(out->reply), &out->reply_len))
		return net_drop(out, why);
	return out->verdict = NET_ANSWER;
}

enum net_verdict net_answer_unreach(struct net_filter_result *out, const struct net_pkt *k,
				       const char *why)
{
	out->why = why;
	if (net_build_unreach(k, out->reply, sizeof(out->reply), &out->reply_len))
		return net_drop(out, why);
	return out->verdict = NET_ANSWER;
}

/* Deny a new flow the way that makes the guest fail fast: RST for TCP,
 * ICMP administratively prohibited for everything else. */
enum net_verdict net_refuse(struct net_policy *p, struct net_filter_result *out,
			       const struct net_pkt *k, const char *name, const char *reason)
{
	net_deny_event(p, k, NULL, name, reason);
	if (k->proto == IPPROTO_TCP)
		return net_answer_rst(out, k, "denied");
	return net_answer_unreach(out, k, "denied");
}

/* DNS replies from the virtual nameserver. */

enum net_verdict net_dns_reply(struct net_filter_result *out, const struct net_pkt *k,
				  const uint8_t *msg, size_t mlen, const char *why)
{
	out->why = why;
	if (net_build_udp_reply(k, msg, mlen, out->reply, sizeof(out->reply), &out->reply_len))
		return net_drop(out, "reply too large");
	return out->verdict = NET_ANSWER;
}

enum net_verdict net_dns_error(struct net_filter_result *out, const struct net_pkt *k,
				  const uint8_t *query, const struct dns_query *q, unsigned rcode,
				  const char *why)
{
	uint8_t msg[DNS_UDP_MAX];
	size_t mlen;

	if (dns_build_error(query, q, rcode, msg, sizeof(msg), &mlen))
		return net_drop(out, "dns reply too large");
	return net_dns_reply(out, k, msg, mlen, why);
}

