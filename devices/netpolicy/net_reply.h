/* The filter's verdicts and answer frames: each sets out->why and
 * out->verdict and returns the verdict. Private to devices/netpolicy. */
#ifndef MVM_NET_REPLY_H
#define MVM_NET_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "devices/netpolicy/net_filter.h"

enum net_verdict net_drop(struct net_filter_result *out, const char *why);
enum net_verdict net_pass(struct net_filter_result *out, const char *why);

/* NET_ANSWER with a TCP RST / ICMP unreachable for @k (NET_DROP if it
 * cannot be built). */
enum net_verdict net_answer_rst(struct net_filter_result *out, const struct net_pkt *k,
				const char *why);
enum net_verdict net_answer_unreach(struct net_filter_result *out, const struct net_pkt *k,
				    const char *why);

/* Deny a new flow the way that makes the guest fail fast (RST for TCP,
 * ICMP administratively prohibited otherwise), with a deny event naming
 * @name (may be NULL) and @reason. */
enum net_verdict net_refuse(struct net_policy *p, struct net_filter_result *out,
			    const struct net_pkt *k, const char *name, const char *reason);

/* NET_ANSWER with the UDP DNS message @msg for the query in @k. */
enum net_verdict net_dns_reply(struct net_filter_result *out, const struct net_pkt *k,
			       const uint8_t *msg, size_t mlen, const char *why);

/* NET_ANSWER with an error reply (@rcode) to @query (parsed as @q). */
enum net_verdict net_dns_error(struct net_filter_result *out, const struct net_pkt *k,
			       const uint8_t *query, const struct dns_query *q, unsigned rcode,
			       const char *why);

#endif
