/* The DNS paths of net_filter_frame()/net_filter_inbound() (the public
 * DNS calls, net_filter_dns_*, are in net_filter.h). Private to
 * devices/netpolicy. */
#ifndef MVM_NET_FILTER_DNS_H
#define MVM_NET_FILTER_DNS_H

#include <stddef.h>
#include <stdint.h>

#include "devices/netpolicy/net_filter.h"
#include "devices/netpolicy/net_track.h"

/* A UDP query to the virtual nameserver: a blocked name is answered here
 * and never forwarded; an allowed one yields NET_RESOLVE. */
enum net_verdict net_dns_udp(struct net_policy *p, const struct net_pkt *k,
			     struct net_filter_result *out);

/* A segment of an admitted DNS-over-TCP connection @c: passes only if
 * slirp receives exactly the bytes checked (see the definition). */
enum net_verdict net_dns_tcp_stream(struct net_policy *p, struct net_conn *c,
				    const struct net_pkt *k, struct net_filter_result *out);

/* Pin the addresses of an answer slirp's forwarder sent the guest. */
void net_dns_pin_answer(struct net_policy *p, const uint8_t *msg, size_t len);

#endif
