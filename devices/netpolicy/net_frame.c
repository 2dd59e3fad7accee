/* Frame classifier (Ethernet II, ARP, IPv4, IPv6, TCP, UDP, ICMP) and the
 * reply frames the policy injects: TCP RST, ICMP unreachable, UDP answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "net_frame.h"

#define IP4_HLEN 20
#define IP6_HLEN 40
#define TCP_HLEN 20
#define UDP_HLEN 8
#define ICMP_HLEN 8
#define IP4_ERR_QUOTE_MAX 576 /* RFC 1812 §4.3.2.3: whole error <= 576 octets */
#define IP6_MIN_MTU 1280      /* RFC 4443 §2.4(c): error must fit the minimum MTU */

#include "devices/netpolicy/net_bytes.h"

static int bad(const char **why, const char *msg, int rc)
{
	*why = msg;
	return rc;
}

/* ---- upper layer ---- */

static int parse_l4(struct net_pkt *p, const char **why)
{
	const uint8_t *l4 = p->frame + p->l4_off;

	switch (p->proto) {
	case IPPROTO_TCP: {
		size_t doff;
		if (p->l4_len < TCP_HLEN)
			return bad(why, "short TCP header", -EINVAL);
		doff = (size_t)(l4[12] >> 4) * 4;
		if (doff < TCP_HLEN || doff > p->l4_len)
			return bad(why, "bad TCP data offset", -EINVAL);
		p->sport = rd16(l4);
		p->dport = rd16(l4 + 2);
		p->seq = rd32(l4 + 4);
		p->ack = rd32(l4 + 8);
		p->tcp_flags = l4[13];
		p->tcp_win = rd16(l4 + 14);
		p->data_off = p->l4_off + doff;
		p->data_len = p->l4_len - doff;
		return 0;
	}
	case IPPROTO_UDP: {
		size_t ulen;
		if (p->l4_len < UDP_HLEN)
			return bad(why, "short UDP header", -EINVAL);
		ulen = rd16(l4 + 4);
		if (ulen < UDP_HLEN || ulen > p->l4_len)
			return bad(why, "bad UDP length", -EINVAL);
		p->sport = rd16(l4);
		p->dport = rd16(l4 + 2);
		p->data_off = p->l4_off + UDP_HLEN;
		p->data_len = ulen - UDP_HLEN;
		return 0;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (p->l4_len < ICMP_HLEN)
			return bad(why, "short ICMP header", -EINVAL);
		p->icmp_type = l4[0];
		p->icmp_code = l4[1];
		p->icmp_id = rd16(l4 + 4);
		p->icmp_seq = rd16(l4 + 6);
		return 0;
	default:
		return 0; /* other protocols: the policy decides (it denies them) */
	}
}

/* ---- network layer ---- */

/* All IPv4 fragments are dropped: only the first carries the ports the
 * policy needs, and overlapping fragments can rewrite them after the
 * check (RFC 1858 §3, RFC 3128). The guest's MTU is ours, so it has no
 * reason to fragment. */
static int parse_ipv4(struct net_pkt *p, const char **why)
{
	const uint8_t *ip = p->frame + p->l3_off;
	size_t avail = p->len - p->l3_off, ihl, tot;

	if (avail < IP4_HLEN || ip[0] >> 4 != 4)
		return bad(why, "bad IPv4 header", -EINVAL);
	ihl = (size_t)(ip[0] & 0xf) * 4;
	tot = rd16(ip + 2);
	/* Total length may be shorter than the frame (Ethernet padding), never longer. */
	if (ihl < IP4_HLEN || ihl > tot || tot > avail)
		return bad(why, "bad IPv4 header or total length", -EINVAL);
	if (rd16(ip + 6) & 0x3fff)
		return bad(why, "IPv4 fragment", -EPROTO);
	p->family = AF_INET;
	memcpy(p->src.b, ip + 12, 4);
	memcpy(p->dst.b, ip + 16, 4);
	p->src.family = p->dst.family = AF_INET;
	p->l3_len = tot;
	p->hop_limit = ip[8];
	p->proto = ip[9];
	p->l4_off = p->l3_off + ihl;
	p->l4_len = tot - ihl;
	return parse_l4(p, why);
}

/* Walk at most NET_IPV6_EXT_MAX extension headers (RFC 8200 §4). Fragments
 * are dropped like IPv4 fragments (RFC 8200 §4.5; RFC 7112 for why the
 * upper-layer header may be missing from the first one). */
static int walk_ipv6_ext(struct net_pkt *p, uint8_t nh, size_t off, size_t end, const char **why)
{
	for (int i = 0; i <= NET_IPV6_EXT_MAX; i++) {
		switch (nh) {
		case 0: /* hop-by-hop: only right after the IPv6 header (RFC 8200 §4.3) */
			if (i != 0)
				return bad(why, "misplaced hop-by-hop header", -EINVAL);
			__attribute__((fallthrough));
		case 60: /* destination options */
			if (off + 8 > end || off + ((size_t)p->frame[off + 1] + 1) * 8 > end)
				return bad(why, "truncated IPv6 extension header", -EINVAL);
			nh = p->frame[off];
			off += ((size_t)p->frame[off + 1] + 1) * 8;
			continue;
		case 43: /* the header's destination would not be the final one */
			return bad(why, "IPv6 routing header", -EPROTO);
		case 44:
			return bad(why, "IPv6 fragment", -EPROTO);
		default:
			p->proto = nh;
			p->l4_off = off;
			p->l4_len = end - off;
			return parse_l4(p, why);
		}
	}
	return bad(why, "too many IPv6 extension headers", -EPROTO);
}

static int parse_ipv6(struct net_pkt *p, const char **why)
{
	const uint8_t *ip = p->frame + p->l3_off;
	size_t avail = p->len - p->l3_off, plen;

	if (avail < IP6_HLEN || ip[0] >> 4 != 6)
		return bad(why, "bad IPv6 header", -EINVAL);
	plen = rd16(ip + 4);
	if (plen == 0)
		return bad(why, "IPv6 jumbogram", -EPROTO); /* RFC 2675 */
	if (plen > avail - IP6_HLEN)
		return bad(why, "bad IPv6 payload length", -EINVAL);
	p->family = AF_INET6;
	memcpy(p->src.b, ip + 8, 16);
	memcpy(p->dst.b, ip + 24, 16);
	p->src.family = p->dst.family = AF_INET6;
	p->l3_len = IP6_HLEN + plen;
	p->hop_limit = ip[7];
	return walk_ipv6_ext(p, ip[6], p->l3_off + IP6_HLEN, p->l3_off + p->l3_len, why);
}

int net_frame_parse(const uint8_t *f, size_t len, struct net_pkt *p, const char **why)
{
	memset(p, 0, sizeof(*p));
	*why = "";
	p->frame = f;
	p->len = len;
	if (len < NET_ETH_HLEN)
		return bad(why, "short Ethernet frame", -EINVAL);
	memcpy(p->dmac, f, 6);
	memcpy(p->smac, f + 6, 6);
	p->ethertype = rd16(f + 12);
	p->l3_off = NET_ETH_HLEN;
	switch (p->ethertype) {
	case NET_ETH_ARP:
		return 0;
	case NET_ETH_IPV4:
		return parse_ipv4(p, why);
	case NET_ETH_IPV6:
		return parse_ipv6(p, why);
	default:
		/* 802.1Q tags, PPPoE, ...: nothing slirp needs, all of it hides headers. */
		return bad(why, "unsupported ethertype", -EPROTO);
	}
}

/* ---- checksums (RFC 1071) ---- */

static uint32_t sum16(const uint8_t *d, size_t n, uint32_t acc)
{
	for (; n > 1; d += 2, n -= 2)
		acc += rd16(d);
	if (n)
		acc += (uint32_t)d[0] << 8;
	return acc;
}

static uint16_t fold(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)~acc;
}

