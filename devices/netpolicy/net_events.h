/* Internal to the policy engine: how net_filter.c reports a denial. */
#ifndef MVM_NET_EVENTS_H
#define MVM_NET_EVENTS_H

#include "devices/netpolicy/net_filter.h"

/* The policy's clock (monotonic ms, replaceable in tests). */
static inline uint64_t now_ms(const struct net_policy *p)
{
	return p->clock_ms(p->clock_opaque);
}

/*
 * Record a denied attempt: @k's destination (may be NULL), @proto (NULL:
 * from @k), the queried @name (may be NULL) and @reason. Passed to the
 * policy's event sink through its token bucket; excess is summarised.
 */
void net_deny_event(struct net_policy *p, const struct net_pkt *k, const char *proto,
		    const char *name, const char *reason);

#endif
