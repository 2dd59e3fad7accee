/* The network policy decision for guest frames (see net_filter.h and
 * docs/network-policy.md): the frame path here, DNS in net_filter_dns.c,
 * destinations in net_decide.c, connection tracking in net_track.c; events
 * are formatted and rate-limited in net_events.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "net_filter.h"
#include "devices/netpolicy/net_decide.h"
#include "devices/netpolicy/net_events.h"
#include "devices/netpolicy/net_filter_dns.h"
#include "devices/netpolicy/net_reply.h"
#include "devices/netpolicy/net_track.h"

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
		return net_answer_rst(out, k, "dns tcp data on syn");
	}
	if (vdns ? p->rules.mode == NET_MODE_NONE
		 : !net_decide(p, &k->dst, k->dport, NET_P_TCP, false, name, why, sizeof(why)))
		return net_refuse(p, out, k, vdns ? NULL : name, vdns ? "mode none" : why);
	c = net_conn_add(p, k, false, now, &full);
	if (!c) {
		if (full)
			snprintf(why, sizeof(why), "connection table full");
		else
			snprintf(why, sizeof(why), "connection limit (%u) reached",
				 p->cfg.max_conns);
		return net_refuse(p, out, k, NULL, why);
	}
	if (vdns && (!c->vdns || c->isn != k->seq)) { /* new, or a new ISN: see dns_tcp_stream */
		c->vdns = true;
		c->isn = k->seq;
		c->next_seq = k->seq + 1;
		c->ack_known = false;
	}
	return net_pass(out, "tcp syn admitted");
}

static enum net_verdict tcp_segment(struct net_policy *p, const struct net_pkt *k,
				    struct net_filter_result *out)
{
	char why[NET_REASON_MAX], name[NET_NAME_MAX + 1];
	uint64_t now = now_ms(p);
	bool vdns = k->dport == 53 && net_is_vdns(p, &k->dst);
	struct net_conn *c;

	if (net_pkt_is_syn(k))
		return tcp_syn(p, k, vdns, out);
	c = net_conn_find(p, k, false, now);
	if (!c) {
		if (!(k->tcp_flags & NET_TCP_RST))
			net_deny_event(p, k, NULL, NULL, "no admitted connection");
		return net_drop(out, "no admitted connection");
	}
	/* Rules changed since admission: re-check so a deny takes effect now. */
	if (c->gen != p->rules.gen && !vdns && !c->inbound &&
	    !net_decide(p, &k->dst, k->dport, NET_P_TCP, true, name, why, sizeof(why))) {
		net_conn_closed(p, c, true);
		return net_refuse(p, out, k, name, why);
	}
	c->gen = p->rules.gen;
	c->last_ms = now;
	if (c->vdns && net_dns_tcp_stream(p, c, k, out) != NET_PASS)
		return out->verdict;
	if (k->tcp_flags & NET_TCP_RST)
		net_conn_closed(p, c, true);
	else if (k->tcp_flags & NET_TCP_FIN && (c->fin |= 1) == 3)
		net_conn_closed(p, c, false);
	return net_pass(out, "tcp established");
}

/* A datagram or echo that the policy admitted holds a slirp socket. */
static enum net_verdict dgram_flow(struct net_policy *p, const struct net_pkt *k,
				   struct net_filter_result *out)
{
	char why[NET_REASON_MAX];
	int rc = net_flow_use(p, k, now_ms(p));

	if (rc == -EEXIST)
		return net_drop(out, "echo already in flight");
	if (rc) {
		snprintf(why, sizeof(why), "flow limit (%u) reached", p->cfg.max_flows);
		return net_refuse(p, out, k, NULL, why);
	}
	return net_pass(out, "allowed");
}

static enum net_verdict ip_packet(struct net_policy *p, const struct net_pkt *k,
				  struct net_filter_result *out)
{
	char why[NET_REASON_MAX], name[NET_NAME_MAX + 1];
	bool icmp = k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6;

	if (link_traffic(p, k))
		return net_pass(out, "link");
	if (is_group(&k->dst) || (icmp && k->icmp_type != (k->proto == IPPROTO_ICMP ? 8 : 128)))
		return net_drop(out, "multicast or non-echo ICMP"); /* noise: no event */
	if ((k->proto == IPPROTO_UDP || k->proto == IPPROTO_TCP) && k->dport == 53 &&
	    !net_is_vdns(p, &k->dst))
		return net_refuse(p, out, k, NULL, "DNS to a resolver other than the virtual one");
	if (k->proto == IPPROTO_TCP)
		return tcp_segment(p, k, out);
	if (k->proto == IPPROTO_UDP && k->dport == 53)
		return net_dns_udp(p, k, out);
	if (k->proto != IPPROTO_UDP && !icmp) {
		net_deny_event(p, k, NULL, NULL, "protocol not carried");
		return net_drop(out, "protocol not carried");
	}
	if (!net_decide(p, &k->dst, k->dport, proto_bit(k), false, name, why, sizeof(why)))
		return net_refuse(p, out, k, name, why);
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
		return net_drop(out, why);
	}
	if (!k.family)
		return net_pass(out, "arp"); /* ARP stays on the virtual link; slirp answers it */
	return ip_packet(p, &k, out);
}

/* ---- frames towards the guest ---- */

/* What slirp tells the guest about a TCP connection: its acknowledgements
 * on DNS-over-TCP streams (net_dns_tcp_stream), and the end of connections. */
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
	vdns = k.sport == 53 && net_is_vdns(p, &k.src);
	if (vdns && k.proto == IPPROTO_UDP)
		net_dns_pin_answer(p, k.frame + k.data_off, k.data_len);
	else if (vdns && k.proto == IPPROTO_TCP &&
		 dns_tcp_unframe(k.frame + k.data_off, k.data_len, &msg, &mlen) > 0)
		net_dns_pin_answer(p, msg, mlen);
	if (k.proto == IPPROTO_TCP && net_pkt_is_syn(&k))
		net_conn_add(p, &k, true, now_ms(p), &full);
	else if (k.proto == IPPROTO_TCP)
		inbound_tcp(p, &k, vdns);
	else if (k.proto == IPPROTO_UDP || k.proto == IPPROTO_ICMP)
		net_flow_inbound(p, &k, now_ms(p));
	return NET_PASS;
}
