/* Ethernet frame classifier and reply builders for the network policy.
 * The frame comes from the guest: every length is checked before use. */
#ifndef MVM_NET_FRAME_H
#define MVM_NET_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_rules.h"

#define NET_ETH_HLEN 14
#define NET_REPLY_MAX 1514 /* replies fit a standard Ethernet frame */
#define NET_IPV6_EXT_MAX 4 /* extension headers walked before giving up */

enum { NET_ETH_IPV4 = 0x0800, NET_ETH_ARP = 0x0806, NET_ETH_IPV6 = 0x86dd };
enum {
	NET_TCP_FIN = 0x01,
	NET_TCP_SYN = 0x02,
	NET_TCP_RST = 0x04,
	NET_TCP_ACK = 0x10,
	NET_TCP_URG = 0x20,
};

/* A parsed view of one frame; offsets index into frame. */
struct net_pkt {
	const uint8_t *frame;
	size_t len;
	uint8_t dmac[6], smac[6];
	uint16_t ethertype;
	int family; /* AF_INET, AF_INET6, or 0 (ARP) */
	struct net_addr src, dst;
	size_t l3_off, l3_len; /* IP packet as the IP header sizes it */
	size_t l4_off, l4_len;
	uint8_t proto; /* upper-layer protocol: IPPROTO_TCP, _UDP, _ICMP, _ICMPV6, ... */
	uint8_t hop_limit;
	uint16_t sport, dport;
	uint8_t tcp_flags;
	uint32_t seq, ack;
	uint16_t tcp_win; /* unscaled window field */
	size_t data_off, data_len; /* TCP/UDP payload */
	uint8_t icmp_type, icmp_code;
	uint16_t icmp_id, icmp_seq; /* echo request/reply identifier and sequence */
};

/* Classify @f. Returns 0 (pkt filled; ARP has family 0), -EINVAL for a
 * malformed frame or -EPROTO for one we refuse to carry (fragments, unknown
 * ethertype, IPv6 jumbograms, too many extension headers); *why names it. */
int net_frame_parse(const uint8_t *f, size_t len, struct net_pkt *pkt, const char **why)
    __attribute__((warn_unused_result));

static inline bool net_pkt_is_syn(const struct net_pkt *p)
{
	return (p->tcp_flags & (NET_TCP_SYN | NET_TCP_ACK | NET_TCP_RST)) == NET_TCP_SYN;
}

/* RST for a denied TCP segment (RFC 9293 §3.10.7.1), addressed back to the
 * sender as if from the destination. Returns 0, -EINVAL (not TCP, or a RST:
 * never answer a RST) or -ENOSPC. */
int net_build_tcp_rst(const struct net_pkt *pkt, uint8_t *out, size_t cap, size_t *outlen)
    __attribute__((warn_unused_result));

/* ICMP "administratively prohibited" (RFC 1812 §5.2.7.1 code 13; ICMPv6
 * RFC 4443 §3.1 code 1) quoting the denied packet. -EINVAL when an error
 * must not be sent (RFC 1122 §3.2.2, RFC 4443 §2.4(e): in reply to ICMP
 * errors, or to multicast/broadcast). */
int net_build_unreach(const struct net_pkt *pkt, uint8_t *out, size_t cap, size_t *outlen)
    __attribute__((warn_unused_result));

/* UDP datagram back to the sender of @pkt (ports and addresses swapped)
 * carrying @data: how locally built DNS answers reach the guest. */
int net_build_udp_reply(const struct net_pkt *pkt, const uint8_t *data, size_t dlen, uint8_t *out,
			size_t cap, size_t *outlen) __attribute__((warn_unused_result));

#endif
