/* Internal to the policy engine: the tables of what the guest holds open
 * through slirp (TCP connections, UDP flows, ICMP echos), and the limits on
 * them (limits.connections, limits.flows). Fixed tables, no allocation. */
#ifndef MVM_NET_TRACK_H
#define MVM_NET_TRACK_H

#include "devices/netpolicy/net_filter.h"

/* Allocate the tables and pick the hash key. Returns 0 or -ENOMEM. */
int net_track_init(struct net_policy *p) __attribute__((warn_unused_result));
void net_track_free(struct net_policy *p);

/* The connection of @k (@reverse: @k travels towards the guest), or NULL.
 * Forgets idle and long-closed connections it passes. */
struct net_conn *net_conn_find(struct net_policy *p, const struct net_pkt *k, bool reverse,
			       uint64_t now);
/* Track the connection @k opens. A guest's (!@inbound) counts against
 * limits.connections. Returns it, or NULL when the limit is reached
 * (*full = false) or its probe window is full of live connections (true). */
struct net_conn *net_conn_add(struct net_policy *p, const struct net_pkt *k, bool inbound,
			      uint64_t now, bool *full);
/* The connection is closed (RST, or FIN both ways): it no longer counts;
 * with @forget its slot is freed at once. */
void net_conn_closed(struct net_policy *p, struct net_conn *c, bool forget);

/* A UDP datagram or ICMP echo the guest sends and the filter admitted: its
 * flow is created or refreshed. Returns 0, or -EDQUOT when a new flow would
 * exceed limits.flows (or find no slot), -EEXIST for an ICMPv4 echo that is
 * already in flight (same destination, id and sequence). */
int net_flow_use(struct net_policy *p, const struct net_pkt *k, uint64_t now)
    __attribute__((warn_unused_result));
/* A datagram slirp sends to the guest: a UDP flow stays alive (slirp's
 * socket does), an echo reply ends its echo's flow. */
void net_flow_inbound(struct net_policy *p, const struct net_pkt *k, uint64_t now);

#endif