/* Pseudo-header sum: RFC 793 §3.1 (v4), RFC 8200 §8.1 (v6). */
static uint32_t pseudo(const struct net_addr *s, const struct net_addr *d, uint8_t proto,
		       size_t l4len)
{
	size_t alen = s->family == AF_INET ? 4 : 16;
	uint32_t acc = sum16(s->b, alen, 0);

	acc = sum16(d->b, alen, acc);
	return acc + proto + (uint32_t)(l4len >> 16) + (uint32_t)(l4len & 0xffff);
}

/* ---- builders ---- */

/* Ethernet + IP header for a reply from @p's destination to its source.
 * Returns the upper-layer offset, or 0 when it does not fit. */
static size_t put_ip_reply(const struct net_pkt *p, uint8_t proto, size_t l4len, uint8_t *out,
			   size_t cap)
{
	size_t hl = p->family == AF_INET ? IP4_HLEN : IP6_HLEN;
	uint8_t *ip = out + NET_ETH_HLEN;

	if (NET_ETH_HLEN + hl + l4len > cap)
		return 0;
	memcpy(out, p->smac, 6);
	memcpy(out + 6, p->dmac, 6);
	wr16(out + 12, p->ethertype);
	memset(ip, 0, hl);
	if (p->family == AF_INET) {
		ip[0] = 0x45;
		wr16(ip + 2, (uint16_t)(hl + l4len));
		wr16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = proto;
		memcpy(ip + 12, p->dst.b, 4);
		memcpy(ip + 16, p->src.b, 4);
		wr16(ip + 10, fold(sum16(ip, IP4_HLEN, 0)));
	} else {
		ip[0] = 0x60;
		wr16(ip + 4, (uint16_t)l4len);
		ip[6] = proto;
		ip[7] = 64;
		memcpy(ip + 8, p->dst.b, 16);
		memcpy(ip + 24, p->src.b, 16);
	}
	return NET_ETH_HLEN + hl;
}

int net_build_tcp_rst(const struct net_pkt *p, uint8_t *out, size_t cap, size_t *outlen)
{
	size_t off;
	uint8_t *t;
	uint32_t seglen;

	if (p->proto != IPPROTO_TCP || !p->family || (p->tcp_flags & NET_TCP_RST))
		return -EINVAL;
	off = put_ip_reply(p, IPPROTO_TCP, TCP_HLEN, out, cap);
	if (!off)
		return -ENOSPC;
	t = out + off;
	memset(t, 0, TCP_HLEN);
	wr16(t, p->dport);
	wr16(t + 2, p->sport);
	t[12] = (TCP_HLEN / 4) << 4;
	if (p->tcp_flags & NET_TCP_ACK) {
		wr32(t + 4, p->ack); /* <SEQ=SEG.ACK><CTL=RST> */
		t[13] = NET_TCP_RST;
	} else {
		/* <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; SYN and FIN count in SEG.LEN */
		seglen = (uint32_t)p->data_len + !!(p->tcp_flags & NET_TCP_SYN) +
			 !!(p->tcp_flags & NET_TCP_FIN);
		wr32(t + 8, p->seq + seglen);
		t[13] = NET_TCP_RST | NET_TCP_ACK;
	}
	wr16(t + 16, fold(sum16(t, TCP_HLEN, pseudo(&p->dst, &p->src, IPPROTO_TCP, TCP_HLEN))));
	*outlen = off + TCP_HLEN;
	return 0;
}

static bool is_multicast(const struct net_addr *a)
{
	if (a->family == AF_INET)
		return a->b[0] >= 224; /* multicast, reserved and broadcast */
	return a->b[0] == 0xff;
}

/* RFC 1122 §3.2.2 / RFC 4443 §2.4(e): errors only for unicast, non-error packets. */
static bool may_send_error(const struct net_pkt *p)
{
	if (is_multicast(&p->dst) || is_multicast(&p->src))
		return false;
	if (p->proto == IPPROTO_ICMP)
		return p->icmp_type == 8 || p->icmp_type == 13 || p->icmp_type == 15 ||
		       p->icmp_type == 17; /* queries, not errors */
	if (p->proto == IPPROTO_ICMPV6)
		return p->icmp_type >= 128; /* RFC 4443 §2.1: < 128 are errors */
	return true;
}

int net_build_unreach(const struct net_pkt *p, uint8_t *out, size_t cap, size_t *outlen)
{
	bool v4 = p->family == AF_INET;
	size_t quote = p->l3_len, max, off;
	uint8_t proto = v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	uint8_t *m;
	uint32_t acc;

	if (!p->family || !may_send_error(p))
		return -EINVAL;
	max = v4 ? IP4_ERR_QUOTE_MAX - IP4_HLEN - ICMP_HLEN : IP6_MIN_MTU - IP6_HLEN - ICMP_HLEN;
	if (quote > max)
		quote = max;
	off = put_ip_reply(p, proto, ICMP_HLEN + quote, out, cap);
	if (!off)
		return -ENOSPC;
	m = out + off;
	memset(m, 0, ICMP_HLEN);
	m[0] = v4 ? 3 : 1;  /* destination unreachable */
	m[1] = v4 ? 13 : 1; /* administratively prohibited */
	memcpy(m + ICMP_HLEN, p->frame + p->l3_off, quote);
	acc = v4 ? 0 : pseudo(&p->dst, &p->src, proto, ICMP_HLEN + quote);
	wr16(m + 2, fold(sum16(m, ICMP_HLEN + quote, acc)));
	*outlen = off + ICMP_HLEN + quote;
	return 0;
}

int net_build_udp_reply(const struct net_pkt *p, const uint8_t *data, size_t dlen, uint8_t *out,
			size_t cap, size_t *outlen)
{
	size_t off, ulen = UDP_HLEN + dlen;
	uint16_t sum;
	uint8_t *u;

	if (p->proto != IPPROTO_UDP || !p->family || ulen > 0xffff)
		return -EINVAL;
	off = put_ip_reply(p, IPPROTO_UDP, ulen, out, cap);
	if (!off)
		return -ENOSPC;
	u = out + off;
	wr16(u, p->dport);
	wr16(u + 2, p->sport);
	wr16(u + 4, (uint16_t)ulen);
	wr16(u + 6, 0);
	memcpy(u + UDP_HLEN, data, dlen);
	sum = fold(sum16(u, ulen, pseudo(&p->dst, &p->src, IPPROTO_UDP, ulen)));
	wr16(u + 6, sum ? sum : 0xffff); /* RFC 768: a computed 0 is sent as all ones */
	*outlen = off + ulen;
	return 0;
}
